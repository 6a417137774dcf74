#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"
#include "tests/support/store_contract_tests.h"

namespace cronwheel::testing {
namespace {

// The in-memory stores under the stores' contract suite.
class FakeStoreFixture {
 public:
  FakeStoreFixture() : stores_(clock_) {}
  admin::Stores stores() { return stores_.stores(); }
  FakeClock& clock() { return clock_; }
  admin::JobLog put_log(admin::JobLog log) { return stores_.put_log(std::move(log)); }
  void put_node(admin::AdminNode node, bool alive) {
    node.lease_until = alive ? clock_.now_ms() + 3'600'000 : node.heartbeat_at;
    stores_.put_node(node);
  }
  void put_registration(const std::string& app, const std::string& address, std::int64_t age_ms,
                        const std::vector<std::string>& handlers = {},
                        std::optional<admin::ClockEstimate> clock = std::nullopt) {
    stores_.put_registration({0, "EXECUTOR", app, address, clock_.now_ms() - age_ms, handlers, clock});
  }
  void put_last_scan(const admin::ScanMark& mark) { stores_.put_last_scan(mark); }
  std::int64_t put_calendar(const std::string& name) { return stores_.put_calendar(name); }

 private:
  FakeClock clock_;
  FakeStores stores_;
};

}  // namespace

namespace store_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, StoreContract, FakeStoreFixture);
}  // namespace store_contract

}  // namespace cronwheel::testing
