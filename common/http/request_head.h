#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cronwheel::common::http {

// The request line and header block of an HTTP/1.x request, read by HttpServer's connection
// loop before any worker sees the request: enough to decide where the request goes, how much
// body follows and whether to refuse it, nothing more (cpp-httplib parses the whole request
// again on the worker). Pure functions of their input: no I/O, no allocation beyond the result.

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
};

// Why a head cannot be served, as the HTTP status and message to answer.
struct HeadError {
  int status = 400;
  std::string message;
};

// Where the header block in `buffer` ends: the number of bytes up to and including the empty
// line that closes it ("\r\n\r\n", or bare "\n" line ends, which cpp-httplib accepts too), or 0
// while it has not arrived. `scanned` carries progress between calls on a growing buffer (start
// it at 0; the bytes before it are not looked at again), so a head trickling in byte by byte
// costs linear time in total.
std::size_t find_head_end(std::string_view buffer, std::size_t& scanned) noexcept;

// Reads a complete head (as find_head_end delimited it). Refuses, with the status to answer:
//  - 400: a malformed request line or header line, a target that is not a path ("/..."),
//    control characters or spaces in the target, a decoded path holding control characters
//    (%00, %0A...), an invalid or conflicting Content-Length, Content-Length together with
//    Transfer-Encoding, obsolete line folding;
//  - 411: Transfer-Encoding: chunked (request bodies must declare their length: every client
//    of cronwheel's endpoints does, XXL-JOB's included);
//  - 414: a target longer than max_target_bytes;
//  - 431: a head longer than max_head_bytes or with more than max_header_count headers;
//  - 501: any other Transfer-Encoding; 505: a version other than HTTP/1.0 or HTTP/1.1.
std::variant<RequestHead, HeadError> parse_request_head(std::string_view head,
                                                       const HeadLimits& limits = {});

// `text` with each %XX escape replaced by its byte; a '%' not followed by two hex digits is
// kept as is (as cpp-httplib decodes paths). '+' stays '+'.
std::string percent_decode(std::string_view text);

}  // namespace cronwheel::common::http
