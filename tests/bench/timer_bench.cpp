// HashedWheelTimer and HierarchicalWheelTimer against HeapTimer (heap_timer.h): the cost of one
// schedule, one cancel and one expiry with 10k, 100k and 1M timeouts pending, delays uniform in
// [1 s, 60 s] from a seeded generator; expiry again with delays up to a day; and what each costs
// while nothing is due.
//
// The timers are manual (TimerOptions::manual) on a hand-moved clock: no thread, no sleep,
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
// Hierarchical wheel: its defaults, 1 ms ticks and wheels of 512 buckets (0.5 s, 262 s, 37 h),
// so a timeout of [1 s, 60 s] is placed in the second wheel and moves down once before it
// fires. The Hier100ms rows use the hashed wheel's 100 ms tick (first wheel 51.2 s): most
// timeouts go straight to the first wheel, as in the hashed wheel.
//
// BM_ExpireLong: delays uniform in [1 s, 24 h], each iteration one minute of expiry. With 1M
// pending about 700 timeouts expire a minute, while the hashed wheel visits every entry of
// every bucket it passes (1M entries a turn of 102.4 s): the regime of long, sparse timeouts.
// No warm-up: the first minutes after scheduling, when deadlines are spread uniformly.
//
// BM_Idle rows are not manual: real timers with their worker threads on the system clock, 1M
// timeouts pending, and a window of 5 s of wall time during which the benchmark thread sleeps.
// They report the worker thread's CPU time per second of window (worker_us_per_s, from its
// CLOCK_THREAD_CPUTIME_ID), the whole process's (process_us_per_s, getrusage) and how often
// the worker returned from a sleep (wakeups_per_s, counted by the clock it sleeps on).
// NothingDue: delays uniform in [1 h, 25 h], so nothing is due in the window. Sparse: delays
// uniform in [0, 24 h], about 12 due a second.
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
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/timer/hashed_wheel_timer.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"
#include "tests/bench/heap_timer.h"

namespace {

using namespace std::chrono_literals;
using cronwheel::common::Clock;
using cronwheel::common::HashedWheelTimer;
using cronwheel::common::HierarchicalWheelOptions;
using cronwheel::common::HierarchicalWheelTimer;
using cronwheel::common::SystemClock;
using cronwheel::common::Timer;
using cronwheel::common::TimerHandle;
using cronwheel::common::TimerOptions;
using cronwheel::common::WheelOptions;
using cronwheel::bench::HeapTimer;

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

// Delays uniform in [min, max] (by default [1 s, 60 s]), drawn once so the generator stays
// out of the timed loops.
class Delays {
 public:
  explicit Delays(std::chrono::nanoseconds min = 1s, std::chrono::nanoseconds max = 60s)
      : table_(std::size_t{1} << 20) {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> ns(min.count(), max.count());
    for (auto& d : table_) d = std::chrono::nanoseconds(ns(rng));
  }
  std::chrono::nanoseconds next() noexcept { return table_[next_++ & (table_.size() - 1)]; }

