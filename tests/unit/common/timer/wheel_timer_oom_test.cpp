// The wheels when a bucket array cannot grow: the timeout waits in the backlog and is placed at
// a later step, never lost and never early. Allocation failures are injected by replacing the
// global operator new for this binary; the injection is off unless a test turns it on, and
// then only on the test's own thread.

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "common/timer/hashed_wheel_timer.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace {

thread_local bool t_fail_allocations = false;

}  // namespace

// The plain and nothrow forms and every delete that pairs with them, all on malloc (so that a
// sanitizer's own operators never see memory from the other family).
void* operator new(std::size_t size) {
  if (t_fail_allocations) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (t_fail_allocations) return nullptr;
  return std::malloc(size == 0 ? 1 : size);
}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace cronwheel::timer_test {
namespace {

// Makes every plain operator new on this thread throw while it lives.
class FailAllocations {
 public:
  FailAllocations() { t_fail_allocations = true; }
  ~FailAllocations() { t_fail_allocations = false; }
  FailAllocations(const FailAllocations&) = delete;
  FailAllocations& operator=(const FailAllocations&) = delete;
};

TEST(HashedWheelTimerOutOfMemory, TimeoutWhoseBucketCannotGrowIsPlacedLater) {
  testing::FakeClock clock;
  FireLog log(clock);
  common::HashedWheelTimer timer(clock, {.tick = 100ms}, {.manual = true});
  auto handle = timer.schedule(log.task(1), 250ms);
  clock.advance(100ms);
  {
    // Its bucket is empty and has no array yet: placing it needs memory.
    FailAllocations failing;
    EXPECT_EQ(timer.process_until(clock.steady_now()), 0u);
  }
  EXPECT_EQ(timer.pending_timeouts(), 1u);
  EXPECT_EQ(handle.state(), common::TimeoutState::kPending);
  clock.advance(200ms);
  EXPECT_EQ(timer.process_until(clock.steady_now()), 1u);
  EXPECT_EQ(log.ids(), std::vector<int>{1});
  EXPECT_EQ(log.events()[0].at, common::Clock::SteadyTime{} + 300ms);
}

TEST(HashedWheelTimerOutOfMemory, LateTimeoutWaitsInTheBacklogAndStopStillReturnsIt) {
  testing::FakeClock clock;
  common::HashedWheelTimer timer(clock, {.tick = 100ms}, {.manual = true});
  auto handle = timer.schedule([] {}, 50ms);
  clock.advance(1s);
  {
    FailAllocations failing;
    EXPECT_EQ(timer.process_until(clock.steady_now()), 0u);  // due, but could not be placed
  }
  std::vector<common::TimerHandle> unprocessed = timer.stop();
  ASSERT_EQ(unprocessed.size(), 1u);
  EXPECT_EQ(unprocessed[0].deadline(), handle.deadline());
  EXPECT_EQ(handle.cancel(), common::CancelResult::kCancelled);
}

TEST(HierarchicalWheelTimerOutOfMemory, TimeoutsWhoseBucketCannotGrowArePlacedLaterInOrder) {
  testing::FakeClock clock;
  FireLog log(clock);
  common::HierarchicalWheelTimer timer(clock, {.tick = 100ms, .wheel_size = 8}, {.manual = true});
  timer.schedule(log.task(1), 250ms);
  timer.schedule(log.task(2), 250ms);
  {
    // Their bucket is empty and has no array yet: placing the first needs memory, and the
    // second waits behind it.
    FailAllocations failing;
    EXPECT_EQ(timer.process_until(clock.steady_now()), 0u);
  }
  EXPECT_EQ(timer.pending_timeouts(), 2u);
  clock.advance(200ms);
  EXPECT_EQ(timer.process_until(clock.steady_now()), 0u);  // placed now, due at 300 ms
  clock.advance(100ms);
  EXPECT_EQ(timer.process_until(clock.steady_now()), 2u);
  EXPECT_EQ(log.ids(), (std::vector<int>{1, 2}));
  EXPECT_EQ(log.events()[0].at, common::Clock::SteadyTime{} + 300ms);
}

}  // namespace
}  // namespace cronwheel::timer_test
