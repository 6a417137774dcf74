#pragma once

#include <string>
#include <string_view>

#include "common/http/http_error.h"

namespace cronwheel::admin {

// The REST API's error codes, one per HTTP status it uses. Every error leaves the API as
// {"error":{"code","message","field"?}} (common/http rest_error) from one place: ApiRouter.
inline constexpr const char* kInvalid = "invalid";                  // 400
inline constexpr const char* kUnauthorized = "unauthorized";        // 401
inline constexpr const char* kForbidden = "forbidden";              // 403
inline constexpr const char* kNotFound = "not_found";               // 404
inline constexpr const char* kConflict = "conflict";                // 409
inline constexpr const char* kTooLarge = "payload_too_large";       // 413
inline constexpr const char* kRateLimited = "rate_limited";         // 429
inline constexpr const char* kBadGateway = "bad_gateway";           // 502: an executor failed
inline constexpr const char* kUnavailable = "unavailable";          // 503
inline constexpr const char* kBusy = "busy";                        // 503: bounded capacity in use

inline common::http::HttpError invalid(std::string_view field, std::string message) {
  return {400, kInvalid, std::move(message), std::string(field)};
}
inline common::http::HttpError unauthorized(std::string message = "login required") {
  return {401, kUnauthorized, std::move(message)};
}
inline common::http::HttpError forbidden(std::string message) { return {403, kForbidden, std::move(message)}; }
inline common::http::HttpError not_found(std::string message) { return {404, kNotFound, std::move(message)}; }
inline common::http::HttpError conflict(std::string message, std::string field = {}) {
  return {409, kConflict, std::move(message), std::move(field)};
}
inline common::http::HttpError rate_limited(std::string message, int retry_after_seconds = 0) {
  return common::http::HttpError({429, kRateLimited, std::move(message), "", retry_after_seconds});
}
inline common::http::HttpError busy(std::string message, int retry_after_seconds) {
  return common::http::HttpError({503, kBusy, std::move(message), "", retry_after_seconds});
}

}  // namespace cronwheel::admin
