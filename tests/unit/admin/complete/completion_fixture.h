#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "admin/complete/completion.h"
#include "admin/model/fire.h"
#include "admin/model/records.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_completion_store.h"
#include "tests/support/fake_registry_store.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {

// Completion over the fakes, with a group, a clock under the test's control and helpers to
// create jobs and runs in the states the scheduling core leaves them in.
class CompletionFixture : public ::testing::Test {
 protected:
  static constexpr const char* kNode = "node-a";
  static constexpr const char* kExecutor = "http://127.0.0.1:9999/";

  CompletionFixture() {
    Group g;
    g.app_name = "demo-app";
    g.title = "Demo";
    group_ = stores_.groups().create(g, system_).id;
  }

  Job make_job(const std::string& desc, std::vector<std::int64_t> children = {}) {
    Job j;
    j.job_group = group_;
    j.job_desc = desc;
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = "0 * * * * ?";
    j.executor_handler = desc + "-handler";
    j.executor_param = desc + "-param";
    j.child_job_ids = std::move(children);
    return stores_.jobs().create(j, system_);
  }

  Job make_fix_delay_job(int delay_seconds, int trigger_status, std::int64_t next_time) {
    Job j;
    j.job_group = group_;
    j.job_desc = "fix-delay";
    j.schedule_type = ScheduleType::kFixDelay;
    j.schedule_conf = std::to_string(delay_seconds);
    j.executor_handler = "h";
    j.trigger_status = trigger_status;
    j.trigger_next_time = next_time;
    return stores_.jobs().create(j, system_);
  }

  Job update(Job job) { return stores_.jobs().update(job, system_); }

  // A run the executor accepted: `triggered`, sent at `trigger_time` (now by default).
  JobLog make_run(const Job& job, FireState state = FireState::kTriggered, int retries = 0,
                  std::optional<std::int64_t> trigger_time = std::nullopt, int trigger_code = 200) {
    JobLog l;
    l.job_group = job.job_group;
    l.job_id = job.id;
    l.state = state;
    l.trigger_type = TriggerType::kSchedule;
    l.scheduled_time = clock_.now_ms() + runs_made_++;  // scheduled fires are unique per time
    l.admin_node = "node-b";
    l.executor_address = kExecutor;
    l.executor_handler = job.executor_handler;
    l.executor_param = "run-param";
    l.executor_fail_retry_count = retries;
    if (l.state != FireState::kPending && l.state != FireState::kCancelled) {
      l.trigger_time = trigger_time.value_or(clock_.now_ms());
      l.trigger_code = trigger_code;
    }
    return stores_.put_log(l);
  }

  static common::protocol::HandleCallbackParam callback(std::int64_t log_id, int code, std::string msg = "") {
    common::protocol::HandleCallbackParam c;
    c.log_id = log_id;
    c.log_date_time = 1;
    c.handle_code = code;
    c.handle_msg = std::move(msg);
    return c;
  }

  JobLog log(std::int64_t id) { return *stores_.logs().get(id); }
  Job job(std::int64_t id) { return *stores_.jobs().get(id); }

  // Every run of `job_id`, oldest id first.
  std::vector<JobLog> runs_of(std::int64_t job_id) {
    LogStore::Filter f;
    f.job_id = job_id;
    f.page.limit = 1000;
    auto items = stores_.logs().list(f).items;
    std::sort(items.begin(), items.end(), [](const JobLog& a, const JobLog& b) { return a.id < b.id; });
    return items;
  }

  Actor system_{std::nullopt, "system", ""};
  testing::FakeClock clock_;
  testing::FakeStores stores_{clock_};
  testing::FakeRegistryStore registry_{stores_, clock_};
  testing::FakeCompletionStore store_{stores_, registry_};
  std::atomic<int> next_time_set_{0};  // calls of Completion::Options::next_time_set
  FinishedRuns finished_;              // Completion::Options::finished_runs
  Completion completion_{store_, clock_, Completion::Options{kNode,
                                                     [this] { ++next_time_set_; }, &finished_}};
  std::int64_t group_ = 0;
  std::int64_t runs_made_ = 0;
};

}  // namespace cronwheel::admin
