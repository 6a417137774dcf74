// HashedWheelTimer against HeapTimer: the cost of one schedule, one cancel and one expiry with
// 10k, 100k and 1M timeouts pending, delays uniform in [1 s, 60 s] from a seeded generator.
//
// Both timers are manual (TimerOptions::manual) on a hand-moved clock: no thread, no sleep,
// the same process_until() the worker threads run. Each benchmark iteration times a batch of
// operations (manual timing) and then, untimed, restores the pending count, so the structure
// stays at N throughout. The counter ns_per_op is the median over iterations of the timed
// time divided by the operations (see Timing).
//
// Wheel: 100 ms ticks (the granularity cronwheel's timeouts need; an idle wheel wakes ten
// times a second) and 1024 buckets, so one turn (102.4 s) covers the whole delay range and
// every timeout is visited once, when it expires. The Wheel512 rows use Netty's default of
// 512 buckets (a 51.2 s turn) to show what a second visit costs the delays beyond one turn.
//
// What the wheel's rows should show: expiry per timeout and schedule nearly flat from 10k to
// 1M (the bucket walk streams through arrays and prefetches; see hashed_wheel_timer.h). Cancel
// is not flat and cannot be: cancel() must write the timeout it cancels, and a random pending
// timeout is cold, so each call waits for about one BM_MemoryFloor step, plus the fixed cost
// of the call (the 10k row) and, in this benchmark, the load of the handle itself from a
// random slot of a handles vector that no longer fits in L2 at 100k. BM_Cancel splits its
// time into handle_ns (the cancel() calls: the misses above) and worker_ns (the
// process_until() that retires the cancelled entries), the part the wheel's structure
// decides.
//
// Run: timer_bench --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "common/timer/hashed_wheel_timer.h"
#include "common/timer/heap_timer.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"

namespace {

using namespace std::chrono_literals;
using cronwheel::common::Clock;
using cronwheel::common::HashedWheelTimer;
using cronwheel::common::HeapTimer;
using cronwheel::common::Timer;
using cronwheel::common::TimerHandle;
using cronwheel::common::TimerOptions;
using cronwheel::common::WheelOptions;

// Time that moves only when told; timers built on it must be manual.
class ManualClock final : public Clock {
 public:
  std::int64_t now_ms() const override { return offset_ns_.load() / 1'000'000; }
  SteadyTime steady_now() const override {
    return SteadyTime{} + std::chrono::nanoseconds(offset_ns_.load(std::memory_order_relaxed));
  }
  bool sleep_until(SteadyTime, std::stop_token) override {
    throw std::logic_error("ManualClock cannot sleep; use a manual timer");
  }
  void advance(std::chrono::nanoseconds d) { offset_ns_.fetch_add(d.count()); }

 private:
  std::atomic<std::int64_t> offset_ns_{0};
};

// Delays uniform in [1 s, 60 s], drawn once so the generator stays out of the timed loops.
class Delays {
 public:
  Delays() : table_(std::size_t{1} << 20) {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> ns(1'000'000'000, 60'000'000'000);
    for (auto& d : table_) d = std::chrono::nanoseconds(ns(rng));
  }
  std::chrono::nanoseconds next() noexcept { return table_[next_++ & (table_.size() - 1)]; }

 private:
  std::vector<std::chrono::nanoseconds> table_;
  std::size_t next_ = 0;
};

enum class Kind { kWheel, kWheel512, kHeap };

std::atomic<std::uint64_t> g_fired{0};
void on_fire() { g_fired.fetch_add(1, std::memory_order_relaxed); }

constexpr std::chrono::nanoseconds kTick = 100ms;
constexpr std::size_t kBatch = 1000;

struct Setup {
  Setup(Kind kind, std::size_t n) {
    TimerOptions manual{.manual = true};
    switch (kind) {
      case Kind::kWheel:
        timer = std::make_unique<HashedWheelTimer>(
            clock, WheelOptions{.tick = kTick, .wheel_size = 1024}, manual);
        break;
      case Kind::kWheel512:
        timer = std::make_unique<HashedWheelTimer>(
            clock, WheelOptions{.tick = kTick, .wheel_size = 512}, manual);
        break;
      case Kind::kHeap:
        timer = std::make_unique<HeapTimer>(clock, manual);
        break;
    }
    handles.reserve(n);
    for (std::size_t i = 0; i < n; ++i) handles.push_back(timer->schedule(on_fire, delays.next()));
    process();
  }
  std::size_t process() { return timer->process_until(clock.steady_now()); }

