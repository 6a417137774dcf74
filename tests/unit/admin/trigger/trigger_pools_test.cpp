// The trigger pools against a fake FireSender and the fake schedule store (for the rows): threads
// on demand up to the maximum, bounded queues, a full pool leaving the fire pending (back-pressure,
// not a failure), the slow-pool rule, the lease check, and shutdown.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "admin/trigger/fire_thread_pool.h"
#include "admin/trigger/trigger_pools.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_schedule_store.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeScheduleStore;

constexpr std::int64_t kStart = 1'700'000'040'000;  // on a minute boundary
constexpr auto kWait = 30s;  // upper bound of a condition wait; never reached when all is well

// A FireSender whose sends can be held at a gate, with a chosen outcome and duration per job.
class FakeSender final : public FireSender {
 public:
  SendOutcome send(const PendingFire& fire) noexcept override {
    std::unique_lock lock(mutex_);
    started_.push_back(fire);
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    ++done_;
    changed_.notify_all();
    auto took = took_.count(fire.job_id) != 0 ? took_[fire.job_id] : 1ms;
    return {kind_, took};
  }
  // Prepares nothing ahead (like a sender that cannot), except that the fires of `end_jobs` are
  // settled by prepare() (dropped); asks `admit` of every other fire, with its lead key; records
  // what it was asked and what it would have claimed.
  std::vector<PreparedFire> prepare(const std::vector<PendingFire>& fires, std::int64_t not_before_ms,
                                    const AdmitFire& admit) noexcept override {
    std::lock_guard lock(mutex_);
    prepared_.push_back({fires, not_before_ms});
    std::vector<PreparedFire> out;
    for (std::size_t i = 0; i < fires.size(); ++i) {
      const PendingFire& f = fires[i];
      out.push_back({f, std::nullopt, nullptr});
      if (end_jobs_.count(f.job_id)) {
        out.back().ended = SendOutcome{SendOutcome::Kind::kDropped, {}};
        continue;
      }
      out.back().refused = admit && !admit(i, lead_key_locked(f.job_id));
      if (!out.back().refused) claimed_.push_back(f);
    }
    return out;
  }
  std::vector<PendingFire> claimed() const {
    std::lock_guard lock(mutex_);
    return claimed_;
  }
  // Ahead of their second: the fires of jobs with a lead key are claimed (a `send` the pools only
  // carry), those of `end_jobs` settled (dropped), every other left alone.
  std::vector<PreparedFire> prepare_lead(const std::vector<PendingFire>& fires) noexcept override {
    static const int claimed = 0;
    // Never read by the pools: a non-null token of the opaque type, owning nothing.
    const std::shared_ptr<const PreparedSend> token(std::shared_ptr<const int>(),
                                                    reinterpret_cast<const PreparedSend*>(&claimed));
    std::lock_guard lock(mutex_);
    prepared_lead_.push_back(fires);
    std::vector<PreparedFire> out;
    for (const auto& f : fires) {
      if (end_jobs_.count(f.job_id)) {
        out.push_back({f, SendOutcome{SendOutcome::Kind::kDropped, {}}, nullptr});
      } else {
        out.push_back({f, std::nullopt, lead_keys_.count(f.job_id) ? token : nullptr});
      }
    }
    return out;
  }
  std::vector<std::vector<PendingFire>> prepared_lead() const {
    std::lock_guard lock(mutex_);
    return prepared_lead_;
  }
  SendOutcome deliver(const PreparedFire& fire) noexcept override {
    {
      std::lock_guard lock(mutex_);
      delivered_.push_back(fire.fire);
    }
    return send(fire.fire);
  }
  void release(const PreparedFire& fire) noexcept override {
    std::lock_guard lock(mutex_);
    released_.push_back(fire.fire);
  }
  // Lead dispatch: fires of `job_id` have a lead key ("executor-<key>"); lead() hands over those
  // whose job is in `accept`, and leaves the rest.
  void lead_jobs(std::int64_t job_id, int key, bool accept) {
    std::lock_guard lock(mutex_);
    lead_keys_[job_id] = key;
    if (accept) accept_.insert(job_id);
  }
  std::optional<std::string> lead_key(const PreparedFire& fire) const noexcept override {
    std::lock_guard lock(mutex_);
    return lead_key_locked(fire.fire.job_id);
  }
  std::vector<std::optional<SendOutcome>> lead(const std::vector<PreparedFire>& fires,
                                               const std::vector<std::int64_t>& fire_at) noexcept override {
    std::lock_guard lock(mutex_);
    std::vector<PendingFire> batch;
    std::vector<std::optional<SendOutcome>> out;
    for (const auto& f : fires) {
      batch.push_back(f.fire);
      out.push_back(accept_.count(f.fire.job_id) ? std::optional<SendOutcome>(SendOutcome{SendOutcome::Kind::kTriggered, {}})
                                                 : std::nullopt);
    }
    led_.push_back({batch, fire_at});
    return out;
  }
  std::vector<std::pair<std::vector<PendingFire>, std::vector<std::int64_t>>> led() const {
    std::lock_guard lock(mutex_);
    return led_;
  }
  void end_in_prepare(std::int64_t job_id) {
    std::lock_guard lock(mutex_);
    end_jobs_.insert(job_id);
  }
  std::vector<std::pair<std::vector<PendingFire>, std::int64_t>> prepared() const {
    std::lock_guard lock(mutex_);
    return prepared_;
  }
  std::vector<PendingFire> delivered() const {
    std::lock_guard lock(mutex_);
    return delivered_;
  }
  std::vector<PendingFire> released() const {
    std::lock_guard lock(mutex_);
    return released_;
  }
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void set_took(std::int64_t job_id, std::chrono::milliseconds took) {
    std::lock_guard lock(mutex_);
    took_[job_id] = took;
  }
  void set_outcome(SendOutcome::Kind kind) {
    std::lock_guard lock(mutex_);
    kind_ = kind;
  }
  // Waits until `n` sends have started.
  bool wait_started(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWait, [&] { return started_.size() >= n; });
  }
  bool wait_done(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWait, [&] { return done_ >= n; });
  }
  std::vector<PendingFire> started() const {
    std::lock_guard lock(mutex_);
    return started_;
  }

 private:
  std::optional<std::string> lead_key_locked(std::int64_t job_id) const {
    auto it = lead_keys_.find(job_id);
    if (it == lead_keys_.end()) return std::nullopt;
    return "executor-" + std::to_string(it->second);
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  std::size_t done_ = 0;
  std::vector<PendingFire> started_;
  std::map<std::int64_t, std::chrono::milliseconds> took_;
  SendOutcome::Kind kind_ = SendOutcome::Kind::kTriggered;
  std::set<std::int64_t> end_jobs_;
  std::vector<std::pair<std::vector<PendingFire>, std::int64_t>> prepared_;
  std::vector<std::vector<PendingFire>> prepared_lead_;
  std::vector<PendingFire> delivered_, released_, claimed_;
  std::map<std::int64_t, int> lead_keys_;
  std::set<std::int64_t> accept_;
  std::vector<std::pair<std::vector<PendingFire>, std::vector<std::int64_t>>> led_;
};

