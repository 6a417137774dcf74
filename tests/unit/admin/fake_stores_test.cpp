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

 private:
  FakeClock clock_;
  FakeStores stores_;
};

}  // namespace

namespace store_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, StoreContract, FakeStoreFixture);
}  // namespace store_contract

}  // namespace cronwheel::testing