  ManualClock clock;
  Delays delays;
  std::unique_ptr<Timer> timer;
  std::vector<TimerHandle> handles;
};

using Stopwatch = std::chrono::steady_clock;

double median(std::vector<double>& values) {
  if (values.empty()) return 0;
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

double ns_per(Stopwatch::duration elapsed, std::size_t ops) {
  return static_cast<double>(std::chrono::nanoseconds(elapsed).count()) /
         static_cast<double>(ops);
}

// Collects the timed part of each iteration. ns_per_op is the median over iterations of
// (iteration time / its operations): one preemption on a shared machine spoils one iteration,
// not the result. ns_per_op_mean is the plain ratio of totals.
class Timing {
 public:
  void add(benchmark::State& state, Stopwatch::duration elapsed, std::uint64_t ops) {
    state.SetIterationTime(std::chrono::duration<double>(elapsed).count());
    const auto ns = static_cast<double>(std::chrono::nanoseconds(elapsed).count());
    total_ns_ += ns;
    total_ops_ += ops;
    if (ops != 0) per_op_.push_back(ns / static_cast<double>(ops));
  }

  void report(benchmark::State& state) {
    state.counters["ns_per_op"] = median(per_op_);
    state.counters["ns_per_op_mean"] =
        total_ops_ == 0 ? 0.0 : total_ns_ / static_cast<double>(total_ops_);
    state.counters["pending"] = static_cast<double>(state.range(0));
    state.SetItemsProcessed(static_cast<std::int64_t>(total_ops_));
  }

 private:
  std::vector<double> per_op_;
  double total_ns_ = 0;
  std::uint64_t total_ops_ = 0;
};

// schedule() of kBatch timeouts, plus the process_until() that places them in the wheel's
// buckets (for the heap there is nothing due, so it only looks at the top).
void BM_Schedule(benchmark::State& state, Kind kind) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Setup s(kind, n);
  std::vector<TimerHandle> batch;
  batch.reserve(kBatch);
  Timing timing;
  for (auto _ : state) {
    const auto start = Stopwatch::now();
    for (std::size_t i = 0; i < kBatch; ++i) batch.push_back(s.timer->schedule(on_fire, s.delays.next()));
    s.process();
    timing.add(state, Stopwatch::now() - start, kBatch);
    // Back to n pending.
    for (auto& h : batch) h.cancel();
    s.process();
    batch.clear();
  }
  timing.report(state);
}

// cancel() of kBatch random pending timeouts (cold in cache, like real ones), plus the
// process_until() that retires their bucket entries (the heap removes them in cancel()).
// handle_ns and worker_ns: medians of the two parts, per cancelled timeout.
void BM_Cancel(benchmark::State& state, Kind kind) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Setup s(kind, n);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  std::size_t cursor = 0;
  std::vector<std::size_t> victims(kBatch);
  Timing timing;
  std::vector<double> handle_ns;
  std::vector<double> worker_ns;
  for (auto _ : state) {
    for (auto& v : victims) {
      v = order[cursor];
      cursor = (cursor + 1) % n;
    }
    const auto start = Stopwatch::now();
    for (auto v : victims) s.handles[v].cancel();
    const auto cancelled = Stopwatch::now();
    s.process();
    const auto end = Stopwatch::now();
    timing.add(state, end - start, kBatch);
    handle_ns.push_back(ns_per(cancelled - start, kBatch));
    worker_ns.push_back(ns_per(end - cancelled, kBatch));
    // Replace them, back to n pending.
    for (auto v : victims) s.handles[v] = s.timer->schedule(on_fire, s.delays.next());
    s.process();
  }
  timing.report(state);
  state.counters["handle_ns"] = median(handle_ns);
  state.counters["worker_ns"] = median(worker_ns);
}

