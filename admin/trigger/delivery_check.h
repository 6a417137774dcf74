#pragma once

#include <cstdint>
#include <string>

#include "admin/model/executor_client.h"

namespace cronwheel::admin {

// Whether an executor got a /run whose answer never came (docs/scheduling.md: a node died
// while sending, or the call timed out), found by asking it for the run's log.
struct DeliveryCheck {
  enum class Kind {
    kDelivered,     // the executor has the run: it is queued, running or done
    kNotDelivered,  // the executor says it has no such run: sending it again runs it once
    kUnknown,       // the executor did not answer, or answered something else
  };
  Kind kind = Kind::kUnknown;
  // What the executor answered, for the log row's trigger message.
  std::string message;
};

// POSTs /log (from line 1) for the run to the executor it was sent to. `log_date_time` is the
// logDateTime the run was sent with (log_date_time in admin/model/records.h).
//
// XXL-JOB's answer for a run it does not know is a log "readLog fail, logFile not exists"
// ending at line 0. A cronwheel executor gives it only for a run it neither has queued nor
// ran. XXL-JOB's Java executor creates a run's log file only when the run starts, so for it a
// run still waiting in its job's queue looks undelivered too; callers that resend on
// kNotDelivered accept that (rare) case.
DeliveryCheck check_delivery(ExecutorClient& client, const std::string& address, const std::string& access_token,
                             std::int64_t log_id, std::int64_t log_date_time);

}  // namespace cronwheel::admin
