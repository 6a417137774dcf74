#include "admin/scheduler/second_ring.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "common/util/floor_division.h"

namespace cronwheel::admin {

namespace {

constexpr std::int64_t kMillisPerSecond = 1000;

using util::floor_div;
using util::floor_mod;

// The first second boundary at or after `ms`: the fire never goes out before its time.
std::int64_t second_of(std::int64_t ms) { return floor_div(ms + kMillisPerSecond - 1, kMillisPerSecond); }

}  // namespace

SecondRing::SecondRing(common::Clock& clock, HandOff hand_off, std::chrono::milliseconds lead)
    : SecondRing(clock, std::move(hand_off), lead, Ahead{}) {}

SecondRing::SecondRing(common::Clock& clock, HandOff hand_off, std::chrono::milliseconds lead, Ahead ahead)
    : clock_(clock),
      hand_off_(std::move(hand_off)),
      lead_ms_(lead.count()),
      ahead_(std::move(ahead)),
      processed_(floor_div(clock.now_ms(), kMillisPerSecond) - 1) {
  if (lead_ms_ < 0 || lead_ms_ >= kMillisPerSecond) {
    throw std::invalid_argument("second ring: the lead must be at least 0 and less than a second");
  }
  if (ahead_.offer && (ahead_.horizon.count() < 0 || ahead_.horizon >= std::chrono::minutes(1) || ahead_.chunk == 0)) {
    throw std::invalid_argument("second ring: the horizon ahead must be at least 0 and less than a minute, the chunk at least 1");
  }
}

SecondRing::~SecondRing() { stop(); }

void SecondRing::watch(Watch watch) {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable()) watch_ = std::move(watch);
}

