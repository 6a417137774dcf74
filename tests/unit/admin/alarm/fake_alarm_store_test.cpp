#include <gtest/gtest.h>

#include "tests/support/alarm_contract_tests.h"
#include "tests/support/fake_alarm_store.h"

namespace cronwheel::testing {
namespace {

// FakeAlarmStore under the contract suite PgAlarmStore also passes.
class FakeAlarmFixture {
 public:
  FakeAlarmFixture() { store_.name_group(1, "alarm-app"); }
  admin::AlarmStore& alarms() { return store_; }
  admin::AlarmChannelStore& channels() { return store_; }
  void remove_job(std::int64_t id) { store_.remove_job(id); }
  admin::Job put_job(admin::Job job) {
    job.job_group = 1;
    return store_.put_job(std::move(job));
  }
  admin::JobLog put_log(admin::JobLog log) { return store_.put_log(std::move(log)); }
  int alarm_status(std::int64_t run_id) { return store_.alarm_status(run_id); }
  void set_alarm(std::int64_t run_id, int status, std::int64_t alarm_time) {
    store_.set_alarm(run_id, status, alarm_time);
  }
  std::int64_t put_registration(std::string app_name, std::string address, std::optional<std::int64_t> offset_ms,
                                std::int64_t delay_ms) {
    return store_.put_registration(std::move(app_name), std::move(address), offset_ms, delay_ms);
  }
  void set_clock_offset(std::int64_t id, std::optional<std::int64_t> offset_ms) { store_.set_clock_offset(id, offset_ms); }
  int clock_alarm_status(std::int64_t id) { return store_.clock_alarm_status(id); }

 private:
  FakeAlarmStore store_;
};

}  // namespace

namespace alarm_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, AlarmContract, FakeAlarmFixture);
}  // namespace alarm_contract

}  // namespace cronwheel::testing
