#include <gtest/gtest.h>

#include "tests/support/alarm_contract_tests.h"
#include "tests/support/fake_alarm_store.h"

namespace cronwheel::testing {
namespace {

// FakeAlarmStore under the contract suite PgAlarmStore also passes.
class FakeAlarmFixture {
 public:
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

 private:
  FakeAlarmStore store_;
};

}  // namespace

namespace alarm_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, AlarmContract, FakeAlarmFixture);
}  // namespace alarm_contract

}  // namespace cronwheel::testing
