#include "admin/trigger/trigger_pools.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

constexpr std::int64_t kMillisPerMinute = 60'000;

}  // namespace

TriggerPools::TriggerPools(Options options, FireSender& sender, common::Clock& clock, Hooks hooks)
    : options_(options), sender_(sender), clock_(clock), hooks_(std::move(hooks)) {
  auto run = [this](const PendingFire& fire) { send(fire); };
  fast_pool_ = std::make_unique<FireThreadPool>(
      FireThreadPool::Options{"trigger-fast", options_.fast_max_threads, options_.fast_queue_capacity, options_.idle_timeout},
      run);
  slow_pool_ = std::make_unique<FireThreadPool>(
      FireThreadPool::Options{"trigger-slow", options_.slow_max_threads, options_.slow_queue_capacity, options_.idle_timeout},
      run);
}

TriggerPools::~TriggerPools() { shutdown(); }

void TriggerPools::dispatch(const std::vector<PendingFire>& fires, std::int64_t not_before_ms) {
  if (shut_down_.load()) {
    // Not a full queue: the node is stopping, and the fires stay pending for whoever sends them.
    for (const auto& fire : fires) hooks_.finished(fire.log_id);
    return;
  }
  if (fires.empty()) return;
  if (hooks_.may_send && !hooks_.may_send()) {
    deferred_.fetch_add(fires.size(), std::memory_order_relaxed);
    for (const auto& fire : fires) hooks_.finished(fire.log_id);
    return;
  }
  // In parts of at most kMaxPrepared, in due order: the first part's fires are on their way while
  // the next is read and claimed, and no statement carries a backlog whole.
  std::size_t refused = 0;
  if (fires.size() <= kMaxPrepared) {  // a second's fires: one part, not copied
    note_refused(dispatch_part(fires, not_before_ms), fires.size());
    return;
  }
  for (std::size_t begin = 0; begin < fires.size(); begin += kMaxPrepared) {
    const std::size_t end = std::min(fires.size(), begin + kMaxPrepared);
    refused += dispatch_part(std::vector<PendingFire>(fires.begin() + static_cast<std::ptrdiff_t>(begin),
                                                      fires.begin() + static_cast<std::ptrdiff_t>(end)),
                             not_before_ms);
  }
  note_refused(refused, fires.size());
}