// The log ids the pools reported finished.
class Finished {
 public:
  void operator()(std::int64_t id) {
    std::lock_guard lock(mutex_);
    ids_.insert(id);
    ++count_;
    changed_.notify_all();
  }
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWait, [&] { return count_ >= n; });
  }
  std::set<std::int64_t> ids() const {
    std::lock_guard lock(mutex_);
    return ids_;
  }
  std::size_t count() const {
    std::lock_guard lock(mutex_);
    return count_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::set<std::int64_t> ids_;
  std::size_t count_ = 0;
};

class TriggerPoolsTest : public ::testing::Test {
 protected:
  // The gate opens whatever happened, so the pools' threads can end.
  void TearDown() override { sender_.open(); }

  TriggerPools* make(TriggerPools::Options options, std::function<bool()> may_send = {}) {
    TriggerPools::Hooks hooks;
    hooks.finished = [this](std::int64_t id) { finished_(id); };
    hooks.may_send = std::move(may_send);
    pools_ = std::make_unique<TriggerPools>(options, sender_, clock_, std::move(hooks));
    return pools_.get();
  }
  // A pending row owned by node-a, as the scan writes it.
  PendingFire pending(std::int64_t job_id = 1) {
    return pending_at(kStart + 1000 * static_cast<std::int64_t>(store_.logs().size()), job_id);
  }
  // The same, due at `scheduled_ms`.
  PendingFire pending_at(std::int64_t scheduled_ms, std::int64_t job_id = 1) {
    JobLog l;
    l.job_id = job_id;
    l.job_group = 1;
    l.trigger_type = TriggerType::kSchedule;
    l.scheduled_time = scheduled_ms;
    l.admin_node = "node-a";
    l = store_.put_log(l);
    return {l.id, l.job_id, l.scheduled_time};
  }
  static TriggerPools::Options small(std::size_t threads, std::size_t queue) {
    TriggerPools::Options o;
    o.fast_max_threads = o.slow_max_threads = threads;
    o.fast_queue_capacity = o.slow_queue_capacity = queue;
    return o;
  }

