#include "admin/scheduler/backfill_pump.h"

#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "admin/model/backfill.h"

namespace cronwheel::admin {

BackfillPump::BackfillPump(BackfillStore& store, JobStore& jobs, WorkflowStore& workflows, CalendarStore& calendars,
                           common::RecurringTasks& tasks, std::string node_id, FiresWritten fires_written, Options options)
    : store_(store),
      jobs_(jobs),
      workflows_(workflows),
      calendars_(calendars),
      clock_(tasks.clock()),
      node_id_(std::move(node_id)),
      fires_written_(std::move(fires_written)),
      options_(std::move(options)),
      task_(tasks, {"backfill pump", options_.interval}, [this](std::stop_token stop) { pass(stop); }) {}

BackfillPump::~BackfillPump() { stop(); }

std::size_t BackfillPump::pump_once() noexcept { return pass(std::stop_token{}); }

std::size_t BackfillPump::pass(const std::stop_token& stop) noexcept {
  if (options_.may_write && !options_.may_write()) return 0;
  std::vector<Backfill> running;
  try {
    running = store_.running(options_.limit);
  } catch (const std::exception& e) {
    if (!failing_) spdlog::warn("backfill pump: cannot read the running backfills, tried again at the next pass: {}", e.what());
    failing_ = true;
    return 0;
  }
  std::size_t written = 0;
  bool failed = false;
  for (const Backfill& backfill : running) {
    if (stop.stop_requested()) break;
    try {
      written += step(backfill);
    } catch (const std::exception& e) {
      // One backfill's failure (the database away, most likely) leaves the others their step.
      if (!failing_) spdlog::warn("backfill pump: backfill {}: a step failed, tried again at the next pass: {}", backfill.id, e.what());
      failed = true;
    }
  }
  if (failing_ && !failed) spdlog::info("backfill pump: steps work again");
  failing_ = failed;
  return written;
}

std::optional<Schedule> BackfillPump::schedule_of(const Backfill& running, bool& gone, std::string& refused) {
  gone = false;
  try {
    if (running.kind() == BackfillKind::kWorkflow) {
      const auto workflow = workflows_.get(running.workflow_id);
      if (!workflow) {
        gone = true;
        return std::nullopt;
      }
      std::optional<Calendar> calendar;
      if (workflow->calendar.calendar_id != 0) calendar = calendars_.get(workflow->calendar.calendar_id);
      return backfill_schedule(*workflow, calendar);
    }
    const auto job = jobs_.get(running.job_id);
    if (!job) {
      gone = true;
      return std::nullopt;
    }
    std::optional<Calendar> calendar;
    if (job->calendar.calendar_id != 0) calendar = calendars_.get(job->calendar.calendar_id);
    return backfill_schedule(*job, calendar);
  } catch (const BackfillRefused& e) {
    refused = e.what();
    return std::nullopt;
  }
}

std::size_t BackfillPump::step(const Backfill& running) {
  bool gone = false;
  std::string refused;
  const std::optional<Schedule> schedule = schedule_of(running, gone, refused);
  if (gone) return 0;  // deleted meanwhile: its backfills go with it
  const auto result = store_.step(running.id, node_id_, clock_.now_ms(),
                                  [&](const Backfill& b, std::int64_t unfinished, const ExistingRuns& existing) {
                                    if (!schedule) return backfill_stopped(refused);
                                    return next_backfill_step(*schedule, b, unfinished, existing);
                                  });
  if (!result.stepped) return 0;
  if (!result.fires.empty() && fires_written_) fires_written_(result.fires);
  if (result.backfill.state != BackfillState::kRunning) {
    spdlog::info("backfill {} of {} {} ended {}: {}", result.backfill.id, to_string(result.backfill.kind()),
                 result.backfill.kind() == BackfillKind::kWorkflow ? result.backfill.workflow_id : result.backfill.job_id,
                 to_string(result.backfill.state), result.backfill.reason);
  }
  return result.backfill.kind() == BackfillKind::kWorkflow ? result.runs.size() : result.fires.size();
}

}  // namespace cronwheel::admin