void SecondRing::start() {
  std::lock_guard lock(mutex_);
  if (stopped_ || thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

std::vector<PendingFire> SecondRing::stop() noexcept {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  std::lock_guard lock(mutex_);
  stopped_ = true;
  std::vector<PendingFire> left = std::move(due_now_);
  due_now_.clear();
  for (const auto& fire : left) known_.erase(fire.log_id);
  for (auto& slot : slots_) {
    for (auto& entry : slot) {
      known_.erase(entry.fire.log_id);
      left.push_back(entry.fire);
    }
    slot.clear();
  }
  held_ = 0;
  std::sort(left.begin(), left.end(), due_order);
  return left;
}

bool SecondRing::push(const PendingFire& fire) {
  std::lock_guard lock(mutex_);
  if (stopped_) return false;
  if (!known_.insert(fire.log_id).second) return false;
  // A second already processed will not come round again for a minute: the next wake-up
  // takes it instead.
  const std::int64_t second = std::max(second_of(fire.scheduled_time), processed_ + 1);
  slots_[static_cast<std::size_t>(floor_mod(second, kSlots))].push_back({fire, second});
  ++held_;
  return true;
}

bool SecondRing::push_due_now(const PendingFire& fire) {
  if (fire.scheduled_time > clock_.now_ms()) return push(fire);
  std::lock_guard lock(mutex_);
  if (stopped_) return false;
  if (!known_.insert(fire.log_id).second) return false;
  due_now_.push_back(fire);
  ++held_;
  sleep_.request_stop();
  return true;
}

void SecondRing::finished(std::int64_t log_id) {
  std::lock_guard lock(mutex_);
  known_.erase(log_id);
}

std::size_t SecondRing::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

std::size_t SecondRing::known() const {
  std::lock_guard lock(mutex_);
  return known_.size();
}

std::vector<PendingFire> SecondRing::take_through(std::int64_t through) {
  std::vector<PendingFire> out;
  if (through <= processed_) return out;  // nothing new (or the wall clock stepped back)
  auto take = [&](std::vector<Entry>& slot) {
    auto keep = std::partition(slot.begin(), slot.end(), [&](const Entry& e) { return e.second > through; });
    for (auto it = keep; it != slot.end(); ++it) out.push_back(it->fire);
    slot.erase(keep, slot.end());
  };
  if (through - processed_ >= kSlots) {
    for (auto& slot : slots_) take(slot);
  } else {
    for (std::int64_t s = processed_ + 1; s <= through; ++s) take(slots_[static_cast<std::size_t>(floor_mod(s, kSlots))]);
  }
  processed_ = through;
  held_ -= out.size();
  std::sort(out.begin(), out.end(), due_order);
  return out;
}

void SecondRing::hand_off(std::vector<PendingFire> due, std::int64_t due_ms) {
  if (due.empty()) return;
  try {
    hand_off_(due, due_ms);
  } catch (const std::exception& e) {
    // The fires stay pending in the database; forgetting them lets the feeder bring them back.
    spdlog::error("scheduler: handing {} fires to the trigger pools failed: {}", due.size(), e.what());
    std::lock_guard lock(mutex_);
    for (const auto& f : due) known_.erase(f.log_id);
  }
}

std::vector<PendingFire> SecondRing::take_ahead(std::int64_t last, std::size_t max) {
  std::vector<PendingFire> out;
  for (std::int64_t s = processed_ + 1; s <= last && out.size() < max; ++s) {
    auto& slot = slots_[static_cast<std::size_t>(floor_mod(s, kSlots))];
    auto offer = std::stable_partition(slot.begin(), slot.end(), [&](const Entry& e) { return e.second != s || e.offered; });
    std::sort(offer, slot.end(), [](const Entry& a, const Entry& b) { return due_order(a.fire, b.fire); });
    const auto n = std::min<std::ptrdiff_t>(slot.end() - offer, static_cast<std::ptrdiff_t>(max - out.size()));
    for (auto it = offer; it != offer + n; ++it) out.push_back(it->fire);
    slot.erase(offer, offer + n);
  }
  held_ -= out.size();
  return out;
}

void SecondRing::offer_ahead(const std::stop_token& interrupt) {
  if (!ahead_.offer || ahead_.horizon.count() == 0) return;
  while (!interrupt.stop_requested()) {
    const std::int64_t now = clock_.now_ms();
    if (kMillisPerSecond - floor_mod(now + lead_ms_, kMillisPerSecond) < kAheadMarginMs) return;
    std::vector<PendingFire> offered;
    {
      std::lock_guard lock(mutex_);
      offered = take_ahead(floor_div(now + ahead_.horizon.count(), kMillisPerSecond), ahead_.chunk);
    }
    if (offered.empty()) return;
    std::vector<PendingFire> left;
    const std::int64_t due_ms = second_of(offered.front().scheduled_time) * kMillisPerSecond;
    try {
      left = ahead_.offer(offered);
    } catch (const std::exception& e) {
      // Held again, all of them: one taken meanwhile is no longer pending at its second, and dropped.
      spdlog::error("scheduler: offering {} fires ahead failed: {}", offered.size(), e.what());
      left = offered;
    }
    if (watch_ && left.size() < offered.size()) watch_(offered.size() - left.size(), due_ms, clock_.now_ms());
    std::lock_guard lock(mutex_);
    for (const auto& fire : left) {
      const std::int64_t second = std::max(second_of(fire.scheduled_time), processed_ + 1);
      slots_[static_cast<std::size_t>(floor_mod(second, kSlots))].push_back({fire, second, true});
      ++held_;
    }
  }
}

void SecondRing::run(std::stop_token stop) {
  bool first_turn = true;  // its seconds go back to the ring's making, not to a late hand-off
  while (!stop.stop_requested()) {
    std::vector<PendingFire> due;
    std::vector<PendingFire> due_now;
    // The coming boundary when within `lead` of it, else the last one passed.
    const std::int64_t through = floor_div(clock_.now_ms() + lead_ms_, kMillisPerSecond);
    std::int64_t from = through;  // the first second this wake-up covers
    std::stop_source sleep;
    {
      std::lock_guard lock(mutex_);
      if (!first_turn) from = std::min(processed_ + 1, through);
      due = take_through(through);
      due_now.swap(due_now_);
      held_ -= due_now.size();
      sleep_ = sleep;
    }
    first_turn = false;
    const std::size_t handed = due.size();
    hand_off(std::move(due), through * kMillisPerSecond);
    if (watch_ && handed > 0) watch_(handed, from * kMillisPerSecond, clock_.now_ms());
    std::sort(due_now.begin(), due_now.end(), due_order);
    hand_off(std::move(due_now), clock_.now_ms());
    {
      std::stop_callback interrupt(stop, [&sleep] { sleep.request_stop(); });
      offer_ahead(sleep.get_token());
    }
    // The next wall-second boundary, measured afresh each time so waits never accumulate drift.
    // push_due_now() ends the wait early (its request lands on `sleep`, even before the wait).
    const std::int64_t wait = kMillisPerSecond - floor_mod(clock_.now_ms() + lead_ms_, kMillisPerSecond);
    std::stop_callback forward(stop, [&sleep] { sleep.request_stop(); });
    clock_.sleep_until(clock_.steady_now() + std::chrono::milliseconds(wait), sleep.get_token());
  }
}

}  // namespace cronwheel::admin
