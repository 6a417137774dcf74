#include "common/http/request_head.h"

#include <algorithm>
#include <charconv>

namespace cronwheel::common::http {
namespace {

constexpr std::size_t kMaxMethodBytes = 16;

// RFC 9110 section 5.6.2: token characters (header names, methods).
bool is_token_char(unsigned char c) noexcept {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_token(std::string_view text) noexcept {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return is_token_char(static_cast<unsigned char>(c)); });
}

bool is_control(unsigned char c) noexcept { return c < 0x20 || c == 0x7f; }

char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

std::string_view trim_ows(std::string_view text) noexcept {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits off the next line (without its "\n" or "\r\n"). False when no line end is left.
bool next_line(std::string_view& rest, std::string_view& line) noexcept {
  auto end = rest.find('\n');
  if (end == std::string_view::npos) return false;
  line = rest.substr(0, end);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  rest.remove_prefix(end + 1);
  return true;
}

HeadError error(int status, std::string message) { return {status, std::move(message)}; }

}  // namespace

std::size_t find_head_end(std::string_view buffer, std::size_t& scanned) noexcept {
  // The head ends at a line feed followed by an empty line: "\n\r\n" or "\n\n". Resume two bytes
  // back so a terminator split across calls is still seen.
  std::size_t i = scanned >= 2 ? scanned - 2 : 0;
  for (; i < buffer.size(); ++i) {
    if (buffer[i] != '\n') continue;
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  scanned = buffer.size();
  return 0;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::variant<RequestHead, HeadError> parse_request_head(std::string_view head, const HeadLimits& limits) {
  if (head.size() > limits.max_head_bytes) {
    return error(431, "the request line and headers exceed " + std::to_string(limits.max_head_bytes) + " bytes");
  }
  std::string_view rest = head;
  std::string_view line;
  if (!next_line(rest, line)) return error(400, "malformed request line");

  // method SP request-target SP HTTP-version
  RequestHead out;
  auto first_space = line.find(' ');
  if (first_space == std::string_view::npos) return error(400, "malformed request line");
  auto method = line.substr(0, first_space);
  if (method.size() > kMaxMethodBytes || !is_token(method)) return error(400, "malformed request method");
  auto after_method = line.substr(first_space + 1);
  auto last_space = after_method.rfind(' ');
  if (last_space == std::string_view::npos) return error(400, "malformed request line");
  auto target = after_method.substr(0, last_space);
  auto version = after_method.substr(last_space + 1);

  if (version == "HTTP/1.1") {
    out.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    out.minor_version = 0;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[6] == '.') {
    return error(505, "HTTP version not supported: only HTTP/1.0 and HTTP/1.1 are");
  } else {
    return error(400, "malformed request line");
  }
  if (target.size() > limits.max_target_bytes) {
    return error(414, "the request target exceeds " + std::to_string(limits.max_target_bytes) + " bytes");
  }
  if (target.empty() || target.front() != '/') return error(400, "the request target must be a path starting with /");
  for (unsigned char c : target) {
    if (is_control(c) || c == ' ' || c >= 0x80) return error(400, "the request target holds a space or control character");
  }
  out.method = std::string(method);
  out.target = std::string(target);
  out.path = percent_decode(target.substr(0, target.find('?')));
  for (unsigned char c : out.path) {
    if (is_control(c)) return error(400, "the request path holds an encoded control character");
  }

  std::size_t headers = 0;
  bool chunked = false;
  bool other_coding = false;
  bool has_transfer_encoding = false;
  while (next_line(rest, line)) {
    if (line.empty()) break;  // the blank line that ends the head
    if (++headers > limits.max_header_count) {
      return error(431, "more than " + std::to_string(limits.max_header_count) + " header fields");
    }
    if (line.front() == ' ' || line.front() == '\t') return error(400, "obsolete header line folding is not accepted");
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return error(400, "malformed header line");
    auto name = line.substr(0, colon);
    if (!is_token(name)) return error(400, "malformed header name");
    auto value = trim_ows(line.substr(colon + 1));
    for (unsigned char c : value) {
      if (c == '\0' || c == '\r' || c == '\n') return error(400, "header " + std::string(name) + " holds a CR, LF or NUL");
    }
    if (iequals(name, "Content-Length")) {
      std::uint64_t length = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
        return error(400, "Content-Length must be a decimal number of bytes");
      }
      if (out.content_length && *out.content_length != length) return error(400, "conflicting Content-Length headers");
      out.content_length = length;
    } else if (iequals(name, "Transfer-Encoding")) {
      has_transfer_encoding = true;
      // A list of codings; chunked must be the last one when it is present.
      std::string_view codings = value;
      while (!codings.empty()) {
        auto comma = codings.find(',');
        auto coding = trim_ows(codings.substr(0, comma));
        if (iequals(coding, "chunked")) {
          chunked = true;
        } else if (!coding.empty()) {
          other_coding = true;
        }
        if (comma == std::string_view::npos) break;
        codings.remove_prefix(comma + 1);
      }
    } else if (iequals(name, "Expect")) {
      out.expect_continue = iequals(value, "100-continue");
    }
  }
  if (has_transfer_encoding) {
    if (out.content_length) return error(400, "Content-Length and Transfer-Encoding together are not accepted");
    // An empty Transfer-Encoding: where does this request end? A proxy in front may think
    // otherwise than we would, and take what follows for part of it (request smuggling).
    if (!chunked && !other_coding) return error(400, "Transfer-Encoding names no coding");
    if (other_coding) return error(501, "Transfer-Encoding not supported");
    if (chunked) {
      return error(411, "chunked request bodies are not accepted: send the body with a Content-Length");
    }
  }
  return out;
}

}  // namespace cronwheel::common::http