  FakeClock clock_{kStart};
  FakeSender sender_;
  FakeScheduleStore store_;
  Finished finished_;
  std::unique_ptr<TriggerPools> pools_;  // destroyed first
};

TEST_F(TriggerPoolsTest, EveryFireIsSentOnceAndReportedFinished) {
  auto pools = make({});
  std::vector<PendingFire> fires;
  for (int i = 0; i < 20; ++i) fires.push_back(pending(i + 1));
  pools->dispatch(fires);
  ASSERT_TRUE(finished_.wait_for(20));
  EXPECT_EQ(sender_.started().size(), 20u);
  EXPECT_EQ(finished_.ids().size(), 20u);
  auto stats = pools->stats();
  EXPECT_EQ(stats.fast, 20u);
  EXPECT_EQ(stats.triggered, 20u);
  EXPECT_EQ(stats.deferred_full, 0u);
}

TEST_F(TriggerPoolsTest, ThreadsGrowOnDemandUpToTheMaximumThenFiresQueue) {
  auto pools = make(small(3, 10));
  sender_.close();
  std::vector<PendingFire> fires;
  for (int i = 0; i < 5; ++i) fires.push_back(pending());
  pools->dispatch(fires);
  ASSERT_TRUE(sender_.wait_started(3));
  auto stats = pools->stats();
  EXPECT_EQ(stats.fast_threads, 3u);
  EXPECT_EQ(stats.fast_queued, 2u);
  sender_.open();
  ASSERT_TRUE(finished_.wait_for(5));
  EXPECT_EQ(pools->stats().fast_threads, 3u);  // idle, not ended yet
}

TEST_F(TriggerPoolsTest, FullPoolLeavesTheFirePendingUntouchedAndCountsIt) {
  auto pools = make(small(1, 1));
  sender_.close();
  auto running = pending(), queued = pending(), refused = pending();
  const JobLog before = store_.log(refused.log_id);
  pools->dispatch({running, queued, refused});
  ASSERT_TRUE(finished_.wait_for(1));
  // Reported finished at once, so the ring takes it again when the feeder brings it back.
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{refused.log_id}));
  EXPECT_EQ(store_.log(refused.log_id), before);  // not failed, not written at all
  EXPECT_EQ(sender_.claimed(), (std::vector<PendingFire>{running, queued}));
  EXPECT_EQ(pools->stats().deferred_full, 1u);
  EXPECT_EQ(store_.log(queued.log_id).state, FireState::kPending);
  sender_.open();
  ASSERT_TRUE(finished_.wait_for(3));
  EXPECT_EQ(sender_.started(), (std::vector<PendingFire>{running, queued}));
}

// Handed over ahead of their instant: prepared at once, on the caller's thread, for the ones
// the pools have room for, and given to the pools at once; a pool's thread posts each only from
// its instant on. The caller is not held until then (the ring prepares the next second meanwhile).
TEST_F(TriggerPoolsTest, FiresHandedOverAheadArePreparedAtOnceAndPostedAtTheirInstant) {
  auto pools = make(small(1, 1));
  auto a = pending_at(kStart + 1000), b = pending_at(kStart + 1000), refused = pending_at(kStart + 1000);
  pools->dispatch({a, b, refused}, kStart + 1000);  // returns without the clock moving
  ASSERT_EQ(sender_.prepared().size(), 1u);
  EXPECT_EQ(sender_.prepared()[0].first, (std::vector<PendingFire>{a, b, refused}));
  EXPECT_EQ(sender_.claimed(), (std::vector<PendingFire>{a, b}));  // room for two
  EXPECT_EQ(sender_.prepared()[0].second, kStart + 1000);
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{refused.log_id}));  // left pending, never claimed
  clock_.wait_for_sleepers(1);  // the pool's thread waits for the instant, `b` queued behind it
  clock_.advance(999ms);
  clock_.wait_for_sleepers(1);
  EXPECT_TRUE(sender_.delivered().empty());
  clock_.advance(1ms);
  ASSERT_TRUE(finished_.wait_for(3));
  EXPECT_EQ(sender_.delivered(), (std::vector<PendingFire>{a, b}));
  EXPECT_EQ(pools->stats().triggered, 2u);
  EXPECT_EQ(pools->stats().deferred_full, 1u);
}

