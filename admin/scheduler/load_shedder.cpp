#include "admin/scheduler/load_shedder.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "common/util/floor_division.h"

namespace cronwheel::admin {

namespace {

// A cut when the node is late although its share is already below what it has shown it sends.
constexpr double kCut = 0.9;

std::int64_t second_of(std::int64_t ms) { return util::floor_div(ms, 1000); }

}  // namespace

LoadShedder::LoadShedder(Options options) : options_(options) {}

LoadShedder::Second& LoadShedder::at(std::int64_t second) {
  Second& s = seconds_[static_cast<std::size_t>(util::floor_mod(second, static_cast<std::int64_t>(kSeconds)))];
  if (s.second != second) s = Second{second};
  return s;
}

void LoadShedder::sample(std::int64_t now_ms) {
  const std::uint64_t sends = options_.sends ? options_.sends() : 0;
  const std::uint64_t refusals = options_.refusals ? options_.refusals() : 0;
  const std::int64_t second = second_of(now_ms);
  if (sampled_) {
    if (sends >= sends_seen_) at(second).sent += sends - sends_seen_;
    if (refusals > refusals_seen_) {
      refused_ += refusals - refusals_seen_;
      if (sum(&Second::handed, second - 1, second + 1) >= options_.min_fires) {
        last_late_second_ = std::max(last_late_second_, second);
        at(second).late = true;
      }
    }
  }
  sends_seen_ = sends;
  refusals_seen_ = refusals;
  sampled_ = true;
}

void LoadShedder::handed_over(std::size_t fires, std::int64_t due_ms, std::int64_t done_ms) {
  if (!enabled() || fires == 0) return;
  std::lock_guard lock(mutex_);
  sample(done_ms);
  const std::int64_t second = second_of(done_ms);
  at(second).handed += fires;
  const std::int64_t late_ms = done_ms - due_ms;
  if (late_ms <= options_.late_after.count()) return;
  if (sum(&Second::handed, second - 1, second + 1) < options_.min_fires) return;
  last_late_ms_ = late_ms;
  last_late_second_ = std::max(last_late_second_, second);
  at(second).late = true;
}

void LoadShedder::decided(std::size_t fires, std::int64_t now_ms) {
  if (!enabled() || fires == 0) return;
  std::lock_guard lock(mutex_);
  at(second_of(now_ms)).decided += fires;
}

double LoadShedder::keep(std::int64_t now_ms) {
  if (!enabled()) return 1.0;
  std::lock_guard lock(mutex_);
  sample(now_ms);
  const std::int64_t second = second_of(now_ms);
  if (second == updated_second_) return keep_;
  const std::int64_t window_s = std::max<std::int64_t>(1, options_.window_ms / 1000);
  // Late now, and in most seconds of the last window: a node catching up after a stall (paused,
  // its database restarting, taking over a dead node's jobs) is late for a second or two and
  // then on time; one past its capacity stays late.
  const std::int64_t late_seconds = sum(&Second::late, second - window_s + 1, second + 1);
  const bool late = last_late_second_ >= second - 1 && late_seconds >= std::max<std::int64_t>(1, window_s - 1);
  if (late) {
    if (now_ms >= next_cut_ms_) {
      const std::uint64_t decided = sum(&Second::decided, second - window_s, second + 1);
      // What the node has shown it sends in a window: the most in any window of the last
      // kSeconds, since a node behind sends less than it can (its fires wait in full pools and
      // go late by /run).
      std::uint64_t sent = 0;
      for (std::int64_t end = second + 1; end > second + 1 - static_cast<std::int64_t>(kSeconds) + window_s; --end) {
        sent = std::max(sent, options_.sends ? sum(&Second::sent, end - window_s, end)
                                             : sum(&Second::handed, end - window_s, end));
      }
      // Down to what it sends, or by a tenth when that is no lower: the share may already be
      // below it, the node late all the same.
      double share = keep_ * kCut;
      if (decided > 0) {
        const double sendable = 0.9 * static_cast<double>(sent) / static_cast<double>(decided);
        if (sendable < keep_) share = sendable;
      }
      keep_ = std::max(options_.min_keep, share);
      cut_sent_ = sent;
      cut_decided_ = decided;
      ++cuts_;
      next_cut_ms_ = now_ms + options_.window_ms + 1000;
      spdlog::info("scheduler: past capacity (up to {} fires sent in {} s of the last {} s, {} decided in the last "
                   "{} s; hand-offs up to {} ms late, {} fast-pool refusals so far): scans keep {:.0f} % of the "
                   "fire times due",
                   sent, window_s, kSeconds, decided, window_s, last_late_ms_, refused_, keep_ * 100);
    }
  } else if (keep_ < 1.0 && last_late_second_ < second - window_s) {
    const std::int64_t elapsed = updated_second_ < 0 ? 1 : std::min<std::int64_t>(second - updated_second_, 10);
    keep_ = std::min(1.0, keep_ + options_.recover_step * static_cast<double>(std::max<std::int64_t>(1, elapsed)));
  }
  updated_second_ = second;
  return keep_;
}

LoadShedder::Stats LoadShedder::stats() const {
  std::lock_guard lock(mutex_);
  return {keep_, cuts_, last_late_ms_, refused_, cut_sent_, cut_decided_};
}

}  // namespace cronwheel::admin