std::size_t TriggerPools::dispatch_part(const std::vector<PendingFire>& fires, std::int64_t not_before_ms) {
  // Room is counted before anything is claimed, once the sender knows where each fire goes: a
  // fire to post takes a place in its pool, the fires of one lead executor take one between them
  // (one hand-over request). A fire with no room left stays pending, untouched, and the feeder
  // brings it back within a second (back-pressure). Counting per fire would refuse a lead
  // executor's fires for room they never take: after a slow database second the feeder's late
  // fires and the coming second's, handed on together, outnumber a pool's places.
  std::vector<bool> to_slow(fires.size());
  for (std::size_t i = 0; i < fires.size(); ++i) to_slow[i] = slow(fires[i].job_id);
  std::size_t room[2] = {fast_pool_->room(), slow_pool_->room()};
  if (room[0] == 0 && room[1] == 0) {  // not even read
    fast_refused_.fetch_add(std::count(to_slow.begin(), to_slow.end(), false), std::memory_order_relaxed);
    for (const auto& fire : fires) hooks_.finished(fire.log_id);
    return fires.size();
  }
  std::unordered_set<std::string> lead_requests;
  const std::int64_t admitted_at = clock_.now_ms();
  auto admit = [&](std::size_t i, const std::optional<std::string>& lead_key) {
    const bool ahead = post_time(fires[i], not_before_ms) - admitted_at >= kMinLeadMs;
    const bool leads = lead_key && (ahead || !to_slow[i]);
    if (leads && lead_requests.count(*lead_key) != 0) return true;  // in a request counted already
    std::size_t& left = room[leads || !to_slow[i] ? 0 : 1];
    if (left == 0) return false;
    --left;
    if (leads) lead_requests.insert(*lead_key);
    return true;
  };

  // Claimed now; each goes to its pool at once, and the pool's thread waits for the fire's
  // instant before posting it. The caller is not held up: the next second can be prepared while
  // this one is being posted.
  auto prepared = sender_.prepare(fires, not_before_ms, admit);
  std::size_t refused = 0;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    if (!prepared[i].refused) continue;
    ++refused;
    if (!to_slow[i]) fast_refused_.fetch_add(1, std::memory_order_relaxed);
  }
  std::size_t late_refused = 0;
  const std::int64_t now = clock_.now_ms();
  std::unordered_map<std::string, LeadBatch> batches;
  // Fires due now (or within kMinLeadMs) of lead executors, by executor: several go in one
  // hand-over too, which the executor starts at once, rather than one /run each (a node behind,
  // or its feeder's late fires); a lone one is posted, unless its executor gets a hand-over anyway.
  std::unordered_map<std::string, LeadBatch> due_now;
  // Posted after the hand-overs are queued: a pool thread holding a fire waits for its instant,
  // and a hand-over behind it in the queue would wait too.
  struct Post {
    PreparedFire* fire;
    std::int64_t at;
    bool to_slow;
  };
  std::vector<Post> posts;
  auto post = [&](PreparedFire& p, std::int64_t post_at, bool to_slow) { posts.push_back({&p, post_at, to_slow}); };
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    PreparedFire& p = prepared[i];
    if (p.refused) {
      hooks_.finished(p.fire.log_id);
      continue;
    }
    if (p.ended) {
      count(p.ended->kind);
      hooks_.finished(p.fire.log_id);
      continue;
    }
    const std::int64_t post_at = post_time(p.fire, not_before_ms);
    const bool ahead = post_at - now >= kMinLeadMs;
    if (ahead || !to_slow[i]) {
      if (auto key = sender_.lead_key(p)) {
        LeadBatch& batch = (ahead ? batches : due_now)[*key];
        batch.fires.push_back(std::move(p));
        batch.post_at.push_back(post_at);
        continue;
      }
    }
    post(p, post_at, to_slow[i]);
  }
  for (auto& [key, batch] : due_now) {
    if (batch.fires.size() == 1 && batches.count(key) == 0) {
      post(batch.fires.front(), batch.post_at.front(), false);
      continue;
    }
    LeadBatch& into = batches[key];
    std::move(batch.fires.begin(), batch.fires.end(), std::back_inserter(into.fires));
    into.post_at.insert(into.post_at.end(), batch.post_at.begin(), batch.post_at.end());
  }
  late_refused += submit_lead_batches(batches);
  for (const Post& p : posts) {
    FireThreadPool& pool = p.to_slow ? *slow_pool_ : *fast_pool_;
    if (submit_prepared(*p.fire, p.at, pool)) {
      (p.to_slow ? slow_ : fast_).fetch_add(1, std::memory_order_relaxed);
    } else {
      ++late_refused;  // shut down meanwhile, or fuller than its room said
    }
  }
  if (late_refused > 0) deferred_full_.fetch_add(late_refused, std::memory_order_relaxed);
  return refused;
}

std::vector<PendingFire> TriggerPools::hand_over_ahead(const std::vector<PendingFire>& fires) noexcept {
  // Not now: the ring holds them for their second, where dispatch() applies the usual rules.
  if (fires.empty() || shut_down_.load() || fast_pool_->room() == 0 || (hooks_.may_send && !hooks_.may_send())) {
    return fires;
  }
  std::vector<PendingFire> left;
  try {
    auto prepared = sender_.prepare_lead(fires);
    std::unordered_map<std::string, LeadBatch> batches;
    std::size_t late_refused = 0;
    for (auto& p : prepared) {
      if (p.ended) {
        count(p.ended->kind);
        hooks_.finished(p.fire.log_id);
        continue;
      }
      if (!p.send) {
        left.push_back(p.fire);
        continue;
      }
      // Its own second: never before it.
      const std::int64_t post_at = post_time(p.fire, std::numeric_limits<std::int64_t>::max());
      if (auto key = sender_.lead_key(p)) {
        LeadBatch& batch = batches[*key];
        batch.fires.push_back(std::move(p));
        batch.post_at.push_back(post_at);
        continue;
      }
      // Claimed, but its executor stopped taking lead dispatch meanwhile: posted at its instant.
      if (submit_prepared(p, post_at, *fast_pool_)) {
        fast_.fetch_add(1, std::memory_order_relaxed);
      } else {
        ++late_refused;
      }
    }
    late_refused += submit_lead_batches(batches);
    if (late_refused > 0) deferred_full_.fetch_add(late_refused, std::memory_order_relaxed);
  } catch (const std::exception& e) {
    // Only the containers above can throw (memory). All go back to the ring: at their second, a
    // fire handed over or settled meanwhile is no longer pending and is dropped, the others go out.
    spdlog::error("scheduler: handing {} fires over ahead failed: {}", fires.size(), e.what());
    return fires;
  }
  return left;
}

