// Fuzz target: common/http/request_head.h, what HttpServer reads of a request (Boost.Beast's
// parser and the server's checks) before any worker sees it. The input is the bytes a client
// sends on a connection.
//
// Properties:
//  - parse_request_head never throws; a head it accepts ends within the input and within
//    max_head_bytes, with CRLF CRLF; it has a token method, a target that is a path without
//    spaces, control or non-ASCII bytes, within the limits, and a path that is the target's
//    decoded path and holds no control character; a head it refuses gets one of the documented
//    statuses and a message; the bytes after an accepted head do not change what is read of it;
//  - percent_decode never grows its input, and decodes what percent-encoding every byte gives
//    back to those bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "common/http/request_head.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace cronwheel::common::http;

bool is_token_char(unsigned char c) {
  return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

// Checks what parse_request_head makes of `head`; the number of bytes of its head when accepted.
std::size_t check_head(std::string_view head, const HeadLimits& limits) {
  const auto parsed = parse_request_head(head, limits);
  if (const auto* error = std::get_if<HeadError>(&parsed)) {
    const int s = error->status;
    FUZZ_CHECK(s == 400 || s == 411 || s == 414 || s == 431 || s == 501 || s == 505,
               "a refused head gets a documented status");
    FUZZ_CHECK(!error->message.empty(), "a refused head gets a message");
    return 0;
  }
  const auto& h = std::get<RequestHead>(parsed);
  FUZZ_CHECK(h.head_bytes >= 4 && h.head_bytes <= head.size(), "an accepted head ends within the input");
  FUZZ_CHECK(h.head_bytes <= limits.max_head_bytes, "an accepted head is within max_head_bytes");
  FUZZ_CHECK(head.substr(h.head_bytes - 4, 4) == "\r\n\r\n", "an accepted head ends with an empty line");
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
  return h.head_bytes;
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

  const std::size_t head_bytes = check_head(buffer, HeadLimits{});
  check_head(buffer, HeadLimits{256, 64, 4});
  if (head_bytes != 0) {
    const std::string_view head = buffer.substr(0, head_bytes);
    FUZZ_CHECK(check_head(head, HeadLimits{}) == head_bytes, "what follows a head does not change it");
  }

  check_percent_decode(buffer.substr(0, 256));
  return 0;
}
