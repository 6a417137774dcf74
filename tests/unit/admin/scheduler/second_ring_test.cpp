// The second ring on a FakeClock: fires go out at their second and never before, a late tick
// catches up every missed second, nothing is lost or doubled.

#include <gtest/gtest.h>

#include <array>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "admin/scheduler/second_ring.h"
#include "tests/support/fake_clock.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

constexpr std::int64_t kStart = 1'700'000'000'000;  // on a second boundary

// What the ring handed on, one batch per wake-up.
class Recorder {
 public:
  SecondRing::HandOff hand_off() {
    return [this](std::vector<PendingFire> fires, std::int64_t due_ms) {
      {
        std::lock_guard lock(mutex_);
        batches_.push_back(std::move(fires));
        due_.push_back(due_ms);
      }
      changed_.notify_all();
    };
  }
  // The instant each batch was handed on for.
  std::vector<std::int64_t> due() const {
    std::lock_guard lock(mutex_);
    return due_;
  }
  std::vector<std::vector<PendingFire>> batches() const {
    std::lock_guard lock(mutex_);
    return batches_;
  }
  // Waits (for real time, bounded: a safety net) until `count` fires were handed on.
  bool wait_for_ids(std::size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 10s, [&] {
      std::size_t n = 0;
      for (const auto& b : batches_) n += b.size();
      return n >= count;
    });
  }
  std::vector<std::int64_t> ids() const {
    std::lock_guard lock(mutex_);
    std::vector<std::int64_t> out;
    for (const auto& b : batches_) {
      for (const auto& f : b) out.push_back(f.log_id);
    }
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<PendingFire>> batches_;
  std::vector<std::int64_t> due_;
};

PendingFire fire(std::int64_t id, std::int64_t at) { return {id, 100 + id, at}; }

class SecondRingTest : public ::testing::Test {
 protected:
  // Starts the ring and waits until it has processed the current second and sleeps.
  void start() {
    ring_.start();
    clock_.wait_for_sleepers(1);
  }
  // Moves time and waits until the ring has reacted and sleeps again.
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    clock_.wait_for_sleepers(1);
  }

  FakeClock clock_{kStart};
  Recorder handed_;
  SecondRing ring_{clock_, handed_.hand_off()};
};

TEST_F(SecondRingTest, AFireAlreadyDueIsHandedOnAtOnceNotAtTheComingSecond) {
  start();
  advance(300ms);  // the ring sleeps until kStart + 1000
  ASSERT_TRUE(ring_.push_due_now(fire(1, kStart + 250)));
  ASSERT_TRUE(handed_.wait_for_ids(1));
  EXPECT_EQ(handed_.ids(), std::vector<std::int64_t>{1});
  EXPECT_EQ(handed_.due(), std::vector<std::int64_t>{kStart + 300}) << "due now: no time passed";
  EXPECT_FALSE(ring_.push_due_now(fire(1, kStart + 250))) << "handed on and not finished";
  EXPECT_FALSE(ring_.push(fire(1, kStart + 250)));
  EXPECT_EQ(ring_.held(), 0u);
}

TEST_F(SecondRingTest, AFireNotYetDueWaitsForItsSecondEvenWhenPushedAsDueNow) {
  start();
  ASSERT_TRUE(ring_.push_due_now(fire(2, kStart + 1500)));
  advance(1000ms);
  EXPECT_TRUE(handed_.ids().empty());
  advance(1000ms);
  EXPECT_EQ(handed_.ids(), std::vector<std::int64_t>{2});
  EXPECT_EQ(handed_.due(), std::vector<std::int64_t>{kStart + 2000});
}

TEST_F(SecondRingTest, StopAnswersTheDueNowFiresNotYetHandedOn) {
  // Before start: nothing runs the ring, so the fire is still held.
  ASSERT_TRUE(ring_.push_due_now(fire(3, kStart)));
  EXPECT_EQ(ring_.held(), 1u);
  auto left = ring_.stop();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].log_id, 3);
  EXPECT_EQ(ring_.known(), 0u);
}

TEST_F(SecondRingTest, FireGoesOutAtItsSecondAndNotBefore) {
  ASSERT_TRUE(ring_.push(fire(1, kStart + 2000)));
  start();
  advance(1000ms);
  EXPECT_TRUE(handed_.ids().empty());
  advance(999ms);
  EXPECT_TRUE(handed_.ids().empty());
  advance(1ms);
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(ring_.held(), 0u);
}

TEST_F(SecondRingTest, FireBetweenTwoSecondsGoesOutAtTheNextBoundaryNeverEarly) {
  ASSERT_TRUE(ring_.push(fire(1, kStart + 1400)));
  start();
  advance(1000ms);
  EXPECT_TRUE(handed_.ids().empty());
  advance(1000ms);
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1}));
}

