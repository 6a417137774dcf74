#include "executor/src/executor_endpoints.h"

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "common/protocol/protocol_error.h"
#include "common/protocol/return_t.h"

namespace cronwheel::executor {

using common::protocol::IdleBeatParam;
using common::protocol::KillParam;
using common::protocol::LogParam;
using common::protocol::LogResult;
using common::protocol::ReturnT;
using common::protocol::TriggerParam;

namespace {

constexpr std::string_view kWrongToken = "The access token is wrong.";

template <class T>
void answer(common::http::Response& res, const ReturnT<T>& result) {
  common::http::write_json(res, common::protocol::to_json_string(result));
}

// One executor route: token check, body parsing, then `call` with the parsed body. Protocol
// errors are answered here (code 500 with what was wrong) rather than by HttpServer, whose answer
// for them would be a 400.
template <class Param, class Result>
common::http::HttpServer::Handler route(std::string access_token,
                                        std::function<ReturnT<Result>(const Param&)> call) {
  return [token = std::move(access_token), call = std::move(call)](const common::http::Request& req,
                                                                   common::http::Response& res) {
    if (!common::http::access_token_matches(req, token)) {
      spdlog::warn("executor: {} from {} refused: wrong or missing access token", req.path,
                   req.remote_addr);
      answer(res, ReturnT<Result>::fail(std::string(kWrongToken)));
      return;
    }
    Param param;
    try {
      param = common::protocol::parse<Param>(req.body);
    } catch (const common::protocol::ProtocolError& e) {
      spdlog::warn("executor: {} from {} refused: {}", req.path, req.remote_addr, e.what());
      answer(res, ReturnT<Result>::fail(e.what()));
      return;
    }
    answer(res, call(param));
  };
}

std::int64_t now_ms(const EndpointHooks& hooks) {
  if (hooks.now_ms) return hooks.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

common::http::ErrorResponse executor_error(const common::http::ErrorInfo& info) {
  auto response = common::http::xxl_job_error(info);
  response.status = 200;
  return response;
}

bool ended_here(const RunLogStore& logs, const std::function<bool(std::int64_t log_id)>& result_pending,
                const TriggerParam& run) {
  return (result_pending && result_pending(run.log_id)) || logs.exists(run.log_date_time, run.log_id);
}

void add_executor_endpoints(common::http::HttpServer& server, JobDispatcher& dispatcher,
                            const RunLogStore& logs, std::string access_token, EndpointHooks hooks) {
  auto shared_hooks = std::make_shared<const EndpointHooks>(std::move(hooks));
  using common::protocol::kBeatPath;
  using common::protocol::kIdleBeatPath;
  using common::protocol::kKillPath;
  using common::protocol::kLogPath;
  using common::protocol::kRunPath;
  // Everything but /run carries a job id or a log position: a few bytes. /run keeps the server's
  // limit (5 MiB, XXL-JOB's), since it carries script sources.
  const common::http::RouteOptions small{4 * 1024};

  // /beat carries no meaningful body (XXL-JOB 2.4 sends the JSON string ""): only the token.
  server.post(std::string(kBeatPath),
              [token = access_token](const common::http::Request& req, common::http::Response& res) {
                if (!common::http::access_token_matches(req, token)) {
                  answer(res, ReturnT<std::string>::fail(std::string(kWrongToken)));
                  return;
                }
                answer(res, ReturnT<std::string>::success());
              },
              small);

  server.post(std::string(kIdleBeatPath),
              route<IdleBeatParam, std::string>(access_token, [&dispatcher](const IdleBeatParam& p) {
                return dispatcher.idle_beat(p.job_id);
              }),
              small);

  server.post(std::string(kRunPath),
              route<TriggerParam, std::string>(access_token, [&dispatcher, &logs, shared_hooks](const TriggerParam& p) {
                // Before anything else: the time names the log's directory.
                if (auto problem = RunLogStore::log_date_time_problem(p.log_date_time, now_ms(*shared_hooks))) {
                  spdlog::warn("executor: job {} run {} refused: logDateTime {}", p.job_id, p.log_id, *problem);
                  return ReturnT<std::string>::fail("logDateTime " + *problem + "; run refused");
                }
                // Queued or running: the dispatcher answers the same under its lock (the job's
                // thread knows its runs); here, a run that has ended or whose result waits.
                if (ended_here(logs, shared_hooks->result_pending, p) ||
                    (shared_hooks->lead != nullptr && shared_hooks->lead->holds(p.log_id))) {
                  spdlog::warn("executor: job {} run {} received again: not run again", p.job_id, p.log_id);
                  auto answer = ReturnT<std::string>::success();
                  answer.msg = "run " + std::to_string(p.log_id) + " was received already: not run again";
                  return answer;
                }
                if (shared_hooks->refuse_runs) {
                  if (auto reason = shared_hooks->refuse_runs()) {
                    spdlog::warn("executor: job {} run {} refused: {}", p.job_id, p.log_id, *reason);
                    return ReturnT<std::string>::fail(*reason);
                  }
                }
                auto result = dispatcher.run(p);
                if (result.is_success()) {
                  spdlog::debug("executor: job {} run {} accepted", p.job_id, p.log_id);
                } else {
                  spdlog::info("executor: job {} run {} refused: {}", p.job_id, p.log_id,
                               result.msg);
                }
                return result;
              }));

  server.post(std::string(kKillPath),
              route<KillParam, std::string>(access_token, [&dispatcher](const KillParam& p) {
                spdlog::info("executor: kill job {}", p.job_id);
                return dispatcher.kill(p.job_id);
              }),
              small);

  server.post(std::string(kLogPath),
              route<LogParam, LogResult>(
                  access_token, [&dispatcher, &logs, shared_hooks](const LogParam& p) {
                    if (auto problem = RunLogStore::log_date_time_problem(p.log_date_time, now_ms(*shared_hooks))) {
                      return ReturnT<LogResult>::fail("logDateTim " + *problem);
                    }
                    // Judged before the log is read: a run that ends meanwhile is still "active"
                    // or already "result-pending", never "unknown".
                    // Held first: a fire leaves the hold only once the dispatcher has it.
                    const bool active = (shared_hooks->lead != nullptr && shared_hooks->lead->holds(p.log_id)) ||
                                        dispatcher.is_active(p.log_id);
                    const bool pending =
                        !active && shared_hooks->result_pending && shared_hooks->result_pending(p.log_id);
                    LogPage page;
                    try {
                      page = logs.read(p.log_date_time, p.log_id, p.from_line_num);
                    } catch (const std::exception& e) {
                      spdlog::error("executor: cannot read the log of run {}: {}", p.log_id,
                                    e.what());
                      return ReturnT<LogResult>::fail("readLog fail: " + std::string(e.what()));
                    }
                    LogResult result;
                    if (!page.found) {
                      result.from_line_num = p.from_line_num;
                      if (active || dispatcher.is_active(p.log_id)) {
                        // Queued or held: its log does not exist yet, but it will.
                        result.to_line_num = p.from_line_num - 1;
                      } else {
                        // XXL-JOB's answer for a log that is not there.
                        result.to_line_num = 0;
                        result.log_content = "readLog fail, logFile not exists";
                        result.is_end = true;
                      }
                    } else {
                      result.from_line_num = page.from_line;
                      result.to_line_num = page.to_line;
                      result.log_content = std::move(page.content);
                      result.is_end = page.finished && page.end_of_file;
                    }
                    result.run_state = std::string(active    ? common::protocol::kRunStateActive
                                                   : pending ? common::protocol::kRunStateResultPending
                                                             : common::protocol::kRunStateUnknown);
                    result.executor_start_time = shared_hooks->started_at_ms;
                    return ReturnT<LogResult>::success(std::move(result));
                  }),
              small);

  if (LeadHold* lead = shared_hooks->lead) {
    using common::protocol::LeadAnswer;
    using common::protocol::LeadCancelAnswer;
    using common::protocol::LeadCancelParam;
    using common::protocol::LeadRequest;
    // /lead keeps the server's limit: up to kMaxLeadFires triggers with their script sources.
    server.post(std::string(common::protocol::kLeadPath),
                route<LeadRequest, LeadAnswer>(access_token, [lead, shared_hooks](const LeadRequest& p) {
                  // What refuses new runs (too many results waiting for an admin) refuses fires
                  // to hold: the admin then posts each at its instant, and /run says why.
                  if (shared_hooks->refuse_runs) {
                    if (auto reason = shared_hooks->refuse_runs()) {
                      spdlog::warn("executor: /lead of {} fire(s) refused: {}", p.fires.size(), *reason);
                      return ReturnT<LeadAnswer>::fail(*reason);
                    }
                  }
                  auto answer = lead->hold(p);
                  if (!answer.is_success()) {
                    spdlog::warn("executor: /lead of {} fire(s) refused: {}", p.fires.size(), answer.msg);
                  } else if (answer.content && !answer.content->refused.empty()) {
                    spdlog::info("executor: /lead: {} fire(s) accepted, {} refused (first: run {}: {})",
                                 answer.content->accepted.size(), answer.content->refused.size(),
                                 answer.content->refused.front().log_id, answer.content->refused.front().msg);
                  }
                  return answer;
                }));
    server.post(std::string(common::protocol::kLeadCancelPath),
                route<LeadCancelParam, LeadCancelAnswer>(access_token, [lead](const LeadCancelParam& p) {
                  return ReturnT<LeadCancelAnswer>::success(lead->cancel(p));
                }));
  }
}

}  // namespace cronwheel::executor
