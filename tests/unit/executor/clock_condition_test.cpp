// ClockCondition on a fake clock: waits end on a notification whose change they see, or when the
// clock reaches their deadline, and at no other time.
#include "executor/src/clock_condition.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>

#include "tests/support/fake_clock.h"
#include "tests/unit/executor/job_test_support.h"

namespace cronwheel::executor {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

// A flag behind a mutex, and one waiter on it through a ClockCondition.
struct Flag {
  explicit Flag(FakeClock& fake) : clock(fake), changed(fake) {}

  // Waits on another thread until the flag is set or `timeout` on the clock has passed.
  std::future<bool> wait_async(std::chrono::nanoseconds timeout) {
    const auto deadline = clock.steady_now() + timeout;
    return std::async(std::launch::async, [this, deadline] {
      std::unique_lock lock(mutex);
      return changed.wait_until(lock, deadline, [this] { return set; });
    });
  }
  void notify(bool value) {
    {
      std::lock_guard lock(mutex);
      set = value;
    }
    changed.notify_all();
  }

  FakeClock& clock;
  std::mutex mutex;
  bool set = false;
  ClockCondition changed;
};

TEST(ClockConditionTest, ANotificationWhoseChangeTheWaiterSeesEndsTheWaitWithoutTimePassing) {
  FakeClock clock;
  Flag flag(clock);
  auto woken = flag.wait_async(1h);
  clock.wait_for_sleepers(1);
  flag.notify(true);
  ASSERT_EQ(woken.wait_for(test::kBound), std::future_status::ready);
  EXPECT_TRUE(woken.get());
}

TEST(ClockConditionTest, ANotificationWithoutTheChangeLeavesTheWaiterWaiting) {
  FakeClock clock;
  Flag flag(clock);
  auto woken = flag.wait_async(1h);
  clock.wait_for_sleepers(1);
  flag.notify(false);
  clock.wait_for_sleepers(1);  // woken, saw nothing, and asleep again
  EXPECT_EQ(woken.wait_for(0ms), std::future_status::timeout);
  flag.notify(true);
  EXPECT_TRUE(woken.get());
}

TEST(ClockConditionTest, TheClockReachingTheDeadlineEndsTheWaitWithFalse) {
  FakeClock clock;
  Flag flag(clock);
  auto woken = flag.wait_async(10s);
  clock.wait_for_sleepers(1);
  clock.advance(10s - 1ns);
  EXPECT_EQ(woken.wait_for(0ms), std::future_status::timeout) << "a nanosecond early";
  clock.advance(1ns);
  ASSERT_EQ(woken.wait_for(test::kBound), std::future_status::ready);
  EXPECT_FALSE(woken.get());
}

// A clock that must not be read: the wait below has nothing to wait for.
class UnreadableClock final : public common::Clock {
 public:
  std::int64_t now_ms() const override {
    ADD_FAILURE() << "now_ms() read";
    return 0;
  }
  SteadyTime steady_now() const override {
    ADD_FAILURE() << "steady_now() read";
    return {};
  }
  bool sleep_until(SteadyTime, std::stop_token) override {
    ADD_FAILURE() << "slept";
    return true;
  }
};

TEST(ClockConditionTest, AConditionThatHoldsAlreadyReturnsWithoutReadingTheClock) {
  UnreadableClock clock;
  ClockCondition changed(clock);
  std::mutex mutex;
  std::unique_lock lock(mutex);
  EXPECT_TRUE(changed.wait_until(lock, common::Clock::SteadyTime{}, [] { return true; }));
  EXPECT_TRUE(lock.owns_lock());
  changed.notify_all();  // nobody waits: nothing happens
}

}  // namespace
}  // namespace cronwheel::executor