 private:
  std::vector<std::chrono::nanoseconds> table_;
  std::size_t next_ = 0;
};

enum class Kind { kWheel, kWheel512, kHier, kHier100ms, kHeap };

std::atomic<std::uint64_t> g_fired{0};
void on_fire() { g_fired.fetch_add(1, std::memory_order_relaxed); }

constexpr std::chrono::nanoseconds kTick = 100ms;
constexpr std::size_t kBatch = 1000;

std::unique_ptr<Timer> make_timer(Kind kind, Clock& clock, TimerOptions options) {
  switch (kind) {
    case Kind::kWheel:
      return std::make_unique<HashedWheelTimer>(
          clock, WheelOptions{.tick = kTick, .wheel_size = 1024}, options);
    case Kind::kWheel512:
      return std::make_unique<HashedWheelTimer>(
          clock, WheelOptions{.tick = kTick, .wheel_size = 512}, options);
    case Kind::kHier:
      return std::make_unique<HierarchicalWheelTimer>(clock, HierarchicalWheelOptions{},
                                                      options);
    case Kind::kHier100ms:
      return std::make_unique<HierarchicalWheelTimer>(
          clock, HierarchicalWheelOptions{.tick = kTick, .wheel_size = 512}, options);
    case Kind::kHeap:
      return std::make_unique<HeapTimer>(clock, options);
  }
  throw std::logic_error("unknown timer kind");
}

struct Setup {
  Setup(Kind kind, std::size_t n, Delays d = Delays()) : delays(std::move(d)) {
    timer = make_timer(kind, clock, TimerOptions{.manual = true});
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

// Expiry of long, sparse timeouts (see the header comment): each iteration moves the clock one
// minute, in steps of one tick of the hashed wheel, then refills untimed. Read ns_per_op_mean
// (all the time over all the expiries) at 10k, where many iterations expire nothing.
void BM_ExpireLong(benchmark::State& state, Kind kind) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Setup s(kind, n, Delays(1s, 24h));
  s.handles.clear();
  Timing timing;
  for (auto _ : state) {
    std::size_t fired = 0;
    const auto start = Stopwatch::now();
    for (int t = 0; t < 600; ++t) {
      s.clock.advance(kTick);
      fired += s.process();
    }
    timing.add(state, Stopwatch::now() - start, fired);
    for (std::size_t i = 0; i < fired; ++i) s.timer->schedule(on_fire, s.delays.next());
    s.process();
  }
  timing.report(state);
}

// The system clock, counting the sleeps of the thread that sleeps on it (a timer's worker)
// and giving that thread's CPU clock.
class CountingClock final : public Clock {
 public:
  std::int64_t now_ms() const override { return SystemClock::instance().now_ms(); }
  SteadyTime steady_now() const override { return SystemClock::instance().steady_now(); }
  bool sleep_until(SteadyTime deadline, std::stop_token stop) override {
    if (!has_sleeper_.load(std::memory_order_acquire)) {
      clockid_t id{};
      if (pthread_getcpuclockid(pthread_self(), &id) == 0) {
        sleeper_cpu_ = id;
        has_sleeper_.store(true, std::memory_order_release);
      }
    }
    const bool reached = SystemClock::instance().sleep_until(deadline, std::move(stop));
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    return reached;
  }

  std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }
  // CPU time of the sleeping thread so far; 0 before its first sleep.
  std::chrono::nanoseconds sleeper_cpu() const noexcept {
    timespec ts{};
    if (!has_sleeper_.load(std::memory_order_acquire) || clock_gettime(sleeper_cpu_, &ts) != 0) {
      return std::chrono::nanoseconds::zero();
    }
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }

 private:
  std::atomic<bool> has_sleeper_{false};
  clockid_t sleeper_cpu_{};
  std::atomic<std::uint64_t> wakeups_{0};
};

std::chrono::nanoseconds process_cpu() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto tv = [](const timeval& t) {
    return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
  };
  return tv(usage.ru_utime) + tv(usage.ru_stime);
}

