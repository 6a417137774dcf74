// Shedding past capacity: when the shedder cuts the share of fires the scans keep, by how much,
// how often, what it ignores, and how it recovers. Fixed times, no clock, no threads.

#include <gtest/gtest.h>

#include <cstdint>

#include "admin/scheduler/load_shedder.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kT = 1'700'000'000'000;  // a second boundary

// `seconds` seconds of steady load from `start`: each second the scan decides `decided` fires
// and the ring hands `handed` over in a hand-off that ends half-way through the second,
// `late_ms` after the second its fires were due from.
void load(LoadShedder& s, std::int64_t start, int seconds, std::size_t decided, std::size_t handed,
          std::int64_t late_ms) {
  for (int i = 0; i < seconds; ++i) {
    const std::int64_t second = start + i * 1000;
    s.decided(decided, second + 10);
    s.handed_over(handed, second + 500 - late_ms, second + 500);
  }
}

TEST(LoadShedder, KeepsEverythingWhileHandOffsAreOnTime) {
  LoadShedder s({});
  load(s, kT, 10, 12'000, 12'000, -300);
  EXPECT_EQ(s.keep(kT + 10'000), 1.0);
  EXPECT_EQ(s.stats().cuts, 0u);
}

TEST(LoadShedder, ALateHandOffUnderLoadCutsTheShareToWhatWasHandedOver) {
  LoadShedder s({});
  // Demand 12,000 a second, 8,000 handed over, each second's hand-off 2 s late.
  load(s, kT, 6, 12'000, 8'000, 2'000);
  const double keep = s.keep(kT + 6'000);
  EXPECT_NEAR(keep, 0.9 * 8'000.0 / 12'000.0, 0.01);
  EXPECT_EQ(s.stats().cuts, 1u);
  EXPECT_EQ(s.stats().last_late_ms, 2'000);
}

TEST(LoadShedder, ACutIsAtLeastATenthAndNeverBelowTheFloor) {
  LoadShedder s({});
  load(s, kT, 6, 1'000, 1'000, 1'500);  // handed as much as decided, yet late
  EXPECT_NEAR(s.keep(kT + 6'000), 0.9, 1e-9);

  LoadShedder floor({});
  load(floor, kT, 6, 100'000, 600, 1'500);
  EXPECT_NEAR(floor.keep(kT + 6'000), 0.1, 1e-9);
}

TEST(LoadShedder, AfterACutTheNextWaitsAWindowAndASecondForTheCutToShow) {
  LoadShedder s({});
  load(s, kT, 6, 12'000, 8'000, 2'000);
  const double first = s.keep(kT + 6'000);
  // Still late: fires decided before the cut are still being handed over.
  for (int i = 1; i <= 5; ++i) {
    load(s, kT + (6 + i) * 1000, 1, 12'000, 8'000, 2'000);
    EXPECT_EQ(s.keep(kT + (6 + i) * 1000 + 500), first) << "second " << i;
  }
  load(s, kT + 12'000, 1, 12'000, 7'000, 2'000);
  EXPECT_LT(s.keep(kT + 12'500), first);
  EXPECT_EQ(s.stats().cuts, 2u);
}

TEST(LoadShedder, TheShareGrowsBackEachSecondOnceAWholeWindowWasOnTime) {
  LoadShedder s({});
  load(s, kT, 6, 10'000, 5'000, 2'000);  // the last late hand-off in second 5
  const double cut = s.keep(kT + 6'000);
  ASSERT_LT(cut, 0.5);
  double keep = cut;
  for (int i = 1; i <= 15; ++i) {
    load(s, kT + (6 + i) * 1000, 1, 10'000, 5'000, -200);
    const double now = s.keep(kT + (6 + i) * 1000 + 500);
    // Seconds 7 to 10 are within a window of the late one: the fires decided before the cut may
    // still be on their way. From second 11 on, a step a second.
    EXPECT_NEAR(now, 6 + i <= 10 ? cut : keep + 0.02, 1e-9) << "second " << 6 + i;
    keep = now;
  }
  // Back to everything in time, and no further.
  for (int i = 0; i < 60; ++i) s.keep(kT + (25 + i) * 1000);
  EXPECT_EQ(s.keep(kT + 90'000), 1.0);
}

// A shedder that knows the node's sends and its fast pool's refusals, counted here.
struct Metered {
  std::uint64_t sends = 0, refusals = 0;
  LoadShedder shedder{options()};

  LoadShedder::Options options() {
    LoadShedder::Options o;
    o.sends = [this] { return sends; };
    o.refusals = [this] { return refusals; };
    return o;
  }
  // One second of load at `at`, as load() gives it, with `sent` fires sent by the pools.
  void second(std::int64_t at, std::size_t decided, std::uint64_t sent, std::size_t handed, std::int64_t late_ms) {
    sends += sent;
    load(shedder, at, 1, decided, handed, late_ms);
  }
};

TEST(LoadShedder, TheCutFollowsTheSendsWhenItKnowsThem) {
  // The ring hands over all it holds, but the pools take and send only half of it (the rest
  // waits and goes out late): what was sent is the capacity.
  Metered m;
  for (int i = 0; i < 6; ++i) m.second(kT + i * 1000, 12'000, 6'000, 12'000, 2'000);
  EXPECT_NEAR(m.shedder.keep(kT + 6'000), 0.9 * 6'000.0 / 12'000.0, 0.02);
}

TEST(LoadShedder, TheFastPoolRefusingFiresIsBeingLateToo) {
  // The ring hands each second over in time, but the fast pool is full and refuses fires: they
  // stay pending and go out late.
  Metered m;
  for (int i = 0; i < 6; ++i) m.second(kT + i * 1000, 12'000, 8'000, 12'000, -300);
  EXPECT_EQ(m.shedder.keep(kT + 6'000), 1.0) << "no refusal yet";
  for (int i = 6; i < 10; ++i) {
    m.second(kT + i * 1000, 12'000, 8'000, 12'000, -300);
    m.refusals += 1'000;
    if (i < 9) EXPECT_EQ(m.shedder.keep(kT + i * 1000 + 700), 1.0) << "refusing for " << i - 5 << " s only";
  }
  EXPECT_NEAR(m.shedder.keep(kT + 10'000), 0.9 * 8'000.0 / 12'000.0, 0.02);
  EXPECT_EQ(m.shedder.stats().refused, 4'000u);
}

TEST(LoadShedder, RefusalsWithFewFiresHandedOverAreNotLoad) {
  // A small node whose pools are small, or busy with slow sends: shedding its few fires would not help.
  Metered m;
  for (int i = 0; i < 10; ++i) {
    m.second(kT + i * 1000, 200, 200, 200, -100);
    m.refusals += 50;
    EXPECT_EQ(m.shedder.keep(kT + i * 1000 + 600), 1.0) << "second " << i;
  }
  EXPECT_EQ(m.shedder.stats().refused, 500u);
}

TEST(LoadShedder, TheCapacityIsTheBestWindowSentNotTheLast) {
  // 8,000 a second sent while the node kept up; then, behind, its pools jammed, only 2,000.
  Metered m;
  for (int i = 0; i < 12; ++i) {
    m.second(kT + i * 1000, 12'000, i < 6 ? 8'000 : 2'000, 12'000, i < 6 ? 0 : 2'000);
  }
  EXPECT_NEAR(m.shedder.keep(kT + 12'000), 0.9 * 8'000.0 / 12'000.0, 0.02);
  EXPECT_EQ(m.shedder.stats().cut_sent, 40'000u);
}

TEST(LoadShedder, TheCatchUpAfterAStallIsNotLoad) {
  // 500 fires a second on time; then the node is paused for 5 s (or its database restarts): on
  // resuming it hands the seconds it missed over late, in a burst, decides the seconds it owes,
  // and is on time again two seconds later. It has shown it sends what it decides: nothing to shed.
  Metered m;
  for (int i = 0; i < 20; ++i) m.second(kT + i * 1000, 500, 500, 500, -300);
  m.second(kT + 25'000, 5'000, 3'000, 3'000, 5'000);
  EXPECT_EQ(m.shedder.keep(kT + 25'600), 1.0);
  m.second(kT + 26'000, 500, 2'500, 2'500, 2'500);
  EXPECT_EQ(m.shedder.keep(kT + 26'600), 1.0);
  for (int i = 27; i < 40; ++i) {
    m.second(kT + i * 1000, 500, 500, 500, -300);
    EXPECT_EQ(m.shedder.keep(kT + i * 1000 + 600), 1.0) << "second " << i;
  }
  EXPECT_EQ(m.shedder.stats().cuts, 0u);
}

TEST(LoadShedder, ANodeLateInAllButOneSecondOfAWindowIsPastItsCapacity) {
  Metered m;
  for (int i = 0; i < 10; ++i) m.second(kT + i * 1000, 12'000, 8'000, 8'000, -300);
  m.second(kT + 10'000, 12'000, 8'000, 8'000, 2'000);
  m.second(kT + 11'000, 12'000, 8'000, 8'000, 2'500);
  m.second(kT + 12'000, 12'000, 8'000, 8'000, 3'000);
  EXPECT_EQ(m.shedder.keep(kT + 12'600), 1.0) << "three late seconds of five";
  m.second(kT + 13'000, 12'000, 8'000, 8'000, 3'500);
  EXPECT_LT(m.shedder.keep(kT + 13'600), 1.0) << "four of five";
  EXPECT_EQ(m.shedder.stats().cuts, 1u);
}

TEST(LoadShedder, ALateHandOffOfFewFiresIsNotLoad) {
  // A stall with little to hand over (a database outage, a long checkpoint): shedding would not help.
  LoadShedder s({});
  load(s, kT, 10, 200, 200, 3'000);
  EXPECT_EQ(s.keep(kT + 10'000), 1.0);
}

TEST(LoadShedder, LateByLessThanTheThresholdIsOnTime) {
  LoadShedder::Options options;
  options.late_after = std::chrono::milliseconds(1'000);
  LoadShedder s(options);
  load(s, kT, 10, 12'000, 8'000, 1'000);
  EXPECT_EQ(s.keep(kT + 10'000), 1.0);
}

TEST(LoadShedder, ZeroTurnsItOff) {
  LoadShedder::Options options;
  options.late_after = std::chrono::milliseconds(0);
  LoadShedder s(options);
  EXPECT_FALSE(s.enabled());
  load(s, kT, 10, 12'000, 1'000, 10'000);
  EXPECT_EQ(s.keep(kT + 10'000), 1.0);
}

TEST(LoadShedder, TheShareMovesAtMostOnceASecond) {
  LoadShedder s({});
  load(s, kT, 6, 12'000, 8'000, 2'000);
  const double keep = s.keep(kT + 6'000);
  load(s, kT + 6'000, 1, 12'000, 8'000, -200);
  EXPECT_EQ(s.keep(kT + 6'400), keep);
  EXPECT_EQ(s.keep(kT + 6'900), keep);
}

}  // namespace
}  // namespace cronwheel::admin