// After a late wake-up the ring hands several seconds over at once, due at the coming one: the
// fires of seconds already past are posted at once, not held for the coming second.
// Lead dispatch: the fires of one executor that takes it are handed over at once, in one call,
// without waiting for their instant; those it does not take are posted at their instant.
TEST_F(TriggerPoolsTest, FiresOfAnExecutorThatTakesLeadAreHandedOverAheadInOneCallEach) {
  auto pools = make(small(4, 4));
  sender_.lead_jobs(1, 1, true);
  sender_.lead_jobs(2, 2, true);
  sender_.lead_jobs(3, 1, false);  // the executor leaves these to /run
  auto a = pending_at(kStart + 1000, 1), b = pending_at(kStart + 1000, 1), c = pending_at(kStart + 1000, 2),
       left = pending_at(kStart + 1000, 3), plain = pending_at(kStart + 1000, 4);
  pools->dispatch({a, b, c, left, plain}, kStart + 1000);
  ASSERT_TRUE(finished_.wait_for(3));  // without the clock moving
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{a.log_id, b.log_id, c.log_id}));
  auto led = sender_.led();
  ASSERT_EQ(led.size(), 2u) << "one call per executor";
  std::sort(led.begin(), led.end(), [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
  EXPECT_EQ(led[0].first, (std::vector<PendingFire>{a, b, left}));
  EXPECT_EQ(led[0].second, (std::vector<std::int64_t>(3, kStart + 1000)));
  EXPECT_EQ(led[1].first, (std::vector<PendingFire>{c}));
  EXPECT_EQ(pools->stats().led, 3u);
  EXPECT_EQ(pools->stats().triggered, 3u);
  clock_.wait_for_sleepers(2);  // `left` and `plain` wait for the instant
  EXPECT_TRUE(sender_.delivered().empty());
  clock_.advance(1s);
  ASSERT_TRUE(finished_.wait_for(5));
  auto delivered = sender_.delivered();
  EXPECT_EQ(std::set<std::int64_t>({delivered.at(0).log_id, delivered.at(1).log_id}),
            (std::set<std::int64_t>{left.log_id, plain.log_id}));
  EXPECT_EQ(pools->stats().led, 3u);
}

// Room is counted per task of a pool thread: the fires handed over to one lead executor take one
// place between them, so a second of many fires to few executors is never refused for places
// its fires do not take. A fire posted on its own takes one; one with no place left is not claimed.
TEST_F(TriggerPoolsTest, TheFiresOfOneLeadExecutorTakeOnePlaceInThePoolsBetweenThem) {
  auto pools = make(small(1, 2));  // three places
  sender_.lead_jobs(1, 1, true);
  sender_.lead_jobs(2, 2, true);
  std::vector<PendingFire> fires;
  for (int i = 0; i < 6; ++i) fires.push_back(pending_at(kStart + 1000, 1 + i % 2));
  auto plain = pending_at(kStart + 1000, 4), refused = pending_at(kStart + 1000, 4);
  std::vector<PendingFire> all = fires;
  all.push_back(plain);
  all.push_back(refused);
  pools->dispatch(all, kStart + 1000);
  ASSERT_TRUE(finished_.wait_for(7));  // without the clock moving: all but `plain` are settled
  std::set<std::int64_t> expected{refused.log_id};
  for (const auto& f : fires) expected.insert(f.log_id);
  EXPECT_EQ(finished_.ids(), expected);
  EXPECT_EQ(sender_.led().size(), 2u) << "one call per executor";
  EXPECT_EQ(pools->stats().led, 6u);
  EXPECT_EQ(pools->stats().deferred_full, 1u);
  std::vector<PendingFire> claimed = fires;
  claimed.push_back(plain);
  EXPECT_EQ(sender_.claimed(), claimed) << "`refused` is not claimed";
  EXPECT_TRUE(sender_.released().empty()) << "nothing claimed and given back";
  clock_.wait_for_sleepers(1);
  clock_.advance(1s);
  ASSERT_TRUE(finished_.wait_for(8));
  EXPECT_EQ(sender_.delivered(), (std::vector<PendingFire>{plain}));
}

// A backlog (a node catching up) is read and claimed in parts, in due order, each handed on before
// the next is prepared.
TEST_F(TriggerPoolsTest, ABacklogIsPreparedAndHandedOnInParts) {
  auto pools = make(small(2, 2));
  sender_.lead_jobs(1, 1, true);
  std::vector<PendingFire> fires;
  for (std::size_t i = 0; i < TriggerPools::kMaxPrepared + 3; ++i) fires.push_back(pending_at(kStart - 2000, 1));
  pools->dispatch(fires, kStart);
  ASSERT_TRUE(finished_.wait_for(fires.size()));  // all due: handed over at once
  const auto prepared = sender_.prepared();
  ASSERT_EQ(prepared.size(), 2u);
  EXPECT_EQ(prepared[0].first, std::vector<PendingFire>(fires.begin(), fires.begin() + TriggerPools::kMaxPrepared));
  EXPECT_EQ(prepared[1].first, std::vector<PendingFire>(fires.begin() + TriggerPools::kMaxPrepared, fires.end()));
  const auto led = sender_.led();
  ASSERT_EQ(led.size(), 2u) << "one hand-over a part";
  EXPECT_EQ(led[0].first.size() + led[1].first.size(), fires.size());
  EXPECT_EQ(pools->stats().led, fires.size());
  EXPECT_EQ(pools->stats().deferred_full, 0u);
}

// A pool thread holding a fire for its instant does not hold up a hand-over queued behind it: the
// hand-overs are queued first.
TEST_F(TriggerPoolsTest, AHandOverIsQueuedBeforeTheFiresPostedAtTheirInstant) {
  auto pools = make(small(1, 1));
  sender_.lead_jobs(1, 1, true);
  auto plain = pending_at(kStart + 1000, 4), a = pending_at(kStart + 1000, 1);
  pools->dispatch({plain, a}, kStart + 1000);
  ASSERT_TRUE(finished_.wait_for(1));  // without the clock moving
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{a.log_id}));
  EXPECT_EQ(pools->stats().led, 1u);
  clock_.wait_for_sleepers(1);
  clock_.advance(1s);
  ASSERT_TRUE(finished_.wait_for(2));
  EXPECT_EQ(sender_.delivered(), (std::vector<PendingFire>{plain}));
}

