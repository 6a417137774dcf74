// Fuzz target: common/http/request_head.h, what HttpServer reads of a request before any worker
// sees it. The input is the bytes a client sends on a connection.
//
// Properties:
//  - find_head_end never returns past the buffer, returns the end of the first empty line, and
//    gives the same answer when the bytes arrive one by one or in chunks as when they arrive
//    at once;
//  - parse_request_head never throws; a head it accepts has a token method, a target that is
//    a path without spaces, control or non-ASCII bytes, within the limits, and a path that is
//    the target's decoded path and holds no control character; a head it refuses gets one of
//    the documented statuses and a message;
//  - percent_decode never grows its input, and decodes what percent-encoding every byte gives
//    back to those bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "common/http/request_head.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace cronwheel::common::http;

// The end of the first "\n\n" or "\n\r\n", computed the obvious way; 0 when there is none.
std::size_t reference_head_end(std::string_view buffer) {
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    if (buffer[i] != '\n') continue;
    if (buffer.substr(i + 1, 1) == "\n") return i + 2;
    if (buffer.substr(i + 1, 2) == "\r\n") return i + 3;
  }
  return 0;
}

// Feeds `buffer` in chunks of `chunk` bytes to find_head_end, as a connection would.
std::size_t incremental_head_end(std::string_view buffer, std::size_t chunk) {
  std::size_t scanned = 0;
  for (std::size_t have = 0; have < buffer.size();) {
    have = std::min(buffer.size(), have + chunk);
    const std::size_t end = find_head_end(buffer.substr(0, have), scanned);
    FUZZ_CHECK(end <= have, "find_head_end never returns past the buffer");
    FUZZ_CHECK(scanned <= have, "find_head_end's progress stays inside the buffer");
    if (end != 0) return end;
  }
  return 0;
}

bool is_token_char(unsigned char c) {
  return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

void check_head(std::string_view head, const HeadLimits& limits) {
  const auto parsed = parse_request_head(head, limits);
  if (const auto* error = std::get_if<HeadError>(&parsed)) {
    const int s = error->status;
    FUZZ_CHECK(s == 400 || s == 411 || s == 414 || s == 431 || s == 501 || s == 505,
               "a refused head gets a documented status");
    FUZZ_CHECK(!error->message.empty(), "a refused head gets a message");
    return;
  }
  const auto& h = std::get<RequestHead>(parsed);
  FUZZ_CHECK(head.size() <= limits.max_head_bytes, "an accepted head is within max_head_bytes");
  FUZZ_CHECK(!h.method.empty() && h.method.size() <= 16, "the method is 1-16 bytes");
  for (unsigned char c : h.method) FUZZ_CHECK(is_token_char(c), "the method is a token");
  FUZZ_CHECK(!h.target.empty() && h.target.front() == '/', "the target is a path");
  FUZZ_CHECK(h.target.size() <= limits.max_target_bytes, "the target is within max_target_bytes");
  for (unsigned char c : h.target) {
    FUZZ_CHECK(c > 0x20 && c < 0x7f, "the target holds no space, control or non-ASCII byte");
  }
  FUZZ_CHECK(h.path == percent_decode(std::string_view(h.target).substr(0, h.target.find('?'))),
             "the path is the target's decoded path");
  for (unsigned char c : h.path) FUZZ_CHECK(c >= 0x20 && c != 0x7f, "the path holds no control character");
  FUZZ_CHECK(h.minor_version == 0 || h.minor_version == 1, "HTTP/1.0 or HTTP/1.1");
  FUZZ_CHECK(head.find(h.target) != std::string_view::npos, "the target is the one sent");
}

void check_percent_decode(std::string_view text) {
  const std::string decoded = percent_decode(text);
  FUZZ_CHECK(decoded.size() <= text.size(), "percent_decode never grows its input");
  if (text.find('%') == std::string_view::npos) FUZZ_CHECK(decoded == text, "text without '%' decodes to itself");
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  for (unsigned char c : text) {
    encoded += '%';
    encoded += kHex[c >> 4];
    encoded += kHex[c & 15];
  }
  FUZZ_CHECK(percent_decode(encoded) == text, "decoding percent-encoded bytes gives them back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view buffer(reinterpret_cast<const char*>(data), size);

  std::size_t scanned = 0;
  const std::size_t end = find_head_end(buffer, scanned);
  FUZZ_CHECK(end <= buffer.size(), "find_head_end never returns past the buffer");
  FUZZ_CHECK(end == reference_head_end(buffer), "find_head_end finds the first empty line");
  FUZZ_CHECK(incremental_head_end(buffer, 1) == end, "byte by byte finds the same end");
  const std::size_t chunk = size == 0 ? 1 : 1 + data[0] % 7;
  FUZZ_CHECK(incremental_head_end(buffer, chunk) == end, "chunk by chunk finds the same end");

  // The head as the server delimits it, and the raw bytes, which parse_request_head must refuse
  // cleanly when they are no head.
  const std::string_view head = end != 0 ? buffer.substr(0, end) : buffer;
  check_head(head, HeadLimits{});
  check_head(head, HeadLimits{256, 64, 4});
  if (end != 0) check_head(buffer, HeadLimits{});

  check_percent_decode(buffer.substr(0, 256));
  return 0;
}
