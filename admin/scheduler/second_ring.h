#pragma once

// The ring that holds this node's decided fires until they are due (docs/scheduling.md,
// "Holding fires until they are due").
//
// Sixty slots keyed by second of the minute. A fire belongs to the first second boundary at or
// after its scheduled time (late is fine, early never: a fire at 12:00:03.400 goes out at
// 12:00:04). The ring thread wakes `lead` before absolute wall-second boundaries on the injected
// Clock and takes every second from the last one it processed up to the coming boundary:
// normally one slot, after a late wake-up all the missed ones, so a late tick loses nothing.
// Fires are handed on in due order, in one batch per wake-up, outside the ring's lock, with the
// boundary they are due at. A fire already due when it is pushed with push_due_now() (one an
// operator or a run's end has just asked for) does not wait for the coming boundary: the ring
// thread is woken and hands it on at once, due at the instant it is handed on.
//
// De-duplication: a log id is held at most once, and once handed on it is remembered until the
// trigger pools report it finished(), so the feeder re-reading a pending row that is already
// queued or being sent cannot send it twice from this node. (Across nodes the claim's guarded
// transition is what prevents a second send.)
//
// Handing over ahead (lead dispatch of bursts, docs/scheduling.md): with an Ahead, after each
// wake-up's hand-off and while at least kAheadMarginMs remain before the next one, the fires held
// for the seconds up to `horizon` ahead that were never offered are offered, at most `chunk` at a
// time in due order, on the ring thread. What the offer takes counts as handed on (remembered
// until finished()); what it answers is held again for its second, as before, and not offered
// again. A second's own hand-off is never held up by more than one offer.
//
// Thread-safe: push() and finished() may be called from any thread. The hand-off function runs
// on the ring thread only, one call at a time; it must not call back into the ring's stop().

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>
#include <unordered_set>
#include <vector>

#include "admin/model/fire.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class SecondRing {
 public:
  // Called with the fires of one wake-up and the instant they are due at (epoch ms, a second
  // boundary): none may be posted before it.
  using HandOff = std::function<void(std::vector<PendingFire> fires, std::int64_t due_ms)>;

  // `lead`: how long before each second boundary the ring wakes and hands that second's fires
  // on, so the hand-off can prepare them (read and claim) and post them at the boundary itself.
  // Zero: at the boundary. Less than a second.
  // Offers fires due seconds ahead; answers those it did not take. Must not throw.
  using Offer = std::function<std::vector<PendingFire>(const std::vector<PendingFire>& fires)>;
  struct Ahead {
    Offer offer;                          // unset: nothing is offered ahead
    std::chrono::milliseconds horizon{};  // how far ahead of now; less than a minute
    std::size_t chunk = 1'000;            // fires per offer, at least 1
  };
  // Offers stop this long before the next wake-up, so that its hand-off is not late.
  static constexpr std::int64_t kAheadMarginMs = 200;

  SecondRing(common::Clock& clock, HandOff hand_off, std::chrono::milliseconds lead = {});
  SecondRing(common::Clock& clock, HandOff hand_off, std::chrono::milliseconds lead, Ahead ahead);
  ~SecondRing();  // stops the thread

  SecondRing(const SecondRing&) = delete;
  SecondRing& operator=(const SecondRing&) = delete;

  // Told after each hand-off of held fires (a wake-up's, and each offer ahead that took some):
  // how many fires it handed on, the second boundary they were due from (for a wake-up, the
  // first second it covers: one that came late covers every second since the last one), and
  // when the hand-off ended (epoch ms). So done - due is how late the ring hands its seconds
  // over (LoadShedder). Fires pushed due now are not told. Runs on the ring thread and must not
  // throw. Set before start().
  using Watch = std::function<void(std::size_t fires, std::int64_t due_ms, std::int64_t done_ms)>;
  void watch(Watch watch);

  // Starts the ring thread. Its first wake-up is at once: fires already due go out then.
  void start();

  // Stops the ring thread (after a hand-off in progress returns) and answers the fires still
  // held: never handed on, they stay pending in the database for this node or a node that
  // takes them over. Idempotent; push() refuses fires afterwards.
  std::vector<PendingFire> stop() noexcept;

  // Holds `fire` until its second. A fire whose second has already been processed goes out at
  // the next wake-up. False when the log id is already held or handed on and not finished, or
  // the ring has stopped.
  bool push(const PendingFire& fire);

  // push(), but a fire already due (scheduled at or before now) is handed on at once rather
  // than at the coming second boundary. A fire not yet due is held as push() holds it.
  bool push_due_now(const PendingFire& fire);

  // The trigger pools are done with a fire handed on (sent, failed, dropped or left pending):
  // its log id may be pushed again.
  void finished(std::int64_t log_id);

  // Fires held, not yet handed on.
  std::size_t held() const;
  // Log ids held or handed on and not finished.
  std::size_t known() const;

 private:
  struct Entry {
    PendingFire fire;
    std::int64_t second = 0;  // the wall second (epoch s) it goes out at
    bool offered = false;     // offered ahead once and not taken
  };
  static constexpr std::int64_t kSlots = 60;

  void run(std::stop_token stop);
  // Takes every held fire whose second is at or before `through`; call with mutex_ held.
  std::vector<PendingFire> take_through(std::int64_t through);
  void hand_off(std::vector<PendingFire> due, std::int64_t due_ms);
  // Takes up to `max` held fires never offered, of the seconds after the last one handed on up to
  // `last` (epoch s), in due order; call with mutex_ held.
  std::vector<PendingFire> take_ahead(std::int64_t last, std::size_t max);
  // Offers chunks ahead until none is left, the next wake-up is near, or `interrupt` (a fire due
  // now, or stop) is requested.
  void offer_ahead(const std::stop_token& interrupt);

  common::Clock& clock_;
  HandOff hand_off_;
  const std::int64_t lead_ms_;
  const Ahead ahead_;
  Watch watch_;

  mutable std::mutex mutex_;
  std::array<std::vector<Entry>, kSlots> slots_;
  std::unordered_set<std::int64_t> known_;
  std::size_t held_ = 0;
  std::int64_t processed_ = 0;  // the last second handed on
  std::vector<PendingFire> due_now_;  // push_due_now()'s, for the ring thread's next turn
  std::stop_source sleep_;  // the ring thread's current wait; push_due_now() ends it
  bool stopped_ = false;
  std::jthread thread_;
};

}  // namespace cronwheel::admin