// A burst handed over seconds ahead: the fires whose executors take lead dispatch are claimed and
// handed over at once, one call per executor; one its executor refuses is posted at its own
// second; one settled is reported finished; the others are answered back, untouched.
TEST_F(TriggerPoolsTest, FiresHandedOverAheadGoToTheirExecutorsAtOnceAndTheRestAreAnswered) {
  auto pools = make(small(4, 4));
  sender_.lead_jobs(1, 1, true);
  sender_.lead_jobs(2, 2, false);  // this executor refuses
  sender_.end_in_prepare(4);
  const std::int64_t second = kStart + 3000;
  auto a = pending_at(second, 1), b = pending_at(second - 200, 1), refused = pending_at(second - 1500, 2),
       plain = pending_at(second, 3), gone = pending_at(second, 4);
  const auto left = pools->hand_over_ahead({a, b, refused, plain, gone});
  EXPECT_EQ(left, (std::vector<PendingFire>{plain}));
  ASSERT_EQ(sender_.prepared_lead().size(), 1u);
  EXPECT_TRUE(sender_.prepared().empty()) << "nothing prepared for an instant";
  ASSERT_TRUE(finished_.wait_for(3));  // without the clock moving
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{a.log_id, b.log_id, gone.log_id}));
  clock_.wait_for_sleepers(1);  // `refused`, after its executor's answer, waits for its second
  auto led = sender_.led();
  ASSERT_EQ(led.size(), 2u) << "one call per executor";
  std::sort(led.begin(), led.end(), [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
  EXPECT_EQ(led[0].first, (std::vector<PendingFire>{a, b}));
  EXPECT_EQ(led[0].second, (std::vector<std::int64_t>{second, second})) << "each at its own second";
  EXPECT_EQ(led[1].first, (std::vector<PendingFire>{refused}));
  EXPECT_EQ(led[1].second, (std::vector<std::int64_t>{second - 1000}));
  EXPECT_EQ(pools->stats().led, 2u);
  clock_.advance(1999ms);
  clock_.wait_for_sleepers(1);
  EXPECT_TRUE(sender_.delivered().empty());
  clock_.advance(1ms);
  ASSERT_TRUE(finished_.wait_for(4));
  EXPECT_EQ(sender_.delivered(), (std::vector<PendingFire>{refused}));
  EXPECT_EQ(finished_.ids().count(plain.log_id), 0u) << "answered back: the ring still holds it";
}

TEST_F(TriggerPoolsTest, NothingIsHandedOverAheadWhenTheLeaseMayHaveRunOutOrThePoolsAreFullOrShutDown) {
  bool lease = false;
  auto pools = make(small(1, 1), [&lease] { return lease; });
  sender_.lead_jobs(1, 1, true);
  auto a = pending_at(kStart + 3000, 1);
  EXPECT_EQ(pools->hand_over_ahead({a}), (std::vector<PendingFire>{a}));
  lease = true;
  sender_.close();
  pools->dispatch({pending_at(kStart - 1000, 5), pending_at(kStart - 1000, 5)});  // the thread and the queue
  ASSERT_TRUE(sender_.wait_started(1));
  EXPECT_EQ(pools->hand_over_ahead({a}), (std::vector<PendingFire>{a}));
  sender_.open();
  ASSERT_TRUE(finished_.wait_for(2));
  pools->shutdown();
  EXPECT_EQ(pools->hand_over_ahead({a}), (std::vector<PendingFire>{a}));
  EXPECT_TRUE(sender_.prepared_lead().empty());
  EXPECT_TRUE(sender_.led().empty());
  EXPECT_EQ(finished_.ids().count(a.log_id), 0u);
}

TEST_F(TriggerPoolsTest, AFireDueNowOrWithinTheMinimumLeadIsPostedNotHandedOver) {
  auto pools = make(small(4, 4));
  sender_.lead_jobs(1, 1, true);
  auto now = pending_at(kStart - 500, 1);
  pools->dispatch({now}, kStart);
  ASSERT_TRUE(finished_.wait_for(1));
  clock_.advance(std::chrono::milliseconds(1000 - TriggerPools::kMinLeadMs + 1));
  auto soon = pending_at(kStart + 1000, 1);
  pools->dispatch({soon}, kStart + 1000);
  clock_.wait_for_sleepers(1);
  clock_.advance(1s);
  ASSERT_TRUE(finished_.wait_for(2));
  EXPECT_TRUE(sender_.led().empty());
  EXPECT_EQ(sender_.delivered().size(), 2u);
}

// A node behind (or its feeder's late fires): several fires already due for one lead executor go
// in one hand-over, which the executor starts at once, rather than one /run each; a lone one,
// and the fires of an executor that does not take lead dispatch, are posted.
TEST_F(TriggerPoolsTest, SeveralFiresAlreadyDueForOneLeadExecutorAreHandedOverInOneCall) {
  auto pools = make(small(4, 8));
  sender_.lead_jobs(1, 1, true);
  sender_.lead_jobs(2, 2, true);
  auto a = pending_at(kStart - 3000, 1), b = pending_at(kStart - 2000, 1), c = pending_at(kStart - 1000, 1),
       lone = pending_at(kStart - 2000, 2), plain = pending_at(kStart - 2000, 4);
  pools->dispatch({a, b, c, lone, plain});
  ASSERT_TRUE(finished_.wait_for(5));  // without the clock moving: all due
  auto led = sender_.led();
  ASSERT_EQ(led.size(), 1u);
  EXPECT_EQ(led[0].first, (std::vector<PendingFire>{a, b, c}));
  EXPECT_EQ(led[0].second, (std::vector<std::int64_t>{kStart - 3000, kStart - 2000, kStart - 1000}))
      << "each at its own instant, which has passed: the executor starts them at once";
  auto delivered = sender_.delivered();
  ASSERT_EQ(delivered.size(), 2u);
  EXPECT_EQ(std::set<std::int64_t>({delivered[0].log_id, delivered[1].log_id}),
            (std::set<std::int64_t>{lone.log_id, plain.log_id}));
  EXPECT_EQ(pools->stats().led, 3u);
  EXPECT_EQ(pools->stats().triggered, 5u);
}

TEST_F(TriggerPoolsTest, ABatchStillQueuedAtShutdownHasEveryClaimGivenBack) {
  auto pools = make(small(1, 4));
  sender_.close();  // the one thread is held by a plain fire
  auto busy = pending_at(kStart - 1000, 9);
  pools->dispatch({busy}, kStart);
  ASSERT_TRUE(sender_.wait_started(1));
  sender_.lead_jobs(1, 1, true);
  auto a = pending_at(kStart + 1000, 1), b = pending_at(kStart + 1000, 1);
  pools->dispatch({a, b}, kStart + 1000);
  std::thread stopper([&] { pools->shutdown(); });
  ASSERT_TRUE(finished_.wait_for(2)) << "the batch is given back while the busy send goes on";
  sender_.open();
  stopper.join();
  EXPECT_TRUE(sender_.led().empty());
  auto released = sender_.released();
  ASSERT_EQ(released.size(), 2u);
  EXPECT_EQ(std::set<std::int64_t>({released[0].log_id, released[1].log_id}), (std::set<std::int64_t>{a.log_id, b.log_id}));
  EXPECT_TRUE(finished_.ids().count(a.log_id) && finished_.ids().count(b.log_id));
}

TEST_F(TriggerPoolsTest, FiresOfASecondAlreadyPastGoAtOnceAndTheRestAtTheirInstant) {
  auto pools = make(small(3, 0));
  auto late = pending_at(kStart - 1000), also_late = pending_at(kStart - 1), due = pending_at(kStart + 1000);
  pools->dispatch({late, also_late, due}, kStart + 1000);
  ASSERT_TRUE(finished_.wait_for(2));  // without the clock moving
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{late.log_id, also_late.log_id}));
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(sender_.delivered().size(), 2u);
  clock_.advance(1s);
  ASSERT_TRUE(finished_.wait_for(3));
  EXPECT_EQ(sender_.delivered().back(), due);
}

