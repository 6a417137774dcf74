#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/executor_client.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"

namespace cronwheel::testing {

// An ExecutorClient that calls nobody: it records every call and answers what the test set,
// per call and address (success when nothing was set). A hook runs on each call before it is
// answered, so a test can change the world "while the executor is being called" (a takeover
// during /run, a callback arriving first) or answer by its own logic.
//
// Thread-safe.
class FakeExecutorClient final : public admin::ExecutorClient {
 public:
  using LogAnswer = common::protocol::ReturnT<common::protocol::LogResult>;

  struct Call {
    std::string kind;  // "beat", "idleBeat", "run", "kill", "log"
    std::string address;
    std::string access_token;
    std::int32_t job_id = 0;                       // idleBeat, run, kill
    common::protocol::TriggerParam trigger;        // run
    common::protocol::LogParam log;                // log
    common::protocol::LeadRequest lead = {};       // lead
    common::protocol::LeadCancelParam cancel = {}; // leadCancel
  };

  // Answers `kind` calls to `address` with `answer` from now on.
  void answer(const std::string& kind, const std::string& address, Result answer) {
    std::lock_guard lock(mutex_);
    answers_[{kind, address}] = std::move(answer);
  }
  void answer_log(const std::string& address, LogAnswer answer) {
    std::lock_guard lock(mutex_);
    log_answers_[address] = std::move(answer);
  }
  // Runs on every call, outside the client's lock; its answer, when it gives one, wins over
  // answer(). For "log" calls it is asked too, and a non-empty result's code and msg are used.
  void on_call(std::function<std::optional<Result>(const Call&)> hook) {
    std::lock_guard lock(mutex_);
    hook_ = std::move(hook);
  }

  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  std::vector<Call> calls(const std::string& kind) const {
    std::lock_guard lock(mutex_);
    std::vector<Call> out;
    for (const auto& c : calls_) {
      if (c.kind == kind) out.push_back(c);
    }
    return out;
  }

  Result beat(const std::string& address, const std::string& access_token) override {
    Call c{"beat", address, access_token, 0, {}, {}};
    return answer_for(c);
  }
  Result idle_beat(const std::string& address, const std::string& access_token, std::int32_t job_id) override {
    Call c{"idleBeat", address, access_token, job_id, {}, {}};
    return answer_for(c);
  }
  Result run(const std::string& address, const std::string& access_token,
             const common::protocol::TriggerParam& trigger) override {
    Call c{"run", address, access_token, trigger.job_id, trigger, {}};
    return answer_for(c);
  }
  Result kill(const std::string& address, const std::string& access_token, std::int32_t job_id) override {
    Call c{"kill", address, access_token, job_id, {}, {}};
    return answer_for(c);
  }
  LogAnswer log(const std::string& address, const std::string& access_token,
                const common::protocol::LogParam& param) override {
    Call c{"log", address, access_token, 0, {}, param};
    auto hook = record(c);
    if (hook) {
      if (auto answer = hook(c)) {
        if (!answer->is_success()) return LogAnswer::fail(answer->msg, answer->code);
      }
    }
    std::lock_guard lock(mutex_);
    auto it = log_answers_.find(address);
    if (it != log_answers_.end()) return it->second;
    common::protocol::LogResult result;
    result.from_line_num = param.from_line_num;
    result.to_line_num = 1;
    result.log_content = "run " + std::to_string(param.log_id) + "\n";
    return LogAnswer::success(result);
  }

  // "lead": answer()'s and on_call()'s failures are the whole request's refusal (code and msg);
  // otherwise every fire is accepted, unless a lead hook set with on_lead() answers.
  void on_lead(std::function<std::optional<LeadResult>(const Call&)> hook) {
    std::lock_guard lock(mutex_);
    lead_hook_ = std::move(hook);
  }
  LeadResult lead(const std::string& address, const std::string& access_token,
                  const common::protocol::LeadRequest& request) override {
    Call c{"lead", address, access_token, 0, {}, {}, request, {}};
    const Result plain = answer_for(c);
    if (!plain.is_success()) return LeadResult::fail(plain.msg, plain.code);
    std::function<std::optional<LeadResult>(const Call&)> hook;
    {
      std::lock_guard lock(mutex_);
      hook = lead_hook_;
    }
    if (hook) {
      if (auto answer = hook(c)) return *answer;
    }
    common::protocol::LeadAnswer all;
    for (const auto& fire : request.fires) all.accepted.push_back(fire.trigger.log_id);
    return LeadResult::success(all);
  }
  // "leadCancel": answer()'s failures fail it; otherwise every id is unknown unless the test set
  // answer_cancel_lead().
  void answer_cancel_lead(common::protocol::LeadCancelAnswer answer) {
    std::lock_guard lock(mutex_);
    cancel_answer_ = std::move(answer);
  }
  LeadCancelResult cancel_lead(const std::string& address, const std::string& access_token,
                               const common::protocol::LeadCancelParam& param) override {
    Call c{"leadCancel", address, access_token, 0, {}, {}, {}, param};
    const Result plain = answer_for(c);
    if (!plain.is_success()) return LeadCancelResult::fail(plain.msg, plain.code);
    std::lock_guard lock(mutex_);
    if (cancel_answer_) return LeadCancelResult::success(*cancel_answer_);
    common::protocol::LeadCancelAnswer none;
    none.unknown = param.log_ids;
    return LeadCancelResult::success(none);
  }

  // XXL-JOB's /log answer for a run the executor does not know.
  static LogAnswer no_such_log() {
    common::protocol::LogResult result;
    result.from_line_num = 1;
    result.to_line_num = 0;
    result.log_content = "readLog fail, logFile not exists";
    result.is_end = true;
    return LogAnswer::success(result);
  }

 private:
  std::function<std::optional<Result>(const Call&)> record(const Call& c) {
    std::lock_guard lock(mutex_);
    calls_.push_back(c);
    return hook_;
  }
  Result answer_for(const Call& c) {
    auto hook = record(c);
    if (hook) {
      if (auto answer = hook(c)) return *answer;
    }
    std::lock_guard lock(mutex_);
    auto it = answers_.find({c.kind, c.address});
    return it != answers_.end() ? it->second : Result::success();
  }

  mutable std::mutex mutex_;
  std::vector<Call> calls_;
  std::map<std::pair<std::string, std::string>, Result> answers_;
  std::map<std::string, LogAnswer> log_answers_;
  std::function<std::optional<Result>(const Call&)> hook_;
  std::function<std::optional<LeadResult>(const Call&)> lead_hook_;
  std::optional<common::protocol::LeadCancelAnswer> cancel_answer_;
};

}  // namespace cronwheel::testing
