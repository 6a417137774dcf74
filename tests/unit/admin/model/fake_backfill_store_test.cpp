// FakeBackfillStore under the contract suite PgBackfillStore also passes
// (tests/integration/backfill_contract_pgtest.cpp).

#include <gtest/gtest.h>

#include "tests/support/backfill_contract_tests.h"
#include "tests/support/fake_backfill_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"
#include "tests/support/fake_workflow_store.h"

namespace cronwheel::testing {
namespace {

class FakeBackfillFixture {
 public:
  FakeBackfillFixture() : stores_(clock_), workflows_(stores_.jobs(), clock_), backfills_(stores_, &workflows_) {
    clock_.set_wall_ms(backfill_contract::kNow);
    admin::Group g;
    g.app_name = "backfill-fake";
    g.title = "backfills";
    group_ = stores_.groups().create(g, backfill_contract::kOperator).id;
  }
  admin::BackfillStore& backfills() { return backfills_; }
  admin::Stores stores() { return stores_.stores(); }
  admin::WorkflowStore& workflows() { return workflows_; }
  std::int64_t group() const { return group_; }
  admin::JobLog put_run(admin::JobLog run) {
    if (run.state != admin::FireState::kPending && run.state != admin::FireState::kCancelled) {
      run.trigger_time = clock_.now_ms();
    }
    return stores_.put_log(std::move(run));
  }
  void move(std::int64_t log_id, admin::FireState state) {
    stores_.with_state([&](fake_stores_detail::State& s) {
      auto& run = s.logs.at(log_id);
      run.state = state;
      if (!run.trigger_time && state != admin::FireState::kPending && state != admin::FireState::kCancelled) {
        run.trigger_time = s.now();
      }
    });
  }

 private:
  FakeClock clock_;
  FakeStores stores_;
  FakeWorkflowStore workflows_;
  FakeBackfillStore backfills_;
  std::int64_t group_ = 0;
};

}  // namespace

namespace backfill_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, BackfillContract, FakeBackfillFixture);
}  // namespace backfill_contract

}  // namespace cronwheel::testing
