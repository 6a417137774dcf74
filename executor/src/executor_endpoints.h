#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/http/http_error.h"
#include "common/http/http_server.h"
#include "executor/src/job_dispatcher.h"
#include "executor/src/lead_hold.h"
#include "executor/src/run_log.h"

namespace cronwheel::executor {

// The executor's error shape: XXL-JOB's ReturnT {"code":500,"msg":"...","content":null} with
// HTTP status 200 for every error (unknown path, oversized or malformed request, a failure
// inside a route), as XXL-JOB's own executor answers: its admin treats any other status as a
// failed call without reading msg.
common::http::ErrorResponse executor_error(const common::http::ErrorInfo& info);

// Registers POST /beat, /idleBeat, /run, /kill and /log on `server` (configured with
// executor_error). Every route:
//  - checks XXL-JOB-ACCESS-TOKEN when `access_token` is not empty: a wrong or missing one is
//    answered {"code":500,"msg":"The access token is wrong."};
//  - reads its XXL-JOB 2.4 body; malformed JSON or a field of the wrong type is answered code
//    500 with what was wrong;
//  - answers a ReturnT with HTTP 200.
// /log answers lines of the run's log from fromLineNum on, one page at a time; isEnd is true once
// the run is over and the page reaches the log's end. Beyond XXL-JOB, and optional for the admin,
// it also says what this process knows of the run (LogResult::run_state, judged before the log
// is read): "active" (queued or running here), "result-pending" (its result is held for an
// admin: `result_pending`), else "unknown" — no result for it will come from this process — and
// when the process started (executorStartTime), so an admin can tell a restart.
// /run and /log refuse a logDateTime (/log: logDateTim) that RunLogStore::log_date_time_problem()
// refuses, before anything else, naming the field: such a time would name a log directory.
// /run and /lead are refused (code 500 with the reason) while `refuse_runs` gives a reason.
// /run of a run this executor received already (queued or running, its result held for an admin,
// or its log written) is answered success and not run again: an admin paused past its lease may
// post a run after another node, having found it not delivered, sent it again; whoever records
// the answer then waits for the one result. (A run whose log has expired is run again.)
//
// With `lead` set (lead dispatch, lead_hold.h) it also registers POST /lead (LeadRequest →
// ReturnT<LeadAnswer>, or code 500 with the reason when refused as a whole: LeadHold::hold) and
// POST /leadCancel (LeadCancelParam → ReturnT<LeadCancelAnswer>); /log answers "active" for a
// fire held there, and /run of a held fire is answered success and not run (it starts at its
// instant).
//
// `dispatcher`, `logs` and what the hooks use must outlive the server's handlers (stop the
// server first).
struct EndpointHooks {
  std::function<std::optional<std::string>()> refuse_runs;  // may be empty: never refuse
  std::function<bool(std::int64_t log_id)> result_pending;   // may be empty: never pending
  std::int64_t started_at_ms = 0;                            // epoch ms
  std::function<std::int64_t()> now_ms;  // the clock logDateTime is judged by; empty: the system's
  LeadHold* lead = nullptr;              // null: no lead dispatch
};
// The part of the "received already" rule a run leaves behind once it has ended here: its result
// is held for an admin (`result_pending`), or its log was written. /run adds a fire the lead hold
// holds (and the dispatcher, under its lock, a run queued or running); the lead hold's `received`
// hook adds a run queued or running.
bool ended_here(const RunLogStore& logs, const std::function<bool(std::int64_t log_id)>& result_pending,
                const common::protocol::TriggerParam& run);

void add_executor_endpoints(common::http::HttpServer& server, JobDispatcher& dispatcher,
                            const RunLogStore& logs, std::string access_token,
                            EndpointHooks hooks = {});

}  // namespace cronwheel::executor
