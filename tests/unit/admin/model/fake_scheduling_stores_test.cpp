#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/fake_clock.h"
#include "tests/support/fake_completion_store.h"
#include "tests/support/fake_registry_store.h"
#include "tests/support/fake_schedule_store.h"
#include "tests/support/fake_stores.h"
#include "tests/support/fake_trigger_store.h"
#include "tests/support/scheduling_contract_tests.h"

namespace cronwheel::testing {
namespace {

using scheduling_contract::Port;

// The scheduling ports' fakes under the contract suite. Each fake keeps rows of its own: a group,
// job or log put in goes to all three under the same id, and each port's view is read from its
// own fake.
class FakeSchedulingFixture {
 public:
  FakeSchedulingFixture() : stores_(clock_), registry_(stores_, clock_), completion_(stores_, registry_) {}

  admin::ScheduleStore& schedule() { return schedule_; }
  admin::TriggerStore& trigger() { return trigger_; }
  admin::CompletionStore& completion() { return completion_; }

  admin::Group put_group(admin::Group group) {
    group.id = next_group_++;
    trigger_.put_group(group);
    schedule_.set_group_token(group.id, group.access_token);
    stores_.with_state([&](fake_stores_detail::State& s) {
      s.groups[group.id] = group;
      s.next_group = std::max(s.next_group, group.id + 1);
    });
    return group;
  }
  admin::Job put_job(admin::Job job) {
    job.id = next_job_++;
    schedule_.put_job(job);
    trigger_.put_job(job);
    stores_.with_state([&](fake_stores_detail::State& s) {
      s.jobs[job.id] = job;
      s.next_job = std::max(s.next_job, job.id + 1);
    });
    return job;
  }
  admin::JobLog put_log(admin::JobLog log) {
    log.id = next_log_++;
    log.job_group = schedule_.job(log.job_id).job_group;
    schedule_.put_log(log);
    trigger_.put_log(log);
    stores_.with_state([&](fake_stores_detail::State& s) {
      s.logs[log.id] = log;
      s.next_log = std::max(s.next_log, log.id + 1);
    });
    return log;
  }

  admin::JobLog log(Port port, std::int64_t id) {
    switch (port) {
      case Port::kSchedule:
        return schedule_.log(id);
      case Port::kTrigger:
        return trigger_.log(id).value();
      case Port::kCompletion:
        break;
    }
    return stores_.with_state([&](fake_stores_detail::State& s) { return s.logs.at(id); });
  }
  std::vector<admin::JobLog> logs(Port port) {
    switch (port) {
      case Port::kSchedule:
        return schedule_.logs();
      case Port::kTrigger:
        return trigger_.logs();
      case Port::kCompletion:
        break;
    }
    return stores_.with_state([&](fake_stores_detail::State& s) {
      std::vector<admin::JobLog> out;
      for (const auto& [id, l] : s.logs) out.push_back(l);
      return out;
    });
  }
  admin::Job job(Port port, std::int64_t id) {
    switch (port) {
      case Port::kSchedule:
        return schedule_.job(id);
      case Port::kTrigger:
        return trigger_.job(id).value();
      case Port::kCompletion:
        break;
    }
    return stores_.with_state([&](fake_stores_detail::State& s) { return s.jobs.at(id); });
  }

  // The registry's wall clock is stepped back by `age_ms` for the registration, then set again.
  void put_registration(const std::string& address, std::int64_t age_ms) {
    const std::int64_t now = clock_.now_ms();
    clock_.set_wall_ms(now - age_ms);
    registry_.upsert("EXECUTOR", "contract-app", address);
    clock_.set_wall_ms(now);
  }
  void put_lease(const std::string& node, std::int64_t left_ms) { trigger_.set_lease_left(node, left_ms); }

 private:
  FakeClock clock_;
  FakeStores stores_;
  FakeRegistryStore registry_;
  FakeCompletionStore completion_;
  FakeScheduleStore schedule_;
  FakeTriggerStore trigger_;
  std::int64_t next_group_ = 1, next_job_ = 1, next_log_ = 1;
};

}  // namespace

namespace scheduling_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, SchedulingContract, FakeSchedulingFixture);
}  // namespace scheduling_contract

}  // namespace cronwheel::testing