TEST_F(TriggerPoolsTest, APreparedFireWaitingForItsInstantAtShutdownIsNotPostedAndHasItsClaimGivenBack) {
  auto pools = make(small(1, 1));
  auto waiting = pending_at(kStart + 1000), queued = pending_at(kStart + 1000);
  pools->dispatch({waiting, queued}, kStart + 1000);
  clock_.wait_for_sleepers(1);
  pools->shutdown();
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{waiting.log_id, queued.log_id}));
  auto released = sender_.released();
  EXPECT_EQ(std::set<std::int64_t>({released.at(0).log_id, released.at(1).log_id}),
            (std::set<std::int64_t>{waiting.log_id, queued.log_id}));
  EXPECT_TRUE(sender_.delivered().empty());
  EXPECT_TRUE(sender_.started().empty());
}

TEST_F(TriggerPoolsTest, FiresSettledWhilePreparedAreCountedAndNeverReachAPool) {
  auto pools = make({});
  sender_.end_in_prepare(9);
  auto gone = pending(9), kept = pending(1);
  pools->dispatch({gone, kept}, kStart);
  ASSERT_TRUE(finished_.wait_for(2));
  EXPECT_EQ(sender_.delivered(), (std::vector<PendingFire>{kept}));
  EXPECT_EQ(pools->stats().dropped, 1u);
  EXPECT_EQ(pools->stats().triggered, 1u);
  EXPECT_EQ(pools->stats().fast, 1u);
}

