#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace cronwheel::common::http {

// An error answered to an HTTP client. Everything in it is shown to the client, so it must never
// carry internal details (exception texts, SQL, file paths).
struct ErrorInfo {
  int status = 500;     // HTTP status
  std::string code;     // machine-readable: "bad_request", "not_found", "internal", ...
  std::string message;  // human-readable
  std::string field;    // the offending input field, when there is one
  // More than 0: sent as Retry-After (seconds), for 429 and 503 answers that say when to come back.
  int retry_after_seconds = 0;
};

// Error codes HttpServer itself produces.
inline constexpr const char* kBadRequestCode = "bad_request";              // 400, ProtocolError
inline constexpr const char* kNotFoundCode = "not_found";                  // 404, no route
inline constexpr const char* kPayloadTooLargeCode = "payload_too_large";   // 413
inline constexpr const char* kInternalCode = "internal";                   // 500

// Thrown by a route handler to answer `info` (status, code and message go to the client as is).
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, std::string code, std::string message, std::string field = {});
  explicit HttpError(ErrorInfo info);
  const ErrorInfo& info() const noexcept { return info_; }

 private:
  ErrorInfo info_;
};

// The HTTP status and JSON body that answer an error.
struct ErrorResponse {
  int status = 500;
  std::string body;
};

// How a component shapes its error answers; HttpServer uses it for every error it produces
// (no route, body too large, handler exceptions) and for HttpServer::write_error.
using ErrorFormatter = std::function<ErrorResponse(const ErrorInfo&)>;

// The admin REST API's shape: {"error":{"code":"...","message":"...","field":"..."}} ("field"
// only when set), with info.status.
ErrorResponse rest_error(const ErrorInfo& info);

// XXL-JOB's ReturnT shape, for the executor: {"code":500,"msg":"...","content":null}, with
// info.status. (XXL-JOB's own executor answers every error with HTTP 200; a component wanting
// that wraps this formatter and overrides the status.)
ErrorResponse xxl_job_error(const ErrorInfo& info);

}  // namespace cronwheel::common::http
