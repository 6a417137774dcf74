#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cronwheel::common::http {

// What HttpServer accepts of a request's line and headers before the request goes anywhere:
// Boost.Beast's parser reads the bytes (request_parser.h), and the checks here decide whether
// to serve the request, with which status to refuse it, and how much body follows. Only these
// heads reach a handler.

struct HeadLimits {
  std::size_t max_head_bytes = 16 * 1024;   // request line + headers + blank line
  std::size_t max_target_bytes = 8 * 1024;  // the request target (path and query)
  std::size_t max_header_count = 100;
};

struct RequestHead {
  std::string method;  // as sent: "GET", "POST", ...
  std::string target;  // as sent: "/api/v1/jobs?text=a%20b"
  std::string path;    // the target before '?', percent-decoded, as routes see it
  int minor_version = 1;  // HTTP/1.<minor>
  std::optional<std::uint64_t> content_length;
  bool expect_continue = false;  // "Expect: 100-continue"
  std::size_t head_bytes = 0;    // of the input, up to and including the blank line
};

// Why a head cannot be served, as the HTTP status and message to answer.
struct HeadError {
  int status = 400;
  std::string message;
};

// Reads the head at the start of `bytes` (what follows it, a body or the next request, is left
// alone), exactly as HttpServer reads a connection's. Refuses, with the status to answer:
//  - 400: a malformed request line or header line (bare LF line ends included), a target that
//    is not a path ("/..."), control characters, spaces or non-ASCII bytes in the target, a
//    decoded path holding control characters (%00, %0A...), a method longer than 16 bytes, an
//    invalid or conflicting Content-Length, Content-Length together with Transfer-Encoding, a
//    Transfer-Encoding naming no coding, and a head that `bytes` does not hold whole;
//  - 411: Transfer-Encoding: chunked (request bodies must declare their length: every client
//    of cronwheel's endpoints does, XXL-JOB's included);
//  - 414: a target longer than max_target_bytes;
//  - 431: a head longer than max_head_bytes or with more than max_header_count headers;
//  - 501: any other Transfer-Encoding; 505: a version other than HTTP/1.0 or HTTP/1.1.
// An obsolete folded header line (RFC 9112 section 5.2) is joined to the one before with a
// space, as the RFC allows. Never throws.
std::variant<RequestHead, HeadError> parse_request_head(std::string_view bytes, const HeadLimits& limits = {});

// `text` with each %XX escape replaced by its byte; a '%' not followed by two hex digits is
// kept as is. '+' stays '+'.
std::string percent_decode(std::string_view text);

}  // namespace cronwheel::common::http