TEST_F(TriggerPoolsTest, APreparedFireStillQueuedAtShutdownHasItsClaimGivenBack) {
  auto pools = make(small(1, 1));
  sender_.close();
  auto running = pending(), queued = pending();
  pools->dispatch({running, queued}, kStart);
  ASSERT_TRUE(sender_.wait_started(1));
  std::thread stopping([&] { pools->shutdown(); });
  ASSERT_TRUE(finished_.wait_for(1));  // the queued one, given back at once
  EXPECT_EQ(sender_.released(), (std::vector<PendingFire>{queued}));
  sender_.open();
  stopping.join();
  EXPECT_EQ(sender_.delivered(), (std::vector<PendingFire>{running}));
  EXPECT_EQ(finished_.count(), 2u);
}

TEST_F(TriggerPoolsTest, FireAFullPoolRefusedIsSentOnceWhenHandedBackWithRoom) {
  auto options = small(1, 0);
  options.idle_timeout = 1ms;  // so "room" is observable: the pool's one thread ends once idle
  auto pools = make(options);
  sender_.close();
  auto running = pending(), refused = pending();
  pools->dispatch({running, refused});
  ASSERT_TRUE(finished_.wait_for(1));
  ASSERT_TRUE(sender_.wait_started(1));
  pools->dispatch({refused});  // fed again while the pool is still full: refused again
  ASSERT_TRUE(finished_.wait_for(2));
  EXPECT_EQ(pools->stats().deferred_full, 2u);
  sender_.open();
  ASSERT_TRUE(sender_.wait_done(1));
  ASSERT_TRUE(finished_.wait_for(3));
  ASSERT_TRUE(testing::eventually([&] { return pools->stats().fast_threads == 0; }));  // room again
  pools->dispatch({refused});
  ASSERT_TRUE(finished_.wait_for(4));
  EXPECT_EQ(sender_.started(), (std::vector<PendingFire>{running, refused}));
  EXPECT_EQ(pools->stats().triggered, 2u);
  EXPECT_EQ(pools->stats().deferred_full, 2u);
}

