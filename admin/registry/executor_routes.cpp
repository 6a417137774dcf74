#include "admin/registry/executor_routes.h"

#include <exception>
#include <functional>
#include <utility>

#include <spdlog/spdlog.h>

#include "admin/store/database.h"
#include "common/protocol/constants.h"
#include "common/protocol/protocol_error.h"
#include "common/protocol/return_t.h"

namespace cronwheel::admin {

namespace {

namespace protocol = common::protocol;
using Answer = protocol::ReturnT<std::string>;

// job_registry's columns are varchar(255): characters, not bytes.
constexpr std::size_t kMaxRegistryChars = 255;

std::size_t utf8_chars(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string field_problem(const char* field, std::string_view value) {
  if (value.empty()) return std::string(field) + ": must not be empty";
  if (value.find('\0') != std::string_view::npos) return std::string(field) + ": must not contain NUL characters";
  if (utf8_chars(value) > kMaxRegistryChars) {
    return std::string(field) + ": at most " + std::to_string(kMaxRegistryChars) + " characters";
  }
  return {};
}

void answer(httplib::Response& res, const Answer& result) {
  common::http::write_json(res, protocol::to_json_string(result), 200);
}

// Wraps an endpoint: the token check, then `body`, every failure answered as a ReturnT 500.
common::http::HttpServer::Handler endpoint(std::string access_token,
                                           std::function<Answer(const httplib::Request&)> body) {
  return [token = std::move(access_token), body = std::move(body)](const httplib::Request& req,
                                                                   httplib::Response& res) {
    if (!common::http::access_token_matches(req, token)) {
      spdlog::warn("{} from {}: wrong access token", req.path, req.remote_addr);
      answer(res, Answer::fail("The access token is wrong."));
      return;
    }
    try {
      answer(res, body(req));
    } catch (const protocol::ProtocolError& e) {
      answer(res, Answer::fail(std::string("invalid request body: ") + e.what()));
    } catch (const DatabaseUnavailable& e) {
      spdlog::warn("{} from {}: {}", req.path, req.remote_addr, e.what());
      answer(res, Answer::fail("the database is unavailable; try again shortly"));
    } catch (const std::exception& e) {
      spdlog::error("{} from {}: {}", req.path, req.remote_addr, e.what());
      answer(res, Answer::fail("internal error; see the admin's log"));
    }
  };
}

// The path under any context path: "/api/registry", "/xxl-job-admin/api/registry".
std::string any_context(const std::string& path) { return "(?:/[^/]+)*/" + path; }

}  // namespace

std::string registration_problem(const protocol::RegistryParam& p) {
  if (p.registry_group != protocol::kRegistryGroupExecutor && p.registry_group != protocol::kRegistryGroupAdmin) {
    return "registryGroup: must be EXECUTOR or ADMIN";
  }
  if (auto problem = field_problem("registryKey", p.registry_key); !problem.empty()) return problem;
  if (auto problem = field_problem("registryValue", p.registry_value); !problem.empty()) return problem;
  const auto& v = p.registry_value;
  if (!(v.starts_with("http://") || v.starts_with("https://")) || v.find_first_of(" \t\r\n") != std::string::npos) {
    return "registryValue: must be an http:// or https:// URL";
  }
  return {};
}

void add_executor_routes(common::http::HttpServer& server, RegistryStore& registry, Completion& completion,
                         std::string access_token, std::function<void()> registrations_changed) {
  server.post(any_context(std::string(protocol::kRegistryPath)),
              endpoint(access_token, [&registry, registrations_changed](const httplib::Request& req) {
                auto param = protocol::parse<protocol::RegistryParam>(req.body);
                if (auto problem = registration_problem(param); !problem.empty()) return Answer::fail(problem);
                if (registry.upsert(param.registry_group, param.registry_key, param.registry_value)) {
                  spdlog::info("registry: {} {} at {} registered", param.registry_group, param.registry_key,
                               param.registry_value);
                  if (registrations_changed) registrations_changed();
                } else {
                  spdlog::debug("registry: {} {} at {}", param.registry_group, param.registry_key,
                                param.registry_value);
                }
                return Answer::success();
              }));

  server.post(any_context(std::string(protocol::kRegistryRemovePath)),
              endpoint(access_token, [&registry, registrations_changed](const httplib::Request& req) {
                auto param = protocol::parse<protocol::RegistryParam>(req.body);
                if (auto problem = registration_problem(param); !problem.empty()) return Answer::fail(problem);
                if (registry.remove(param.registry_group, param.registry_key, param.registry_value)) {
                  spdlog::info("registry: {} {} at {} removed", param.registry_group, param.registry_key,
                               param.registry_value);
                  if (registrations_changed) registrations_changed();
                }
                return Answer::success();
              }));

  server.post(any_context(std::string(protocol::kCallbackPath)),
              endpoint(std::move(access_token), [&completion](const httplib::Request& req) {
                auto batch = protocol::parse<protocol::CallbackBatch>(req.body);
                // One transaction per result: a failure part-way leaves the first ones recorded,
                // and the executor's resend of the whole batch finds them already final.
                for (const auto& callback : batch.callbacks) completion.report(callback);
                return Answer::success();
              }));
}

}  // namespace cronwheel::admin
