#pragma once

// Shedding past capacity (docs/scheduling.md, "Past capacity: shedding at the scan").
//
// A node that decides more fires than it can hand over falls behind: the ring hands each second
// over later and later, the fires go out late by /run instead of ahead by lead dispatch (which
// costs more per fire), and the ones more than the misfire threshold late are cancelled one by
// one, each after a pending row, a read and a cancel. Every fire past capacity then takes work
// from the fires that could have gone on time, and throughput falls well below the knee.
//
// The shedder tells the scan how much of what it decides to keep (shed_fires, fire_decision.h):
//  - The signal is the ring's own hand-off (SecondRing::Watch): a hand-off of a second's fires
//    that ends more than `late_after` after the first second it covers, or the fast trigger pool
//    refusing fires (`refusals`: its threads and queue full, so fires wait pending and go out
//    late), while the ring handed over at least `min_fires` fires in the last second; in the
//    current second or the one before, and in all but one second of the last window. It measures
//    this node's capacity to read, claim and send its fires (the database and the admin): fires
//    taken over late from a dead node or waiting for a slot do not move it, a full slow pool (the
//    jobs whose executors are slow) does not, and neither does a stall with few fires (a
//    database outage is not load; shedding would not help it). Nor does the catch-up after a
//    stall with many fires (the node paused, its database restarting): it is late for a second
//    or two, then on time, where a node past its capacity stays late.
//  - On that signal the share kept drops to 90 % of what the node has shown it sends in a window
//    (the most its pools finished, `sends`, in any window of the last kSeconds; without it, what
//    the ring handed over), as a share of what the scans decided in the last window; by a tenth
//    when the share is below that already. Never below `min_keep`, at most once per window plus
//    a second: fires decided before a cut are still being handed over for a window after it,
//    and only then does the cut show. A node behind sends less than it can (its fires wait in
//    full pools and go late), so the best window, not the last, is its capacity.
//  - Once a whole window has passed without the signal, the share grows by `recover_step` each
//    second back to 1.
//
// Thread-safe: the ring calls handed_over(), the schedule thread decided() and keep().

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#include "admin/model/scan.h"

namespace cronwheel::admin {

class LoadShedder {
 public:
  struct Options {
    // A hand-off ending this long after its second is late. 0: never shed.
    std::chrono::milliseconds late_after{1'000};
    // Fires handed over in the second before a late hand-off for it to count as load.
    std::size_t min_fires = 500;
    double min_keep = 0.1;
    double recover_step = 0.02;  // per second without a late hand-off
    std::int64_t window_ms = kPreReadWindowMs;
    // The node's sends so far (TriggerPools::sends), sampled at each hand-off and scan: how many
    // fires it can send a second. Optional.
    std::function<std::uint64_t()> sends;
    // The fast pool's refusals so far (TriggerPools::fast_refusals), sampled likewise. Optional.
    std::function<std::uint64_t()> refusals;
  };
  struct Stats {
    double keep = 1.0;
    std::uint64_t cuts = 0;  // times the share kept was cut
    std::int64_t last_late_ms = 0;  // the latest late hand-off's lateness, 0 when none yet
    std::uint64_t refused = 0;      // fast-pool refusals seen
    // At the last cut: the fires sent (or handed over) and decided in the window before it.
    std::uint64_t cut_sent = 0, cut_decided = 0;
  };

  explicit LoadShedder(Options options);

  // The ring handed `fires` over (read, claimed, given to the pools or to the executors ahead)
  // in a hand-off that ended at `done_ms` for fires due from `due_ms` (epoch ms). Fires handed
  // ahead are handed over before due_ms and are never late.
  void handed_over(std::size_t fires, std::int64_t due_ms, std::int64_t done_ms);
  // A scan at `now_ms` decided `fires`, before shedding.
  void decided(std::size_t fires, std::int64_t now_ms);
  // The share of its fires a scan at `now_ms` keeps, 0 to 1.
  double keep(std::int64_t now_ms);

  bool enabled() const noexcept { return options_.late_after.count() > 0; }
  Stats stats() const;

 private:
  // Counts per wall second, the last kSeconds of them.
  static constexpr std::size_t kSeconds = 30;
  struct Second {
    std::int64_t second = -1;
    std::size_t handed = 0;
    std::size_t decided = 0;
    std::uint64_t sent = 0;
    bool late = false;  // a late hand-off, or fast-pool refusals, under load
  };
  Second& at(std::int64_t second);  // the slot of `second`, reset when it held an older one
  // Sums over the seconds in [from, to).
  template <typename Field>
  std::uint64_t sum(Field field, std::int64_t from, std::int64_t to) const {
    std::uint64_t n = 0;
    for (const auto& s : seconds_) {
      if (s.second >= from && s.second < to) n += s.*field;
    }
    return n;
  }
  // Adds the sends since the last sample to the second of `now_ms`, and marks it late when the
  // fast pool refused fires since.
  void sample(std::int64_t now_ms);

  const Options options_;
  mutable std::mutex mutex_;
  std::array<Second, kSeconds> seconds_{};
  double keep_ = 1.0;
  std::int64_t updated_second_ = -1;  // the last second keep() moved the share at
  std::int64_t next_cut_ms_ = 0;      // no cut before
  std::uint64_t cuts_ = 0;
  std::uint64_t sends_seen_ = 0, refusals_seen_ = 0, refused_ = 0, cut_sent_ = 0, cut_decided_ = 0;
  bool sampled_ = false;
  std::int64_t last_late_second_ = -1;
  std::int64_t last_late_ms_ = 0;
};

}  // namespace cronwheel::admin