std::size_t TriggerPools::submit_lead_batches(std::unordered_map<std::string, LeadBatch>& batches) {
  std::size_t refused_fires = 0;
  for (auto& [key, batch] : batches) {
    // One thread hands the executor's fires over; the fast pool's, since it only waits for one
    // answer. Its first fire is the pool's token for the batch.
    const PendingFire first = batch.fires.front().fire;
    const std::size_t count = batch.fires.size();
    {
      std::lock_guard lock(prepared_mutex_);
      lead_batches_[first.log_id] = std::move(batch);
    }
    if (fast_pool_->submit(first)) {
      fast_.fetch_add(count, std::memory_order_relaxed);
      continue;
    }
    if (auto refused = take_lead_batch(first.log_id)) {
      for (const auto& p : refused->fires) {
        sender_.release(p);
        hooks_.finished(p.fire.log_id);
      }
    }
    refused_fires += count;
  }
  return refused_fires;
}

bool TriggerPools::submit_prepared(const PreparedFire& fire, std::int64_t post_at, FireThreadPool& pool) {
  const std::int64_t id = fire.fire.log_id;
  {
    std::lock_guard lock(prepared_mutex_);
    prepared_[id] = Prepared{fire, post_at};
  }
  if (pool.submit(fire.fire)) return true;
  // The claim goes back.
  {
    std::lock_guard lock(prepared_mutex_);
    prepared_.erase(id);
  }
  sender_.release(fire);
  hooks_.finished(id);
  return false;
}

std::optional<TriggerPools::LeadBatch> TriggerPools::take_lead_batch(std::int64_t log_id) {
  std::lock_guard lock(prepared_mutex_);
  auto it = lead_batches_.find(log_id);
  if (it == lead_batches_.end()) return std::nullopt;
  LeadBatch batch = std::move(it->second);
  lead_batches_.erase(it);
  return batch;
}

void TriggerPools::hand_over(LeadBatch batch) noexcept {
  if (stop_.stop_requested() || (hooks_.may_send && !hooks_.may_send())) {
    if (!stop_.stop_requested()) deferred_.fetch_add(batch.fires.size(), std::memory_order_relaxed);
    for (const auto& p : batch.fires) {
      sender_.release(p);
      hooks_.finished(p.fire.log_id);
    }
    return;
  }
  const auto outcomes = sender_.lead(batch.fires, batch.post_at);
  std::size_t refused = 0;
  for (std::size_t i = 0; i < batch.fires.size(); ++i) {
    const PreparedFire& p = batch.fires[i];
    if (i < outcomes.size() && outcomes[i]) {
      count(outcomes[i]->kind);
      if (outcomes[i]->kind == SendOutcome::Kind::kTriggered) led_.fetch_add(1, std::memory_order_relaxed);
      hooks_.finished(p.fire.log_id);
      continue;
    }
    // Not handed over: posted at its instant like any prepared fire.
    if (!submit_prepared(p, batch.post_at[i], *fast_pool_)) ++refused;
  }
  if (refused > 0) deferred_full_.fetch_add(refused, std::memory_order_relaxed);
}

void TriggerPools::dispatch(const std::vector<PendingFire>& fires) { dispatch(fires, clock_.now_ms()); }

void TriggerPools::note_refused(std::size_t refused, std::size_t of) {
  if (refused > 0) deferred_full_.fetch_add(refused, std::memory_order_relaxed);
  // Said once when the pools fill up and once when they take everything again, not every second.
  const bool was_full = full_.exchange(refused > 0, std::memory_order_relaxed);
  if (refused > 0 && !was_full) {
    spdlog::warn("scheduler: trigger pools full: {} of {} fires stay pending and go out late, as room frees up",
                 refused, of);
  } else if (refused == 0 && was_full && of > 0) {
    spdlog::info("scheduler: trigger pools take fires again");
  }
}

std::optional<TriggerPools::Prepared> TriggerPools::take_prepared(std::int64_t log_id) {
  std::lock_guard lock(prepared_mutex_);
  auto it = prepared_.find(log_id);
  if (it == prepared_.end()) return std::nullopt;
  Prepared p = std::move(it->second);
  prepared_.erase(it);
  return p;
}

std::uint64_t TriggerPools::sends() const noexcept {
  return triggered_.load(std::memory_order_relaxed) + failed_.load(std::memory_order_relaxed);
}

