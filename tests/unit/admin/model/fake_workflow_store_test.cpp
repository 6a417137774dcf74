// FakeWorkflowStore under the contract suite PgWorkflowStore also passes
// (tests/integration/workflow_contract_pgtest.cpp).

#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"
#include "tests/support/fake_workflow_store.h"
#include "tests/support/workflow_contract_tests.h"

namespace cronwheel::testing {
namespace {

class FakeWorkflowFixture {
 public:
  FakeWorkflowFixture() : stores_(clock_), store_(stores_.jobs(), clock_) {
    clock_.set_wall_ms(workflow_contract::kNow);
    admin::Group g;
    g.app_name = "wf-fake";
    g.title = "workflows";
    group_ = stores_.groups().create(g, workflow_contract::kAuthor).id;
  }
  admin::WorkflowStore& workflows() { return store_; }
  std::int64_t group() const { return group_; }
  std::int64_t job(const std::string& name) {
    admin::Job j;
    j.job_group = group_;
    j.name = name;
    j.job_desc = name;
    j.executor_handler = "echo";
    return stores_.jobs().create(j, workflow_contract::kAuthor).id;
  }
  void sent(std::int64_t log_id) { store_.sent(log_id); }
  std::vector<admin::JobLog> end(std::int64_t log_id, bool ok, const std::string& message,
                                 std::optional<std::string> output, std::int64_t now) {
    return store_.end_node_run(log_id, ok, message, std::move(output), now, "node-a");
  }
  std::optional<admin::JobLog> node_run(std::int64_t log_id) { return store_.node_run(log_id); }
  std::int64_t calendar(const std::string& name) { return stores_.put_calendar(name); }

 private:
  FakeClock clock_;
  FakeStores stores_;
  FakeWorkflowStore store_;
  std::int64_t group_ = 0;
};

}  // namespace

namespace workflow_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, WorkflowContract, FakeWorkflowFixture);
}  // namespace workflow_contract

}  // namespace cronwheel::testing
