#pragma once

// What a run row (job_log) records about its fire, as enumerations: the state of the fire
// (docs/scheduling.md, "States of a fire") and what made it. The run table and the API spell
// them as to_string does; the stores and the JSON writers convert at their edges, nothing in
// between handles the spelling.

#include <iosfwd>
#include <optional>
#include <string_view>

namespace cronwheel::admin {

// pending → sending → triggered → succeeded | failed | lost; pending → cancelled;
// pending | sending → failed when the trigger fails.
enum class FireState {
  kPending,    // decided, durable, not yet sent; owned by admin_node
  kSending,    // claimed by admin_node, the POST /run may be on the wire
  kTriggered,  // the executor accepted it; its result is awaited
  kSucceeded,  // the executor's callback said 200
  kFailed,     // the callback said otherwise, or the trigger failed
  kLost,       // triggered, and its executor died before reporting
  kCancelled,  // never sent: an operator cancelled it, or a takeover dropped it as a misfire
};

// Why the fire exists (XXL-JOB's TriggerTypeEnum, with SCHEDULE for CRON and MISFIRE for the
// FIRE_ONCE_NOW catch-up).
enum class TriggerType {
  kSchedule,  // the job's schedule
  kMisfire,   // FIRE_ONCE_NOW's single catch-up of missed fires
  kManual,    // an operator, "run once"
  kParent,    // a parent job succeeded
  kRetry,     // a failed run with retries left
  kApi,       // the API, possibly delayed
  kWorkflow,  // a workflow run started the node this run is (docs/workflows.md)
  kBackfill,  // a backfill: one of the instants its job's schedule had in a past range, run
              // late as if on time (docs/scheduling.md, "Backfill")
};

// "pending", "sending", ...: the run table's spelling, also the API's.
std::string_view to_string(FireState state) noexcept;
// "SCHEDULE", "MISFIRE", "MANUAL", "PARENT", "RETRY", "API", "WORKFLOW", "BACKFILL".
std::string_view to_string(TriggerType type) noexcept;

// The value spelled exactly so, or nullopt.
std::optional<FireState> parse_fire_state(std::string_view text) noexcept;
std::optional<TriggerType> parse_trigger_type(std::string_view text) noexcept;

// True for succeeded, failed and lost: the run is over and has its result.
bool is_finished(FireState state) noexcept;

// For test failure messages: prints to_string.
std::ostream& operator<<(std::ostream& out, FireState state);
std::ostream& operator<<(std::ostream& out, TriggerType type);

}  // namespace cronwheel::admin