void TriggerPools::count(SendOutcome::Kind kind) {
  switch (kind) {
    case SendOutcome::Kind::kTriggered:
      triggered_.fetch_add(1, std::memory_order_relaxed);
      break;
    case SendOutcome::Kind::kFailed:
      failed_.fetch_add(1, std::memory_order_relaxed);
      break;
    case SendOutcome::Kind::kDropped:
      dropped_.fetch_add(1, std::memory_order_relaxed);
      break;
  }
}

void TriggerPools::send(const PendingFire& fire) noexcept {
  if (auto batch = take_lead_batch(fire.log_id)) {
    hand_over(std::move(*batch));
    return;
  }
  auto prepared = take_prepared(fire.log_id);
  if (prepared) {
    // Its instant: only the POST is left. Shutdown ends the wait, and the fire is not sent.
    const std::int64_t early_ms = prepared->post_at - clock_.now_ms();
    if (early_ms > 0) clock_.sleep_until(clock_.steady_now() + std::chrono::milliseconds(early_ms), stop_.get_token());
    if (stop_.stop_requested()) {
      sender_.release(prepared->fire);
      hooks_.finished(fire.log_id);
      return;
    }
  }
  if (hooks_.may_send && !hooks_.may_send()) {
    if (prepared) sender_.release(prepared->fire);
    deferred_.fetch_add(1, std::memory_order_relaxed);
    hooks_.finished(fire.log_id);
    return;
  }
  lateness_.observe(static_cast<double>(clock_.now_ms() - fire.scheduled_time) / 1000.0);
  const SendOutcome outcome = prepared ? sender_.deliver(prepared->fire) : sender_.send(fire);
  count(outcome.kind);
  if (outcome.kind == SendOutcome::Kind::kTriggered) send_triggered_.observe(static_cast<double>(outcome.took.count()) / 1000.0);
  if (outcome.kind == SendOutcome::Kind::kFailed) send_failed_.observe(static_cast<double>(outcome.took.count()) / 1000.0);
  note_duration(fire.job_id, outcome.took);
  hooks_.finished(fire.log_id);
}

void TriggerPools::note_duration(std::int64_t job_id, std::chrono::milliseconds took) {
  if (took <= options_.slow_trigger) return;
  const std::int64_t minute = clock_.now_ms() / kMillisPerMinute;
  std::lock_guard lock(slow_mutex_);
  if (minute != minute_) {
    slow_counts_.clear();
    minute_ = minute;
  }
  ++slow_counts_[job_id];
}

bool TriggerPools::slow(std::int64_t job_id) const {
  const std::int64_t minute = clock_.now_ms() / kMillisPerMinute;
  std::lock_guard lock(slow_mutex_);
  if (minute != minute_) {
    slow_counts_.clear();
    minute_ = minute;
    return false;
  }
  auto it = slow_counts_.find(job_id);
  return it != slow_counts_.end() && it->second > options_.slow_after;
}

void TriggerPools::shutdown() noexcept {
  shut_down_.store(true);
  stop_.request_stop();  // threads waiting for a fire's instant give it back
  for (auto* pool : {fast_pool_.get(), slow_pool_.get()}) {
    for (const auto& fire : pool->close()) {
      // Never started: a claimed one goes back to pending.
      if (auto batch = take_lead_batch(fire.log_id)) {
        for (const auto& p : batch->fires) {
          sender_.release(p);
          hooks_.finished(p.fire.log_id);
        }
        continue;
      }
      if (auto prepared = take_prepared(fire.log_id)) sender_.release(prepared->fire);
      hooks_.finished(fire.log_id);
    }
  }
  for (auto* pool : {fast_pool_.get(), slow_pool_.get()}) pool->join();
  sender_.flush();  // the answers of the last sends are written before the node lets go of its lease
}

TriggerPools::Stats TriggerPools::stats() const {
  Stats s;
  s.fast = fast_.load(std::memory_order_relaxed);
  s.slow = slow_.load(std::memory_order_relaxed);
  s.deferred_full = deferred_full_.load(std::memory_order_relaxed);
  s.triggered = triggered_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.deferred = deferred_.load(std::memory_order_relaxed);
  s.led = led_.load(std::memory_order_relaxed);
  s.fast_threads = fast_pool_->threads();
  s.slow_threads = slow_pool_->threads();
  s.fast_queued = fast_pool_->queued();
  s.slow_queued = slow_pool_->queued();
  s.lateness = lateness_.snapshot();
  s.send_triggered = send_triggered_.snapshot();
  s.send_failed = send_failed_.snapshot();
  return s;
}

}  // namespace cronwheel::admin
