#pragma once

// The admin's REST API (openapi.yaml) as `cronwheel` calls it: requests under /api/v1/, the
// token as `Authorization: Bearer`, and every answer checked before it is used. A server may
// answer anything: a non-2xx answer becomes an ApiError carrying the API's error message and the
// status, a body that is not what the path answers becomes "unexpected answer from the server",
// and no answer at all becomes a CliError naming the URL. None of them crashes the client.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_error.h"

namespace cronwheel::cli {

struct ApiRequest {
  std::string method = "GET";  // GET, POST, PUT, DELETE
  std::string target;          // relative to the base URL: "api/v1/jobs?appName=billing"
  std::optional<std::string> body;
  std::string content_type = "application/json";  // the body's, when there is one
  std::string accept = "application/json";
};

struct ApiAnswer {
  int status = 0;
  std::string body;
  std::string content_type;  // as answered; may be empty
};

// Carries requests to one admin. send() answers whatever status arrived; when no answer arrives
// (cannot connect, timeout, the connection broke, an answer over the size limit) it throws a
// CliError (status 1) that names the URL: "cannot reach http://127.0.0.1:8080: connection
// refused". One Transport serves one thread.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual ApiAnswer send(const ApiRequest& request) = 0;
};

// A non-2xx answer of the API: status 1, the API's message and the status, e.g. "no such job: 42
// (HTTP 404)". When the body is not the API's error shape the message says what came instead.
class ApiError : public CliError {
 public:
  ApiError(int http_status, std::string code, std::string api_message, std::string field);

  int http_status() const noexcept { return http_status_; }
  const std::string& code() const noexcept { return code_; }  // "not_found", ...; may be empty
  const std::string& api_message() const noexcept { return api_message_; }
  const std::string& field() const noexcept { return field_; }

  // The ApiError for `answer` (a non-2xx one). `has_token` adds how to give one to a 401.
  static ApiError from_answer(const ApiAnswer& answer, bool has_token);

 private:
  int http_status_;
  std::string code_;
  std::string api_message_;
  std::string field_;
};

// A query string: "?a=1&b=x%20y", each name and value percent-encoded (RFC 3986 unreserved
// characters kept). Empty when there are no parameters.
std::string query_string(const std::vector<std::pair<std::string, std::string>>& parameters);

class ApiClient {
 public:
  ApiClient(std::unique_ptr<Transport> transport, bool has_token);

  // `path` is relative to /api/v1/, with its query: "jobs?limit=5", "jobs/42/start". Each answers
  // the parsed JSON of a 2xx answer (null for an empty body, as 204 has), and throws ApiError for
  // any other status and CliError("unexpected answer ...") for a body that is not JSON.
  nlohmann::json get(std::string_view path);
  nlohmann::json post(std::string_view path, const nlohmann::json& body = nlohmann::json::object());
  nlohmann::json put(std::string_view path, const nlohmann::json& body);
  nlohmann::json remove(std::string_view path);

  // Any request; request.target is relative to /api/v1/ here too. Answers a 2xx answer as it
  // came (for bodies that are not JSON, e.g. YAML from GET export); throws ApiError otherwise.
  ApiAnswer request(ApiRequest request);

 private:
  nlohmann::json json_of(const ApiAnswer& answer) const;

  std::unique_ptr<Transport> transport_;
  bool has_token_;
};

// Whether `text` nests JSON arrays and objects at most `max_depth` deep (strings skipped): checked
// before parsing JSON that anyone else wrote, whose depth the parser's work would follow.
bool json_nesting_within(std::string_view text, int max_depth);

// Checked reading of an answer: each throws unexpected_answer naming the field when `object` is
// not an object or the field is missing or of another type.
const nlohmann::json& member(const nlohmann::json& object, const char* key);
std::int64_t int_member(const nlohmann::json& object, const char* key);
std::string string_member(const nlohmann::json& object, const char* key);
bool bool_member(const nlohmann::json& object, const char* key);
const nlohmann::json& array_member(const nlohmann::json& object, const char* key);

}  // namespace cronwheel::cli
