#pragma once

#include <chrono>
#include <cstdint>
#include <string>

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

// Sends fires: route, claim (pending → sending), POST /run, record the answer
// (docs/scheduling.md, "Sending a fire"). Implementations are thread-safe: the trigger pools
// call send() from many threads at once.
class FireSender {
 public:
  virtual ~FireSender() = default;
  // Never throws: every failure ends in the row (or, when the database is unreachable, in the
  // fire staying pending for a later attempt) and in the outcome.
  virtual SendOutcome send(const PendingFire& fire) noexcept = 0;
};

// trigger_next_time of a FIX_DELAY job whose fire is running: the scan never reaches it; the
// run's result sets the real next time.
inline constexpr std::int64_t kAwaitingCompletion = 253402300799000;  // 9999-12-31T23:59:59Z

}  // namespace cronwheel::admin
