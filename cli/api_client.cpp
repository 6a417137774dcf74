#include "cli/api_client.h"

#include <cstddef>

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::string_view kApiPrefix = "api/v1/";
// Deeper JSON than any answer of the API: refused before parsing, whose recursion it would feed.
constexpr int kMaxJsonDepth = 64;

std::string status_text(int status) { return "HTTP " + std::to_string(status); }

std::string type_error(const char* key, const char* expected) {
  return std::string("'") + key + "' is not " + expected;
}

}  // namespace

ApiError::ApiError(int http_status, std::string code, std::string api_message, std::string field)
    : CliError(kExitFailed, one_line(api_message) + " (" + status_text(http_status) + ")"),
      http_status_(http_status), code_(std::move(code)), api_message_(std::move(api_message)),
      field_(std::move(field)) {}

ApiError ApiError::from_answer(const ApiAnswer& answer, bool has_token) {
  json body;
  if (json_nesting_within(answer.body, kMaxJsonDepth)) body = json::parse(answer.body, nullptr, false);
  std::string code, message, field;
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    const json& error = body["error"];
    if (error.contains("code") && error["code"].is_string()) code = error["code"].get<std::string>();
    if (error.contains("message") && error["message"].is_string()) message = error["message"].get<std::string>();
    if (error.contains("field") && error["field"].is_string()) field = error["field"].get<std::string>();
  }
  if (message.empty()) {
    // Not the API's error shape: a proxy's page, another server. Say so, with its start.
    message = answer.body.empty() ? "the server answered with no message"
                                  : "the server answered: " + one_line(answer.body, 120);
  }
  if (answer.status == 401 && !has_token) {
    message += "; give an API token with --token, CRONWHEEL_TOKEN or the settings file";
  }
  return ApiError(answer.status, std::move(code), std::move(message), std::move(field));
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& parameters) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto encode = [](std::string& out, std::string_view text) {
    for (unsigned char c : text) {
      const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                              c == '-' || c == '.' || c == '_' || c == '~';
      if (unreserved) {
        out += static_cast<char>(c);
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 0x0F];
      }
    }
  };
  std::string query;
  for (const auto& [name, value] : parameters) {
    query += query.empty() ? '?' : '&';
    encode(query, name);
    query += '=';
    encode(query, value);
  }
  return query;
}

ApiClient::ApiClient(std::unique_ptr<Transport> transport, bool has_token)
    : transport_(std::move(transport)), has_token_(has_token) {}

ApiAnswer ApiClient::request(ApiRequest request) {
  request.target = std::string(kApiPrefix) + request.target;
  ApiAnswer answer = transport_->send(request);
  if (answer.status < 200 || answer.status > 299) throw ApiError::from_answer(answer, has_token_);
  return answer;
}

json ApiClient::json_of(const ApiAnswer& answer) const {
  if (answer.body.empty()) return nullptr;
  if (!json_nesting_within(answer.body, kMaxJsonDepth)) throw unexpected_answer("JSON nested too deeply");
  json body = json::parse(answer.body, nullptr, false);
  if (body.is_discarded()) throw unexpected_answer("not JSON");
  return body;
}

json ApiClient::get(std::string_view path) {
  ApiRequest r;
  r.target = path;
  return json_of(request(std::move(r)));
}

json ApiClient::post(std::string_view path, const json& body) {
  ApiRequest r;
  r.method = "POST";
  r.target = path;
  r.body = body.dump();
  return json_of(request(std::move(r)));
}

json ApiClient::put(std::string_view path, const json& body) {
  ApiRequest r;
  r.method = "PUT";
  r.target = path;
  r.body = body.dump();
  return json_of(request(std::move(r)));
}

json ApiClient::remove(std::string_view path) {
  ApiRequest r;
  r.method = "DELETE";
  r.target = path;
  return json_of(request(std::move(r)));
}

bool json_nesting_within(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

const json& member(const json& object, const char* key) {
  if (!object.is_object()) throw unexpected_answer("not a JSON object");
  auto it = object.find(key);
  if (it == object.end()) throw unexpected_answer(std::string("no '") + key + "'");
  return *it;
}

std::int64_t int_member(const json& object, const char* key) {
  const json& value = member(object, key);
  if (!value.is_number_integer()) throw unexpected_answer(type_error(key, "an integer"));
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    throw unexpected_answer(type_error(key, "a 64-bit integer"));
  }
  return value.get<std::int64_t>();
}

std::string string_member(const json& object, const char* key) {
  const json& value = member(object, key);
  if (!value.is_string()) throw unexpected_answer(type_error(key, "a string"));
  return value.get<std::string>();
}

bool bool_member(const json& object, const char* key) {
  const json& value = member(object, key);
  if (!value.is_boolean()) throw unexpected_answer(type_error(key, "true or false"));
  return value.get<bool>();
}

const json& array_member(const json& object, const char* key) {
  const json& value = member(object, key);
  if (!value.is_array()) throw unexpected_answer(type_error(key, "a list"));
  return value;
}

}  // namespace cronwheel::cli