// 1M timeouts on a real timer, then 5 s of wall time with this thread asleep: what the worker
// spends meanwhile (see the header comment). One iteration, no repetitions: about 8 s a row.
void BM_Idle(benchmark::State& state, Kind kind, std::chrono::nanoseconds min_delay,
             std::chrono::nanoseconds max_delay) {
  constexpr std::size_t kPending = 1'000'000;
  constexpr auto kSettle = 1500ms;  // the hashed wheel places at most 100k a tick
  constexpr auto kWindow = 5s;
  Delays delays(min_delay, max_delay);
  for (auto _ : state) {
    CountingClock clock;
    auto timer = make_timer(kind, clock, TimerOptions{});
    for (std::size_t i = 0; i < kPending; ++i) timer->schedule(on_fire, delays.next());
    std::this_thread::sleep_for(kSettle);

    const auto fired0 = g_fired.load();
    const auto wakeups0 = clock.wakeups();
    const auto worker0 = clock.sleeper_cpu();
    const auto process0 = process_cpu();
    const auto wall0 = Stopwatch::now();
    std::this_thread::sleep_for(kWindow);
    const auto wall = Stopwatch::now() - wall0;
    const auto process = process_cpu() - process0;
    const auto worker = clock.sleeper_cpu() - worker0;
    const auto wakeups = clock.wakeups() - wakeups0;
    const auto fired = g_fired.load() - fired0;

    const double seconds = std::chrono::duration<double>(wall).count();
    const auto us = [](std::chrono::nanoseconds d) {
      return std::chrono::duration<double, std::micro>(d).count();
    };
    state.SetIterationTime(seconds);
    state.counters["pending"] = static_cast<double>(timer->pending_timeouts());
    state.counters["worker_us_per_s"] = us(worker) / seconds;
    state.counters["process_us_per_s"] = us(process) / seconds;
    state.counters["wakeups_per_s"] = static_cast<double>(wakeups) / seconds;
    state.counters["fired_per_s"] = static_cast<double>(fired) / seconds;
    timer->stop();
  }
}

void idle(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
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
void minutes(benchmark::internal::Benchmark* b) { sizes(b, 30); }   // 30 min of expiries

BENCHMARK_CAPTURE(BM_Schedule, Wheel, Kind::kWheel)->Apply(batches);
BENCHMARK_CAPTURE(BM_Schedule, Hier, Kind::kHier)->Apply(batches);
BENCHMARK_CAPTURE(BM_Schedule, Heap, Kind::kHeap)->Apply(batches);
BENCHMARK_CAPTURE(BM_Cancel, Wheel, Kind::kWheel)->Apply(batches);
BENCHMARK_CAPTURE(BM_Cancel, Hier, Kind::kHier)->Apply(batches);
BENCHMARK_CAPTURE(BM_Cancel, Heap, Kind::kHeap)->Apply(batches);
BENCHMARK_CAPTURE(BM_Expire, Wheel, Kind::kWheel)->Apply(seconds);
BENCHMARK_CAPTURE(BM_Expire, Wheel512, Kind::kWheel512)->Apply(seconds);
BENCHMARK_CAPTURE(BM_Expire, Hier, Kind::kHier)->Apply(seconds);
BENCHMARK_CAPTURE(BM_Expire, Hier100ms, Kind::kHier100ms)->Apply(seconds);
BENCHMARK_CAPTURE(BM_Expire, Heap, Kind::kHeap)->Apply(seconds);
BENCHMARK_CAPTURE(BM_ExpireLong, Wheel, Kind::kWheel)->Apply(minutes);
BENCHMARK_CAPTURE(BM_ExpireLong, Hier, Kind::kHier)->Apply(minutes);
BENCHMARK_CAPTURE(BM_ExpireLong, Heap, Kind::kHeap)->Apply(minutes);
BENCHMARK(BM_MemoryFloor)->Apply(batches);
BENCHMARK_CAPTURE(BM_Idle, NothingDue_Wheel, Kind::kWheel, 1h, 25h)->Apply(idle);
BENCHMARK_CAPTURE(BM_Idle, NothingDue_Hier, Kind::kHier, 1h, 25h)->Apply(idle);
BENCHMARK_CAPTURE(BM_Idle, NothingDue_Heap, Kind::kHeap, 1h, 25h)->Apply(idle);
BENCHMARK_CAPTURE(BM_Idle, Sparse_Wheel, Kind::kWheel, 0s, 24h)->Apply(idle);
BENCHMARK_CAPTURE(BM_Idle, Sparse_Hier, Kind::kHier, 0s, 24h)->Apply(idle);
BENCHMARK_CAPTURE(BM_Idle, Sparse_Heap, Kind::kHeap, 0s, 24h)->Apply(idle);

}  // namespace
