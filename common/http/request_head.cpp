#include "common/http/request_head.h"

#include <algorithm>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "common/http/request_parser.h"

namespace cronwheel::common::http {
namespace {

namespace beast_http = boost::beast::http;

constexpr std::size_t kMaxMethodBytes = 16;

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

HeadError error(int status, std::string message) { return {status, std::move(message)}; }

std::string head_too_large(const HeadLimits& limits) {
  return "the request line and headers exceed " + std::to_string(limits.max_head_bytes) + " bytes";
}

// "HTTP/d.d" with a major version other than 1 ends the first line of `received`.
bool names_other_http_version(std::string_view received) {
  const auto end = received.find("\r\n");
  if (end == std::string_view::npos) return false;
  const std::string_view line = received.substr(0, end);
  const auto space = line.rfind(' ');
  if (space == std::string_view::npos) return false;
  const std::string_view version = line.substr(space + 1);
  return version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[6] == '.' && version[5] >= '0' &&
         version[5] <= '9' && version[7] >= '0' && version[7] <= '9' && version[5] != '1';
}

// Why a head with this Transfer-Encoding value is refused: every request body must come with a
// Content-Length.
HeadError transfer_coding_refusal(std::string_view value) {
  bool chunked = false;
  bool other_coding = false;
  while (!value.empty()) {
    const auto comma = value.find(',');
    const auto coding = trim_ows(value.substr(0, comma));
    if (iequals(coding, "chunked")) {
      chunked = true;
    } else if (!coding.empty()) {
      other_coding = true;
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  // An empty Transfer-Encoding: where does this request end? A proxy in front may think
  // otherwise than we would, and take what follows for part of it (request smuggling).
  if (!chunked && !other_coding) return error(400, "Transfer-Encoding names no coding");
  if (other_coding) return error(501, "Transfer-Encoding not supported");
  return error(411, "chunked request bodies are not accepted: send the body with a Content-Length");
}

}  // namespace

void prepare_parser(RequestParser& parser, const HeadLimits& limits) {
  parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limits.max_head_bytes, UINT32_MAX)));
  parser.body_limit(boost::none);  // the route's limit is checked against Content-Length
  parser.eager(false);             // stop after the head: check_head sees it before any body
}

HeadError parse_failure(const boost::beast::error_code& failure, std::string_view received, const HeadLimits& limits) {
  if (failure == beast_http::error::header_limit) return error(431, head_too_large(limits));
  if (failure == beast_http::error::bad_version && names_other_http_version(received)) {
    return error(505, "HTTP version not supported: only HTTP/1.0 and HTTP/1.1 are");
  }
  if (failure == beast_http::error::bad_content_length || failure == beast_http::error::multiple_content_length) {
    return error(400, "Content-Length must be one decimal number of bytes");
  }
  if (failure == beast_http::error::bad_transfer_encoding) {
    return error(400, "a Transfer-Encoding that cannot be accepted (with a Content-Length, or chunked before another coding)");
  }
  return error(400, "malformed HTTP request: " + failure.message());
}

std::variant<RequestHead, HeadError> check_head(const RequestParser& parser, std::size_t head_bytes,
                                                const HeadLimits& limits) {
  if (head_bytes > limits.max_head_bytes) return error(431, head_too_large(limits));
  const auto& message = parser.get();
  RequestHead out;
  out.head_bytes = head_bytes;
  const std::string_view method = message.method_string();
  if (method.size() > kMaxMethodBytes) return error(400, "malformed request method");
  if (message.version() != 10 && message.version() != 11) {
    return error(505, "HTTP version not supported: only HTTP/1.0 and HTTP/1.1 are");
  }
  out.minor_version = message.version() % 10;
  const std::string_view target = message.target();
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
  for (const auto& field : message) {
    if (++headers > limits.max_header_count) {
      return error(431, "more than " + std::to_string(limits.max_header_count) + " header fields");
    }
    if (iequals(field.name_string(), "Expect")) out.expect_continue = iequals(trim_ows(field.value()), "100-continue");
  }
  if (auto coding = message.find(beast_http::field::transfer_encoding); coding != message.end()) {
    if (parser.content_length()) return error(400, "Content-Length and Transfer-Encoding together are not accepted");
    return transfer_coding_refusal(coding->value());
  }
  if (auto length = parser.content_length()) out.content_length = *length;
  return out;
}

std::variant<RequestHead, HeadError> parse_request_head(std::string_view bytes, const HeadLimits& limits) {
  RequestParser parser;
  prepare_parser(parser, limits);
  boost::beast::error_code failure;
  const std::size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), failure);
  if (failure == beast_http::error::need_more || (!failure && !parser.is_header_done())) {
    return error(400, "the request head is incomplete");
  }
  if (failure) return parse_failure(failure, bytes, limits);
  return check_head(parser, used, limits);
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

}  // namespace cronwheel::common::http
