#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/util/floor_division.h"

namespace cronwheel::admin {

// A fire this node owns and has still to send: a job_log row in state `pending`
// (docs/scheduling.md). Everything else about it is read from the row when it is sent.
struct PendingFire {
  std::int64_t log_id = 0;
  std::int64_t job_id = 0;
  std::int64_t scheduled_time = 0;  // epoch ms: when it is due

  friend bool operator==(const PendingFire&, const PendingFire&) = default;
};

// The order fires go out in: due time, then the order they were decided in.
inline bool due_order(const PendingFire& a, const PendingFire& b) {
  return a.scheduled_time != b.scheduled_time ? a.scheduled_time < b.scheduled_time : a.log_id < b.log_id;
}

// When a fire handed on for the instant `not_before_ms` (SecondRing's due time) is posted: at
// that instant, or at once when its own second has already passed (a fire handed on late,
// with a later second's) — never before its scheduled time. The trigger pools wait for it, and
// it is the run's trigger time, so that a run never looks triggered after its result came.
inline std::int64_t post_time(const PendingFire& fire, std::int64_t not_before_ms) {
  constexpr std::int64_t kSecond = 1000;
  const std::int64_t own_second = util::floor_div(fire.scheduled_time + kSecond - 1, kSecond);
  return std::min(not_before_ms, own_second * kSecond);
}

// What sending a fire came to.
struct SendOutcome {
  enum class Kind {
    kTriggered,  // the executor accepted it (sending → triggered)
    kFailed,     // it failed and the row says why (no address, executor refused, transport)
    kDropped,    // it was no longer this node's pending fire (taken over, cancelled, sent)
  };
  Kind kind = Kind::kFailed;
  // How long the trigger took, start to recorded answer (the slow-pool statistics).
  std::chrono::milliseconds took{0};
};

// What a sender prepared ahead of a fire's instant (FireSender::prepare): its own type, opaque
// to the pools that carry it.
struct PreparedSend;

// A fire after FireSender::prepare.
struct PreparedFire {
  PendingFire fire;
  // prepare() settled it already (it failed, or is no longer this node's to send): nothing
  // to deliver.
  std::optional<SendOutcome> ended;
  // Claimed (sending) and ready to post: what deliver() posts. Null while not ended: deliver()
  // sends the fire whole (send()).
  std::shared_ptr<const PreparedSend> send;
  // prepare()'s `admit` refused it (no room to send it): pending and untouched, neither read
  // further nor claimed.
  bool refused = false;
};

// Asked by FireSender::prepare, in order, of each fire it would claim or leave to be sent
// whole, before anything is claimed: `index` is the fire's place in prepare()'s `fires`,
// `lead_key` what lead_key() would answer once it is claimed (nullopt: it would not be handed
// over ahead). False refuses the fire (PreparedFire::refused).
using AdmitFire = std::function<bool(std::size_t index, const std::optional<std::string>& lead_key)>;

// Sends fires: route, claim (pending → sending), POST /run, record the answer
// (docs/scheduling.md, "Sending a fire"). Implementations are thread-safe: the trigger pools
// call send() and deliver() from many threads at once.
//
// Two ways: send() does it all for one fire; prepare() does the database part for many fires at
// once ahead of their instant (load and claim each, in one statement each for the lot), and
// deliver() then posts one prepared fire and records the answer. A sender that prepares nothing
// ahead (the defaults) sends each fire whole when it is delivered.
class FireSender {
 public:
  virtual ~FireSender() = default;
  // Never throws: every failure ends in the row (or, when the database is unreachable, in the
  // fire staying pending for a later attempt) and in the outcome.
  virtual SendOutcome send(const PendingFire& fire) noexcept = 0;

  // Prepares `fires` (this node's, due at or before `not_before_ms`, epoch ms: none is posted
  // before it); answers one PreparedFire per fire, in order. `admit`, when given, is asked of
  // each fire that would need sending after its routing is known and before its claim, so the
  // caller can count its room per request rather than per fire (a lead executor's fires share
  // one); a fire settled without sending (no executor, gone) is not asked. Never throws: the
  // database unreachable leaves them pending (ended, kDropped).
  virtual std::vector<PreparedFire> prepare(const std::vector<PendingFire>& fires, std::int64_t not_before_ms,
                                            const AdmitFire& admit = nullptr) noexcept {
    (void)not_before_ms;
    std::vector<PreparedFire> out;
    out.reserve(fires.size());
    for (std::size_t i = 0; i < fires.size(); ++i) {
      out.push_back({fires[i], std::nullopt, nullptr});
      if (admit) {
        try {
          out.back().refused = !admit(i, std::nullopt);
        } catch (...) {
          out.back().refused = true;  // memory: left pending for a later attempt
        }
      }
    }
    return out;
  }
  // Prepares, for handing over seconds ahead of their instants (lead dispatch of a burst,
  // docs/scheduling.md), only those of `fires` whose every executor takes lead dispatch: each is
  // claimed for its own second as prepare() claims it, and lead_key() names its executor. A fire
  // this does not claim and did not settle (neither `ended` nor `send`) is left as it was,
  // pending and untouched, for the ring to hand on at its second as any other; `ended` is for a
  // fire no longer this node's to send. Never throws. The default leaves every fire alone.
  virtual std::vector<PreparedFire> prepare_lead(const std::vector<PendingFire>& fires) noexcept {
    std::vector<PreparedFire> out;
    out.reserve(fires.size());
    for (const auto& f : fires) out.push_back({f, std::nullopt, nullptr});
    return out;
  }
  // Posts a prepared fire (not ended) and records the answer, or sends it whole.
  virtual SendOutcome deliver(const PreparedFire& fire) noexcept { return send(fire.fire); }
  // A prepared fire that will not be delivered after all (the pools are shutting down or full):
  // its claim is given back (sending → pending), for a later attempt.
  virtual void release(const PreparedFire& fire) noexcept { (void)fire; }
  // Returns once what deliver() and lead() left to write in the background is written.
  virtual void flush() noexcept {}

  // Lead dispatch (docs/scheduling.md, "Lead dispatch"): a prepared fire whose executor takes it
  // may be handed over ahead of its instant instead of posted at it. lead_key() says whether it
  // may, and which fires go in one request (same executor, same credentials): nullopt, it may
  // not (not claimed ahead, or its executor does not take lead dispatch).
  virtual std::optional<std::string> lead_key(const PreparedFire& fire) const noexcept {
    (void)fire;
    return std::nullopt;
  }
  // Hands over prepared fires of one lead_key, each due at fire_at[i] (epoch ms), ahead of their
  // instants. Answers per fire: its outcome when it is settled (kTriggered: the executor holds it
  // and starts it at its instant, recorded as deliver() records; kDropped: too late after its
  // claim, given back to pending), or nullopt: not handed over (the executor refused the request
  // or that fire, or did not answer), so it is to be deliver()ed at its instant as any other. A
  // fire the executor holds after all (its answer was lost) is then answered by /run as received
  // already and not run twice. Never throws.
  virtual std::vector<std::optional<SendOutcome>> lead(const std::vector<PreparedFire>& fires,
                                                       const std::vector<std::int64_t>& fire_at) noexcept {
    (void)fire_at;
    return std::vector<std::optional<SendOutcome>>(fires.size());
  }
};

// trigger_next_time of a FIX_DELAY job whose fire is running: the scan never reaches it; the
// run's result sets the real next time.
inline constexpr std::int64_t kAwaitingCompletion = 253402300799000;  // 9999-12-31T23:59:59Z

}  // namespace cronwheel::admin
