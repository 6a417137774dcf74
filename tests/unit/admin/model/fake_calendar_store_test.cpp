// FakeCalendarStore under the contract suite PgCalendarStore also passes
// (tests/integration/calendar_contract_pgtest.cpp).

#include <gtest/gtest.h>

#include "tests/support/calendar_contract_tests.h"
#include "tests/support/fake_calendar_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"
#include "tests/support/fake_workflow_store.h"

namespace cronwheel::testing {
namespace {

class FakeCalendarFixture {
 public:
  FakeCalendarFixture() : stores_(clock_), workflows_(stores_.jobs(), clock_), calendars_(stores_, &workflows_) {
    clock_.set_wall_ms(calendar_contract::kNow);
  }
  admin::CalendarStore& calendars() { return calendars_; }
  admin::Stores stores() { return stores_.stores(); }
  admin::WorkflowStore& workflows() { return workflows_; }
  FakeClock& clock() { return clock_; }

 private:
  FakeClock clock_;
  FakeStores stores_;
  FakeWorkflowStore workflows_;
  FakeCalendarStore calendars_;
};

}  // namespace

namespace calendar_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, CalendarContract, FakeCalendarFixture);
}  // namespace calendar_contract

}  // namespace cronwheel::testing