TEST_F(TriggerPoolsTest, JobWithMoreThanTenSlowTriggersInAMinuteGoesToTheSlowPool) {
  auto pools = make({});
  sender_.set_took(7, 600ms);
  sender_.set_took(8, 500ms);  // not more than the threshold
  for (int i = 0; i < 10; ++i) {
    pools->dispatch({pending(7), pending(8)});
    ASSERT_TRUE(finished_.wait_for(static_cast<std::size_t>(2 * (i + 1))));
  }
  EXPECT_FALSE(pools->slow(7));  // ten is not more than ten
  pools->dispatch({pending(7)});
  ASSERT_TRUE(finished_.wait_for(21));
  EXPECT_TRUE(pools->slow(7));
  EXPECT_FALSE(pools->slow(8));
  EXPECT_EQ(pools->stats().slow, 0u);

  pools->dispatch({pending(7), pending(8)});
  ASSERT_TRUE(finished_.wait_for(23));
  EXPECT_EQ(pools->stats().slow, 1u);
  EXPECT_EQ(pools->stats().fast, 22u);

  clock_.advance(60s);  // a new minute: the counts start again
  EXPECT_FALSE(pools->slow(7));
}

TEST_F(TriggerPoolsTest, FireIsLeftPendingUntouchedWhenTheLeaseMayHaveRunOut) {
  bool lease = false;
  auto pools = make({}, [&lease] { return lease; });
  auto f = pending();
  pools->dispatch({f});
  ASSERT_TRUE(finished_.wait_for(1));
  EXPECT_TRUE(sender_.started().empty());
  EXPECT_EQ(pools->stats().deferred, 1u);
  EXPECT_EQ(store_.log(f.log_id).state, FireState::kPending);
}

TEST_F(TriggerPoolsTest, OutcomesAreCounted) {
  auto pools = make({});
  sender_.set_outcome(SendOutcome::Kind::kDropped);
  pools->dispatch({pending()});
  ASSERT_TRUE(finished_.wait_for(1));
  sender_.set_outcome(SendOutcome::Kind::kFailed);
  pools->dispatch({pending()});
  ASSERT_TRUE(finished_.wait_for(2));
  auto stats = pools->stats();
  EXPECT_EQ(stats.dropped, 1u);
  EXPECT_EQ(stats.failed, 1u);
  EXPECT_EQ(stats.triggered, 0u);
}

TEST_F(TriggerPoolsTest, ShutdownLetsRunningSendsFinishAndLeavesQueuedFiresPending) {
  auto pools = make(small(1, 5));
  sender_.close();
  auto running = pending(), first_queued = pending(), second_queued = pending();
  pools->dispatch({running, first_queued, second_queued});
  ASSERT_TRUE(sender_.wait_started(1));
  std::thread stopping([&] { pools->shutdown(); });
  ASSERT_TRUE(finished_.wait_for(2));  // the queued ones, given back at once
  EXPECT_EQ(finished_.ids(), (std::set<std::int64_t>{first_queued.log_id, second_queued.log_id}));
  sender_.open();
  stopping.join();
  EXPECT_EQ(finished_.count(), 3u);
  EXPECT_EQ(sender_.started(), (std::vector<PendingFire>{running}));
  EXPECT_EQ(store_.log(first_queued.log_id).state, FireState::kPending);
  auto late = pending();
  pools->dispatch({late});  // after shutdown: left pending, not failed
  EXPECT_EQ(finished_.count(), 4u);
  EXPECT_EQ(pools->stats().deferred_full, 0u);
  EXPECT_EQ(store_.log(late.log_id).state, FireState::kPending);
}

TEST(FireThreadPool, IdleThreadsEnd) {
  std::mutex mutex;
  std::condition_variable cv;
  int ran = 0;
  FireThreadPool pool({"test", 4, 10, 20ms}, [&](const PendingFire&) {
    std::lock_guard lock(mutex);
    ++ran;
    cv.notify_all();
  });
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(pool.submit({i + 1, 1, 0}));
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return ran == 4; }));
  }
  EXPECT_TRUE(pool.wait_for_threads_at_most(0, kWait));
  EXPECT_TRUE(pool.submit({5, 1, 0}));  // a new thread for new work
  EXPECT_TRUE(pool.shutdown().empty());
}

}  // namespace
}  // namespace cronwheel::admin