TEST_F(SecondRingTest, FiresAlreadyDueAtStartGoOutAtOnce) {
  ASSERT_TRUE(ring_.push(fire(1, kStart - 3000)));
  ASSERT_TRUE(ring_.push(fire(2, kStart)));
  start();
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1, 2}));
}

TEST_F(SecondRingTest, LateTickCatchesUpEveryMissedSecondInDueOrderInOneBatch) {
  start();
  for (std::int64_t i = 4; i >= 1; --i) ASSERT_TRUE(ring_.push(fire(i, kStart + i * 1000)));
  advance(3500ms);
  auto batches = handed_.batches();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], (std::vector<PendingFire>{fire(1, kStart + 1000), fire(2, kStart + 2000),
                                                  fire(3, kStart + 3000)}));
  advance(500ms);
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1, 2, 3, 4}));
}

TEST_F(SecondRingTest, FirePushedForASecondAlreadyPastGoesOutAtTheNextTick) {
  start();
  advance(2000ms);
  ASSERT_TRUE(ring_.push(fire(1, kStart + 1000)));  // that second was processed already
  EXPECT_TRUE(handed_.ids().empty());
  advance(1000ms);
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1}));
}

TEST_F(SecondRingTest, FireIsHeldOnceAndHandedOnOnceUntilThePoolsFinishIt) {
  start();
  EXPECT_TRUE(ring_.push(fire(1, kStart + 1000)));
  EXPECT_FALSE(ring_.push(fire(1, kStart + 1000)));
  EXPECT_FALSE(ring_.push(fire(1, kStart + 2000)));  // the same log id, whatever its time
  advance(1000ms);
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1}));
  EXPECT_FALSE(ring_.push(fire(1, kStart + 1000)));  // handed on, not finished
  EXPECT_EQ(ring_.known(), 1u);
  ring_.finished(1);
  EXPECT_EQ(ring_.known(), 0u);
  EXPECT_TRUE(ring_.push(fire(1, kStart + 1000)));  // e.g. left pending: the feeder brings it back
  advance(1000ms);
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1, 1}));
}

