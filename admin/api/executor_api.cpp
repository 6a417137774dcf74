#include "admin/api/executor_api.h"

#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <functional>
#include <utility>
#include <variant>
#include <vector>

#include <spdlog/spdlog.h>

#include "admin/model/registry_store.h"
#include "admin/model/store_errors.h"
#include "common/http/url.h"
#include "common/protocol/constants.h"
#include "common/protocol/protocol_error.h"
#include "common/protocol/return_t.h"
#include "common/util/utf8.h"

namespace cronwheel::admin {

namespace {

namespace protocol = common::protocol;
using Answer = protocol::ReturnT<std::string>;

// job_registry's columns are varchar(255): characters, not bytes.
constexpr std::size_t kMaxRegistryChars = 255;

std::string field_problem(const std::string& field, std::string_view value) {
  if (value.empty()) return field + ": must not be empty";
  for (unsigned char c : value) {
    // A line break in a registryKey would forge lines in the admin's log; NUL would be cut
    // short by the database.
    if (c < 0x20 || c == 0x7f) return field + ": must not contain control characters";
  }
  if (common::utf8::char_count(value) > kMaxRegistryChars) {
    return field + ": at most " + std::to_string(kMaxRegistryChars) + " characters";
  }
  return {};
}

void answer(common::http::Response& res, const Answer& result) {
  common::http::write_json(res, protocol::to_json_string(result), 200);
}

// Wraps an endpoint: `body`, every failure answered as a ReturnT 500. The access token is each
// endpoint's to check (it depends on the group the body names).
common::http::HttpServer::Handler endpoint(std::function<Answer(const common::http::Request&)> body) {
  return [body = std::move(body)](const common::http::Request& req, common::http::Response& res) {
    try {
      answer(res, body(req));
    } catch (const protocol::ProtocolError& e) {
      answer(res, Answer::fail(std::string("invalid request body: ") + e.what()));
    } catch (const StoreUnavailable& e) {
      spdlog::warn("{} from {}: {}", req.path, req.remote_addr, e.what());
      answer(res, Answer::fail("the database is unavailable; try again shortly"));
    } catch (const std::exception& e) {
      spdlog::error("{} from {}: {}", req.path, req.remote_addr, e.what());
      answer(res, Answer::fail("internal error; see the admin's log"));
    }
  };
}

// Wraps the registration endpoint: its answer says when, by `clock`, this node received it and
// answered it (protocol::kClockHeader), for the executor's estimate of the clocks' difference.
common::http::HttpServer::Handler clocked(const common::Clock& clock, common::http::HttpServer::Handler inner) {
  return [&clock, inner = std::move(inner)](const common::http::Request& req, common::http::Response& res) {
    const std::int64_t received = clock.now_ms();
    inner(req, res);
    res.set_header(protocol::kClockHeader, std::to_string(received) + "," + std::to_string(clock.now_ms()));
  };
}

const Answer kWrongToken = Answer::fail("The access token is wrong.");

// The path under any context path: "/api/registry", "/xxl-job-admin/api/registry".
std::string any_context(std::string_view path) { return "/**/" + std::string(path); }

// Registrations and results are small: a registration is three short strings, and an executor
// sends at most a few thousand results at once.
constexpr std::size_t kMaxRegistrationBytes = 32 * 1024;  // with up to 256 handler names
constexpr std::size_t kMaxCallbackBytes = 5 * 1024 * 1024;

// The estimate a registration carries: both fields, or none (from_json bounds each).
std::optional<ClockEstimate> clock_estimate(const protocol::RegistryParam& p) {
  if (!p.clock_offset_ms || !p.clock_delay_ms) return std::nullopt;
  return ClockEstimate{*p.clock_offset_ms, *p.clock_delay_ms, p.lead_dispatch};
}

}  // namespace

namespace {

// Says whether a refusal for an app name is the first within a minute, so a flood of refused
// registrations costs one log line a minute per app name. Remembers at most kMaxNames names.
class RefusalLog {
 public:
  bool first_in_a_minute(const std::string& name) {
    constexpr std::size_t kMaxNames = 1000;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    if (last_.size() >= kMaxNames && last_.count(name) == 0) last_.clear();
    auto [it, fresh] = last_.emplace(name, now);
    if (!fresh && now - it->second < std::chrono::minutes(1)) return false;
    it->second = now;
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> last_;
};

}  // namespace

std::string registration_problem(const protocol::RegistryParam& p) {
  if (p.registry_group != protocol::kRegistryGroupExecutor && p.registry_group != protocol::kRegistryGroupAdmin) {
    return "registryGroup: must be EXECUTOR or ADMIN";
  }
  if (auto problem = field_problem("registryKey", p.registry_key); !problem.empty()) return problem;
  if (auto problem = field_problem("registryValue", p.registry_value); !problem.empty()) return problem;
  const auto url = common::http::parse_http_url(p.registry_value);
  if (const auto* why = std::get_if<std::string>(&url); why != nullptr) {
    return "registryValue: " + *why;
  }
  for (std::size_t i = 0; i < p.handlers.size(); ++i) {
    if (auto problem = field_problem("handlers[" + std::to_string(i) + "]", p.handlers[i]); !problem.empty()) {
      return problem;
    }
  }
  return {};
}

void add_executor_routes(common::http::HttpServer& server, RegistryStore& registry, Completion& completion,
                         ExecutorTokens& tokens, ExecutorRouteOptions options) {
  const common::http::RouteOptions registration_route{.max_body_bytes = kMaxRegistrationBytes};
  auto refusals = std::make_shared<RefusalLog>();
  auto registration = [&registry, &tokens, options, refusals](const common::http::Request& req, bool remove) {
    auto param = protocol::parse<protocol::RegistryParam>(req.body);
    if (auto problem = registration_problem(param); !problem.empty()) return std::pair{Answer::fail(problem), false};
    if (!common::http::access_token_matches(req, tokens.for_app(param.registry_key))) {
      spdlog::warn("{} from {}: wrong access token for {}", req.path, req.remote_addr, param.registry_key);
      return std::pair{kWrongToken, false};
    }
    bool changed = false;
    if (remove) {
      changed = registry.remove(param.registry_group, param.registry_key, param.registry_value);
    } else {
      const auto registered =
          registry.register_capped(param.registry_group, param.registry_key, param.registry_value, param.handlers,
                                   clock_estimate(param),
                                   options.max_executors_per_group, options.dead_after_ms);
      if (registered == RegistryStore::Registered::kFull) {
        const std::string why = param.registry_key + " has " + std::to_string(options.max_executors_per_group) +
                                " executors registered, the most a group takes; " + param.registry_value +
                                " is not registered";
        if (refusals->first_in_a_minute(param.registry_key)) {
          spdlog::warn("registry: {} (from {}; further refusals for it are not logged for a minute)", why,
                       req.remote_addr);
        }
        if (options.refused_full) options.refused_full(param.registry_key);
        return std::pair{Answer::fail(why), false};
      }
      changed = registered == RegistryStore::Registered::kNew;
      if (options.registered) options.registered(param.registry_value);
    }
    if (changed) {
      spdlog::info("registry: {} {} at {} {}", param.registry_group, param.registry_key, param.registry_value,
                   remove ? "removed" : "registered");
    } else if (!remove) {
      spdlog::debug("registry: {} {} at {}", param.registry_group, param.registry_key, param.registry_value);
    }
    return std::pair{Answer::success(), changed};
  };

  const auto& registrations_changed = options.registrations_changed;
  const common::Clock& clock = options.clock != nullptr ? *options.clock : common::SystemClock::instance();
  server.post(any_context(protocol::kRegistryPath),
              clocked(clock, endpoint([registration, registrations_changed](const common::http::Request& req) {
                        auto [result, changed] = registration(req, false);
                        if (changed && registrations_changed) registrations_changed();
                        return result;
                      })),
              registration_route);

  server.post(any_context(protocol::kRegistryRemovePath),
              endpoint([registration, registrations_changed](const common::http::Request& req) {
                auto [result, changed] = registration(req, true);
                if (changed && registrations_changed) registrations_changed();
                return result;
              }),
              registration_route);

  server.post(any_context(protocol::kCallbackPath),
              endpoint([&completion, &tokens](const common::http::Request& req) {
                auto batch = protocol::parse<protocol::CallbackBatch>(req.body);
                std::vector<std::int64_t> ids;
                ids.reserve(batch.callbacks.size());
                for (const auto& callback : batch.callbacks) ids.push_back(callback.log_id);
                const auto needed = tokens.for_runs(ids);
                // The batch's results in one transaction: a failure records none of them, and the
                // executor sends the whole batch again (a result recorded meanwhile by another
                // node's copy is then found final). Results of another group's runs (a token that
                // is not theirs) are not recorded.
                std::size_t refused = 0;
                std::vector<protocol::HandleCallbackParam> accepted;
                accepted.reserve(batch.callbacks.size());
                for (auto& callback : batch.callbacks) {
                  auto token = needed.find(callback.log_id);
                  if (token != needed.end() && !common::http::access_token_matches(req, token->second)) {
                    ++refused;
                    continue;
                  }
                  accepted.push_back(std::move(callback));
                }
                completion.report_all(accepted);
                if (refused > 0) {
                  spdlog::warn("{} from {}: wrong access token for {} of {} results", req.path, req.remote_addr,
                               refused, batch.callbacks.size());
                  return Answer::fail("The access token is wrong for " + std::to_string(refused) + " of the " +
                                      std::to_string(batch.callbacks.size()) + " results.");
                }
                return Answer::success();
              }),
              common::http::RouteOptions{.max_body_bytes = kMaxCallbackBytes});
}

}  // namespace cronwheel::admin