// Not a timer: N separately allocated timeout-sized blocks linked in random order, followed
// kBatch steps per iteration. Each step is one dependent load of a cold block, the minimum
// any operation on one cold timeout pays at this N (L2 at 10k, L3 at 100k, DRAM and TLB misses
// at 1M), when nothing lets it overlap with the next. Cancel pays about this; the wheel's
// expiry pays less, because its bucket walk knows the next timeouts in advance and overlaps
// their misses.
void BM_MemoryFloor(benchmark::State& state) {
  struct Block {
    Block* next;
    char payload[80];  // 88 bytes, a 96-byte malloc chunk; a timeout is an 80-byte pool slot
  };
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::unique_ptr<Block>> blocks;
  blocks.reserve(n);
  for (std::size_t i = 0; i < n; ++i) blocks.push_back(std::make_unique<Block>());
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  for (std::size_t i = 0; i < n; ++i) blocks[order[i]]->next = blocks[order[(i + 1) % n]].get();
  Block* cursor = blocks[order[0]].get();
  Timing timing;
  for (auto _ : state) {
    const auto start = Stopwatch::now();
    for (std::size_t i = 0; i < kBatch; ++i) cursor = cursor->next;
    benchmark::DoNotOptimize(cursor);
    timing.add(state, Stopwatch::now() - start, kBatch);
  }
  timing.report(state);
}

// Expiry in the steady state: each iteration moves the clock 10 ticks (1 s), processes them
// and counts what ran (tasks run inline: a relaxed increment); then, untimed, schedules as
// many new timeouts as expired. Per op = per expired timeout, including the bucket walk (or
// the heap pops), the hand-off and freeing the timeout.
void BM_Expire(benchmark::State& state, Kind kind) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Setup s(kind, n);
  s.handles.clear();  // timeouts are freed when they expire
  auto refill = [&s](std::size_t k) {
    for (std::size_t i = 0; i < k; ++i) s.timer->schedule(on_fire, s.delays.next());
    s.process();
  };
  // Warm up for one full delay range so deadlines are spread as in the steady state.
  for (int t = 0; t < 60; ++t) {
    s.clock.advance(1s);
    refill(s.process());
  }
  Timing timing;
  for (auto _ : state) {
    std::size_t fired = 0;
    const auto start = Stopwatch::now();
    for (int t = 0; t < 10; ++t) {
      s.clock.advance(kTick);
      fired += s.process();
    }
    timing.add(state, Stopwatch::now() - start, fired);
    refill(fired);
  }
  timing.report(state);
}

// Fixed iteration counts keep the run short and make each repetition one setup. Three
// repetitions; on a shared machine read the median (or the min, the least disturbed run).
void sizes(benchmark::internal::Benchmark* b, int iterations) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(iterations);
  b->Repetitions(3)->ReportAggregatesOnly(true);
  b->ComputeStatistics("min", [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  });
  for (std::int64_t n : {10'000, 100'000, 1'000'000}) b->Arg(n);
}

void batches(benchmark::internal::Benchmark* b) { sizes(b, 200); }  // 200k ops per size
void seconds(benchmark::internal::Benchmark* b) { sizes(b, 100); }  // 100 s of expiries

BENCHMARK_CAPTURE(BM_Schedule, Wheel, Kind::kWheel)->Apply(batches);
BENCHMARK_CAPTURE(BM_Schedule, Heap, Kind::kHeap)->Apply(batches);
BENCHMARK_CAPTURE(BM_Cancel, Wheel, Kind::kWheel)->Apply(batches);
BENCHMARK_CAPTURE(BM_Cancel, Heap, Kind::kHeap)->Apply(batches);
BENCHMARK_CAPTURE(BM_Expire, Wheel, Kind::kWheel)->Apply(seconds);
BENCHMARK_CAPTURE(BM_Expire, Wheel512, Kind::kWheel512)->Apply(seconds);
BENCHMARK_CAPTURE(BM_Expire, Heap, Kind::kHeap)->Apply(seconds);
BENCHMARK(BM_MemoryFloor)->Apply(batches);

}  // namespace
