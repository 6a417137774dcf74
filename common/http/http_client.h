#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cronwheel::common::http {

// Why a request got no HTTP answer.
enum class TransportError {
  kNone,        // an answer arrived (whatever its status)
  kConnect,     // could not connect: refused, unreachable, unknown host
  kTimeout,     // the connect, the send or the wait for the answer timed out
  kConnection,  // the server closed or reset the connection while the request was being sent or
                // before the answer was complete (HttpResult::request_written says which)
  kTooLarge,    // the answer's body was larger than max_answer_bytes (not read further)
  kNoConnection,  // AsyncHttpClient: every connection it may open to the server stayed in use
                  // for connection_wait; nothing was sent
  kOther,       // anything else (TLS failure, ...)
};

std::string_view to_string(TransportError error) noexcept;

struct HttpResult {
  int status = 0;  // HTTP status; 0 when no answer arrived
  std::string body;
  // The answer's header fields as they arrived, in order (HttpClient fills them;
  // AsyncHttpClient leaves them empty). Empty when no answer arrived.
  std::vector<std::pair<std::string, std::string>> headers;
  TransportError transport_error = TransportError::kNone;
  // Empty when an answer arrived; otherwise what failed, with the URL:
  // "POST http://127.0.0.1:9999/run: cannot connect (connection refused, host unreachable or
  // unknown host)".
  std::string error;

  // What a failed request got as far as, for callers deciding whether it may be sent again.
  //
  // False only when the request was certainly not written whole: the connect failed or timed
  // out, or the connection failed before its last byte was written. A server reads a request
  // whole before acting on it (the body's length is in the head), so it cannot have acted on it.
  bool request_written = true;
  // The answer's status line and headers had arrived (the body may still have broken off).
  bool answer_head_received = false;
  // The request went out on a connection kept alive from an earlier request, not on one opened
  // for it. A kept-alive connection the server closes as idle, or evicts, just as a request is
  // written fails with kConnection and no answer head: the classic stale keep-alive case.
  bool reused_connection = false;

  // The value of the answer's first header field named `name` (in any case), or nullopt.
  std::optional<std::string> header(std::string_view name) const;

  // An answer arrived with a 2xx status.
  bool ok() const noexcept {
    return transport_error == TransportError::kNone && status >= 200 && status < 300;
  }
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{3'000};
  // The longest wait for the next bytes of the answer (per wait, so an answer trickling in can
  // take longer in total), and for send buffer space.
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};
  // Sent as XXL-JOB-ACCESS-TOKEN on every request when not empty.
  std::string access_token;
  bool keep_alive = true;
  // The largest answer body read; a larger one ends the request (kTooLarge) and its
  // connection, so a server cannot make the client hold more than this per request.
  std::size_t max_answer_bytes = 8 * 1024 * 1024;
};

// An HTTP/1.1 client for one base URL, over cpp-httplib: a kept-alive connection reused across
// requests, TCP_NODELAY, bounded connect/read/write waits, and no exceptions for network
// failures (they come back in HttpResult).
//
// The base URL is "http://host[:port][/prefix][/]" ("https://" works too); request paths are
// relative to it, so with "http://10.0.0.5:8080/xxl-job-admin/" the path "api/callback" (or
// "/api/callback") requests /xxl-job-admin/api/callback.
//
// Not thread-safe: one HttpClient serves one thread at a time (cpp-httplib's client keeps one
// connection and per-request state). Threads calling the same server in parallel each use their
// own HttpClient.
//
// Nothing is retried here: a POST may have reached the server before the connection broke, and
// /run must not run twice. HttpResult says how far a failed request got, so a caller that knows
// its request's semantics can retry (HttpExecutorClient does, for the stale keep-alive case).
class HttpClient {
 public:
  // Throws std::invalid_argument when base_url is not an http(s) URL, or the access token holds a
  // CR, LF or NUL (which would end the header it travels in).
  explicit HttpClient(std::string_view base_url, HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;

  // POST with Content-Type: application/json.
  HttpResult post_json(std::string_view path, std::string_view body);
  HttpResult get(std::string_view path);

  // The absolute URL `path` resolves to, for log lines and messages.
  std::string url(std::string_view path) const;
  const std::string& base_url() const noexcept;
  const HttpClientOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::common::http