TEST_F(SecondRingTest, FireAMinuteAheadWaitsForItsOwnLapOfTheRing) {
  start();
  ASSERT_TRUE(ring_.push(fire(1, kStart + 61'000)));  // the same slot as kStart + 1 s
  advance(1000ms);
  EXPECT_TRUE(handed_.ids().empty());
  advance(59'000ms);
  EXPECT_TRUE(handed_.ids().empty());
  advance(1000ms);
  EXPECT_EQ(handed_.ids(), (std::vector<std::int64_t>{1}));
}

TEST_F(SecondRingTest, StallLongerThanTheRingHandsOnEveryDueFireOnce) {
  start();
  std::vector<std::int64_t> expected;
  for (std::int64_t i = 1; i <= 90; ++i) {
    ASSERT_TRUE(ring_.push(fire(i, kStart + i * 1000)));
    if (i <= 75) expected.push_back(i);
  }
  advance(75'000ms);
  EXPECT_EQ(handed_.ids(), expected);
  EXPECT_EQ(ring_.held(), 15u);
  advance(15'000ms);
  EXPECT_EQ(handed_.ids().size(), 90u);
  EXPECT_EQ(ring_.held(), 0u);
}

TEST_F(SecondRingTest, StopAnswersTheFiresNeverHandedOnAndRefusesMore) {
  start();
  ASSERT_TRUE(ring_.push(fire(2, kStart + 5000)));
  ASSERT_TRUE(ring_.push(fire(1, kStart + 3000)));
  auto left = ring_.stop();
  EXPECT_EQ(left, (std::vector<PendingFire>{fire(1, kStart + 3000), fire(2, kStart + 5000)}));
  EXPECT_FALSE(ring_.push(fire(3, kStart + 1000)));
  EXPECT_TRUE(ring_.stop().empty());
  EXPECT_TRUE(handed_.ids().empty());
}

// With a lead the ring hands a second's fires on that long before the second, saying which
// second they are due at, and never earlier.
TEST(SecondRing, WithALeadHandsEachSecondOnThatMuchAheadOfIt) {
  FakeClock clock(kStart);
  Recorder handed;
  SecondRing ring(clock, handed.hand_off(), 300ms);
  ASSERT_TRUE(ring.push(fire(1, kStart + 2000)));
  ASSERT_TRUE(ring.push(fire(2, kStart + 1500)));  // belongs to the second at kStart + 2000
  ASSERT_TRUE(ring.push(fire(3, kStart + 3000)));
  ring.start();
  clock.wait_for_sleepers(1);
  clock.advance(1699ms);  // kStart + 1699: the ring woke at kStart + 700, nothing of second 2 yet
  clock.wait_for_sleepers(1);
  EXPECT_TRUE(handed.ids().empty());
  clock.advance(1ms);  // kStart + 1700: 300 ms before kStart + 2000
  clock.wait_for_sleepers(1);
  EXPECT_EQ(handed.ids(), (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(handed.due(), (std::vector<std::int64_t>{kStart + 2000}));
  clock.advance(1000ms);  // kStart + 2700
  clock.wait_for_sleepers(1);
  EXPECT_EQ(handed.ids(), (std::vector<std::int64_t>{2, 1, 3}));
  EXPECT_EQ(handed.due(), (std::vector<std::int64_t>{kStart + 2000, kStart + 3000}));
  ring.stop();
}

// The watch (LoadShedder's signal): each wake-up's hand-off says how many fires it handed on,
// the first second it covered and when it ended, so a wake-up that came late shows how late;
// fires pushed due now are not the ring's seconds and are not told.
TEST(SecondRing, TheWatchIsToldHowLateEachSecondWasHandedOn) {
  FakeClock clock(kStart);
  Recorder handed;
  SecondRing ring(clock, handed.hand_off());
  std::mutex mutex;
  std::vector<std::array<std::int64_t, 3>> told;  // fires, due, done
  ring.watch([&](std::size_t fires, std::int64_t due_ms, std::int64_t done_ms) {
    std::lock_guard lock(mutex);
    told.push_back({static_cast<std::int64_t>(fires), due_ms, done_ms});
  });
  for (std::int64_t i = 1; i <= 3; ++i) ASSERT_TRUE(ring.push(fire(i, kStart + i * 1000)));
  ring.start();
  clock.wait_for_sleepers(1);
  clock.advance(1000ms);  // on time: second 1 at its boundary
  clock.wait_for_sleepers(1);
  clock.advance(3500ms);  // a late wake-up: seconds 2 to 4 at kStart + 4500
  clock.wait_for_sleepers(1);
  ASSERT_TRUE(ring.push_due_now(fire(4, kStart + 4000)));
  ASSERT_TRUE(handed.wait_for_ids(4));
  clock.wait_for_sleepers(1);
  ring.stop();
  std::lock_guard lock(mutex);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0], (std::array<std::int64_t, 3>{1, kStart + 1000, kStart + 1000}));
  EXPECT_EQ(told[1], (std::array<std::int64_t, 3>{2, kStart + 2000, kStart + 4500}));
}

// What the ring offered ahead, one list per offer; takes the fires of even ids, answers the rest.
class Offers {
 public:
  SecondRing::Offer offer() {
    return [this](const std::vector<PendingFire>& fires) {
      std::vector<PendingFire> left;
      for (const auto& f : fires) {
        if (f.log_id % 2 != 0) left.push_back(f);
      }
      std::lock_guard lock(mutex_);
      offers_.push_back(ids(fires));
      return left;
    };
  }
  std::vector<std::vector<std::int64_t>> offers() const {
    std::lock_guard lock(mutex_);
    return offers_;
  }
  static std::vector<std::int64_t> ids(const std::vector<PendingFire>& fires) {
    std::vector<std::int64_t> out;
    for (const auto& f : fires) out.push_back(f.log_id);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::vector<std::int64_t>> offers_;
};

// Handing over ahead: the fires within the horizon are offered in chunks, in due order, right
// after a wake-up's hand-off; what the offer takes is not handed on at its second, what it answers
// is, and is not offered again; fires beyond the horizon wait until it reaches them.
TEST(SecondRing, OffersFiresWithinTheHorizonAheadInChunksAndHandsOnWhatWasLeft) {
  FakeClock clock(kStart);
  Recorder handed;
  Offers offers;
  SecondRing ring(clock, handed.hand_off(), 300ms, {offers.offer(), 3000ms, 2});
  ASSERT_TRUE(ring.push(fire(1, kStart + 2000)));
  ASSERT_TRUE(ring.push(fire(2, kStart + 1000)));
  ASSERT_TRUE(ring.push(fire(3, kStart + 3000)));
  ASSERT_TRUE(ring.push(fire(4, kStart + 5000)));  // beyond the horizon for now
  ASSERT_TRUE(ring.push(fire(5, kStart + 1500)));  // of the second at kStart + 2000
  ring.start();
  clock.wait_for_sleepers(1);
  EXPECT_EQ(offers.offers(), (std::vector<std::vector<std::int64_t>>{{2, 5}, {1, 3}}));
  EXPECT_EQ(ring.held(), 4u) << "1, 3 and 5 held again, 4 not offered yet";
  EXPECT_EQ(ring.known(), 5u);
  clock.advance(700ms);  // kStart + 700: the second at kStart + 1000 had only 2, taken ahead
  clock.wait_for_sleepers(1);
  EXPECT_TRUE(handed.ids().empty());
  clock.advance(1000ms);  // kStart + 1700
  clock.wait_for_sleepers(1);
  EXPECT_EQ(handed.ids(), (std::vector<std::int64_t>{5, 1}));
  EXPECT_EQ(offers.offers().size(), 2u) << "the horizon (kStart + 4700) has not reached 4";
  clock.advance(1000ms);  // kStart + 2700: the horizon reaches kStart + 5000
  clock.wait_for_sleepers(1);
  EXPECT_EQ(handed.ids(), (std::vector<std::int64_t>{5, 1, 3}));
  EXPECT_EQ(offers.offers(), (std::vector<std::vector<std::int64_t>>{{2, 5}, {1, 3}, {4}}));
  EXPECT_EQ(ring.held(), 0u);
  EXPECT_EQ(ring.known(), 5u) << "taken ahead or handed on: known until the pools finish them";
  EXPECT_FALSE(ring.push(fire(4, kStart + 5000)));
  ring.finished(4);
  EXPECT_TRUE(ring.push(fire(4, kStart + 5000))) << "pushed again (the feeder): held for its second";
  EXPECT_TRUE(ring.stop().size() == 1u);
}

// Close to the next wake-up nothing is offered, so that wake-up's own hand-off is not held up.
TEST(SecondRing, OffersNothingWithinItsMarginOfTheNextWakeUp) {
  const std::int64_t near = kStart + 700 - SecondRing::kAheadMarginMs + 1;  // the next wake-up is at kStart + 700
  FakeClock clock(near);
  Recorder handed;
  Offers offers;
  SecondRing ring(clock, handed.hand_off(), 300ms, {offers.offer(), 3000ms, 100});
  ASSERT_TRUE(ring.push(fire(2, kStart + 2000)));
  ring.start();
  clock.wait_for_sleepers(1);
  EXPECT_TRUE(offers.offers().empty());
  clock.advance(std::chrono::milliseconds(kStart + 700 - near));
  clock.wait_for_sleepers(1);
  EXPECT_EQ(offers.offers(), (std::vector<std::vector<std::int64_t>>{{2}}));
  ring.stop();
}

TEST(SecondRing, AnOfferThatThrowsHoldsItsFiresAgainForTheirSecond) {
  FakeClock clock(kStart);
  Recorder handed;
  int calls = 0;
  SecondRing::Offer offer = [&calls](const std::vector<PendingFire>&) -> std::vector<PendingFire> {
    ++calls;
    throw std::runtime_error("no memory");
  };
  SecondRing ring(clock, handed.hand_off(), 300ms, {offer, 3000ms, 10});
  ASSERT_TRUE(ring.push(fire(2, kStart + 1000)));
  ring.start();
  clock.wait_for_sleepers(1);
  EXPECT_EQ(calls, 1) << "held again and not offered again";
  EXPECT_EQ(ring.held(), 1u);
  clock.advance(700ms);
  ASSERT_TRUE(handed.wait_for_ids(1));
  EXPECT_EQ(handed.ids(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(handed.due(), (std::vector<std::int64_t>{kStart + 1000}));
  ring.stop();
}

TEST(SecondRing, AHorizonOfAMinuteOrAChunkOfNoneIsRefused) {
  FakeClock clock(kStart);
  Recorder handed;
  Offers offers;
  EXPECT_THROW(SecondRing(clock, handed.hand_off(), 300ms, {offers.offer(), 60s, 10}), std::invalid_argument);
  EXPECT_THROW(SecondRing(clock, handed.hand_off(), 300ms, {offers.offer(), 3s, 0}), std::invalid_argument);
}

TEST(SecondRing, ALeadOfASecondOrMoreIsRefused) {
  FakeClock clock(kStart);
  Recorder handed;
  EXPECT_THROW(SecondRing(clock, handed.hand_off(), 1000ms), std::invalid_argument);
  EXPECT_THROW(SecondRing(clock, handed.hand_off(), -1ms), std::invalid_argument);
}

TEST(SecondRing, HandOffThatThrowsForgetsTheFiresSoTheFeederCanBringThemBack) {
  FakeClock clock(kStart);
  int calls = 0;
  SecondRing ring(clock, [&calls](std::vector<PendingFire>, std::int64_t) {
    ++calls;
    throw std::runtime_error("pools gone");
  });
  ASSERT_TRUE(ring.push(fire(1, kStart)));
  ring.start();
  clock.wait_for_sleepers(1);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ring.known(), 0u);
  EXPECT_TRUE(ring.push(fire(1, kStart)));
}

}  // namespace
}  // namespace cronwheel::admin
