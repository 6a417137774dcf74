#include "admin/model/backfill.h"

#include <algorithm>
#include <array>
#include <utility>

namespace cronwheel::admin {

namespace {

constexpr std::array<std::pair<BackfillState, std::string_view>, 3> kBackfillStates{{
    {BackfillState::kRunning, "running"},
    {BackfillState::kDone, "done"},
    {BackfillState::kCancelled, "cancelled"},
}};

constexpr std::array<std::pair<OnExisting, std::string_view>, 2> kOnExistingNames{{
    {OnExisting::kSkip, "SKIP"},
    {OnExisting::kRerun, "RERUN"},
}};

template <class E, std::size_t N>
std::string_view backfill_name_in(const std::array<std::pair<E, std::string_view>, N>& table, E value) noexcept {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";  // only reachable by casting an out-of-range integer to E
}

template <class E, std::size_t N>
std::optional<E> backfill_value_in(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text) noexcept {
  for (const auto& [v, name] : table) {
    if (name == text) return v;
  }
  return std::nullopt;
}

template <class T>
nlohmann::json backfill_optional(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

std::string_view to_string(BackfillState state) noexcept { return backfill_name_in(kBackfillStates, state); }
std::string_view to_string(OnExisting on_existing) noexcept { return backfill_name_in(kOnExistingNames, on_existing); }
std::optional<BackfillState> parse_backfill_state(std::string_view text) noexcept { return backfill_value_in(kBackfillStates, text); }
std::optional<OnExisting> parse_on_existing(std::string_view text) noexcept { return backfill_value_in(kOnExistingNames, text); }
std::string_view to_string(BackfillKind kind) noexcept { return kind == BackfillKind::kWorkflow ? "workflow" : "job"; }

nlohmann::json to_json(const Backfill& b) {
  const bool of_workflow = b.kind() == BackfillKind::kWorkflow;
  nlohmann::json inputs = nullptr;
  if (b.params) {
    inputs = nlohmann::json::parse(*b.params, nullptr, false);
    if (!inputs.is_object()) inputs = nlohmann::json::object();
  }
  return {
      {"id", b.id},
      {"kind", std::string(to_string(b.kind()))},
      {"jobId", of_workflow ? nlohmann::json(nullptr) : nlohmann::json(b.job_id)},
      {"workflowId", of_workflow ? nlohmann::json(b.workflow_id) : nlohmann::json(nullptr)},
      {"workflowName", of_workflow ? nlohmann::json(b.workflow_name) : nlohmann::json(nullptr)},
      {"jobGroup", b.job_group},
      {"from", b.from},
      {"to", b.to},
      {"onExisting", std::string(to_string(b.on_existing))},
      {"maxConcurrent", b.max_concurrent},
      {"inputs", std::move(inputs)},
      {"state", std::string(to_string(b.state))},
      {"cursor", backfill_optional(b.cursor)},
      {"total", b.total},
      {"written", b.written},
      {"skipped", b.skipped},
      {"createdBy", b.created_by},
      {"createdAt", b.created_at},
      {"endedAt", backfill_optional(b.ended_at)},
      {"reason", b.reason},
  };
}

nlohmann::json to_json(const BackfillRuns& r) {
  return {{"pending", r.pending},
          {"running", r.running},
          {"succeeded", r.succeeded},
          {"failed", r.failed},
          {"cancelled", r.cancelled}};
}

namespace {

// The schedule of a job or workflow (`what`: "job 7", "workflow 3") as a backfill goes by it.
Schedule schedule_to_backfill(const std::string& what, ScheduleType type, const std::string& conf,
                              const std::string& zone, common::DstPolicy dst, const CalendarUse& use,
                              const std::optional<Calendar>& calendar) {
  switch (type) {
    case ScheduleType::kNone:
      throw BackfillRefused("scheduleType", "scheduleType: " + what +
                                                " has schedule NONE: it never fires by itself, so it has no "
                                                "instants to backfill");
    case ScheduleType::kFixDelay:
      throw BackfillRefused("scheduleType", "scheduleType: " + what +
                                                " has schedule FIX_DELAY: its times follow its runs' ends, so it "
                                                "had no instants of its own to backfill");
    case ScheduleType::kCron:
    case ScheduleType::kFixRate:
      break;
  }
  std::optional<Schedule> schedule;
  try {
    schedule = Schedule::parse(type, conf, zone, dst);
  } catch (const ScheduleError& e) {
    // Only reachable for a row written around the API.
    throw BackfillRefused(e.field(), what + " has an invalid schedule: " + e.what());
  }
  if (use.calendar_id == 0) return *schedule;
  if (!calendar || calendar->id != use.calendar_id) {
    throw BackfillRefused("calendarId", "calendarId: " + what + " names calendar " + std::to_string(use.calendar_id) +
                                            ", which does not exist");
  }
  try {
    return schedule->with_calendar(
        ScheduleCalendar{calendar->name, common::BusinessCalendar::make(to_spec(*calendar)), use.mode});
  } catch (const common::CalendarError& e) {
    throw BackfillRefused("calendarId", "calendarId: " + what + "'s calendar " + calendar->name +
                                            " is invalid: " + e.what());
  }
}

}  // namespace

Schedule backfill_schedule(const Job& job, const std::optional<Calendar>& calendar) {
  return schedule_to_backfill("job " + std::to_string(job.id), job.schedule_type, job.schedule_conf, job.timezone,
                              job.dst, job.calendar, calendar);
}

Schedule backfill_schedule(const Workflow& workflow, const std::optional<Calendar>& calendar) {
  // Workflows have no DST policy of their own: their scheduled runs go by Quartz's rules.
  return schedule_to_backfill("workflow " + std::to_string(workflow.id), workflow.schedule_type, workflow.schedule_conf,
                              workflow.timezone, common::DstPolicy{}, workflow.calendar, calendar);
}

BackfillInstants backfill_instants(const Schedule& schedule, std::int64_t from, std::int64_t to,
                                   std::optional<std::int64_t> after, std::size_t max) {
  BackfillInstants out;
  // Where the search starts: just before `from`, so that an instant at `from` counts; a fixed
  // rate one interval before it, so that its grid (and a calendar's jumps over it) runs from
  // `from` itself.
  std::int64_t at = from - 1;
  if (schedule.type() == ScheduleType::kFixRate) at = from - schedule.fixed_seconds() * 1000;
  if (after && *after >= from) at = *after;
  for (;;) {
    const auto next = schedule.next_after(at);
    if (!next || *next >= to) {
      out.complete = true;
      return out;
    }
    if (out.instants.size() == max) return out;  // one more exists: not complete
    out.instants.push_back(*next);
    at = *next;
  }
}

BackfillStep plan_backfill_step(const Backfill& backfill, const BackfillInstants& next,
                                const std::set<std::int64_t>& existing, std::int64_t unfinished) {
  BackfillStep out;
  const std::int64_t room = std::max<std::int64_t>(0, backfill.max_concurrent - unfinished);
  std::size_t dealt = 0;
  for (const std::int64_t instant : next.instants) {
    if (backfill.on_existing == OnExisting::kSkip && existing.count(instant) != 0) {
      ++out.skipped;
    } else if (static_cast<std::int64_t>(out.write.size()) < room) {
      out.write.push_back(instant);
    } else {
      break;
    }
    out.cursor = instant;
    ++dealt;
  }
  if (next.complete && dealt == next.instants.size() && out.write.empty() && unfinished == 0) {
    out.end = BackfillState::kDone;
    const std::int64_t skipped = backfill.skipped + out.skipped;
    out.reason = "every instant dealt with: " + std::to_string(backfill.written) +
                 (backfill.written == 1 ? " run" : " runs") + " written, " + std::to_string(skipped) +
                 (skipped == 1 ? " instant" : " instants") + " skipped";
  }
  return out;
}

BackfillStep next_backfill_step(const Schedule& schedule, const Backfill& backfill, std::int64_t unfinished,
                                const ExistingRuns& existing) {
  const std::int64_t room = std::max<std::int64_t>(0, backfill.max_concurrent - unfinished);
  std::size_t wanted = static_cast<std::size_t>(room);
  if (backfill.on_existing == OnExisting::kSkip) wanted += kBackfillSkipLookahead;
  const auto next = backfill_instants(schedule, backfill.from, backfill.to, backfill.cursor, std::max<std::size_t>(wanted, 1));
  std::set<std::int64_t> found;
  if (backfill.on_existing == OnExisting::kSkip && !next.instants.empty()) found = existing(next.instants);
  return plan_backfill_step(backfill, next, found, unfinished);
}

BackfillStep backfill_stopped(const std::string& why) {
  BackfillStep out;
  out.end = BackfillState::kCancelled;
  out.reason = "stopped: " + why;
  return out;
}

}  // namespace cronwheel::admin
