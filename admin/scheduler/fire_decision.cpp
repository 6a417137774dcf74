#include "admin/scheduler/fire_decision.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "admin/model/schedule.h"
#include "admin/model/fire.h"
#include "common/cron/cron_expression.h"
#include "common/util/floor_division.h"

namespace cronwheel::admin {

namespace {

using common::protocol::ScheduleType;

// A schedule's time strictly increases from one fire to the next; this bounds the loop of one
// job even if a schedule misbehaved. A cron schedule fires at most once a second, so a window of
// 5 s needs about ten.
constexpr int kMaxFiresPerJob = 1'000;

// Parsed schedules by (type, conf, zone, DST policy): many jobs of one scan share an expression.
class ScheduleCache {
 public:
  // The schedule, or nullopt with `error` set when it cannot be parsed.
  const Schedule* get(const DueJob& job, std::string& error) {
    auto key = std::make_tuple(job.schedule_type, job.schedule_conf, job.timezone, job.dst.gap, job.dst.repeat);
    auto it = schedules_.find(key);
    if (it == schedules_.end()) {
      std::optional<Schedule> parsed;
      std::string why;
      try {
        parsed = Schedule::parse(job.schedule_type, job.schedule_conf, job.timezone, job.dst);
      } catch (const ScheduleError& e) {
        why = e.what();
      }
      it = schedules_.emplace(std::move(key), Entry{std::move(parsed), std::move(why)}).first;
    }
    error = it->second.error;
    return it->second.schedule ? &*it->second.schedule : nullptr;
  }

 private:
  struct Entry {
    std::optional<Schedule> schedule;
    std::string error;
  };
  std::map<std::tuple<ScheduleType, std::string, std::string, common::DstGap, common::DstRepeat>, Entry> schedules_;
};

// The schedule's fire times from `first` (one of them) to `until`, counted up to `cap`: a
// cron schedule step by step, a fixed rate by arithmetic (exact at any length). A FIX_DELAY
// job has only the one time it was waiting for: the later ones would follow runs that never
// happened.
struct Counted {
  std::int64_t count = 0;
  std::int64_t last = 0;
  bool at_least = false;
};
Counted count_times(const Schedule& schedule, std::int64_t first, std::int64_t until, std::int64_t cap) {
  Counted out{1, first, false};
  if (schedule.type() == ScheduleType::kFixDelay) return out;
  if (schedule.type() == ScheduleType::kFixRate && schedule.fixed_seconds() > 0) {
    const std::int64_t step = schedule.fixed_seconds() * 1000;
    const std::int64_t more = until > first ? (until - first) / step : 0;
    return {1 + more, first + more * step, false};
  }
  for (auto next = schedule.next_after(first); next && *next <= until; next = schedule.next_after(*next)) {
    if (out.count == cap) {
      out.at_least = true;
      break;
    }
    ++out.count;
    out.last = *next;
  }
  return out;
}

std::string utc(std::int64_t epoch_ms) { return common::format_iso8601(epoch_ms, "UTC"); }

std::string fires_text(const Counted& c) {
  return (c.at_least ? "at least " : "") + std::to_string(c.count) + (c.count == 1 && !c.at_least ? " fire" : " fires");
}

std::string range_text(std::int64_t first, const Counted& c) {
  if (c.count == 1 && !c.at_least) return "scheduled at " + utc(first);
  return "scheduled from " + utc(first) + " to " + utc(c.last) +
         (c.at_least ? " (counting stops at " + std::to_string(c.count) + "; every later one up to the scan was "
                       "skipped too)"
                     : "");
}

// One cancelled MISFIRE row for the fires `job` missed, from `first` up to `now`.
//
// Its (job, scheduled time, shard 0) never collides with a scheduled fire (SCHEDULE and MISFIRE
// rows, unique per job, time and shard: in flight or in the history): DO_NOTHING decides no fire at its
// first skipped time (the job's next time, which no scan decided before); FIRE_ONCE_NOW sends
// its fire at the job's next time, and its row is at the first time after that, which is no
// later than now, while every fire this scan decides after a misfire is later than now. And a
// second row for the same skip cannot happen: the job's advance is guarded by the next time
// read, and a later scan starts from the new one.
void record_misfire(const DueJob& job, const Schedule& schedule, std::int64_t first, std::int64_t fired, std::int64_t now,
                    std::int64_t window, ScanDecision& out) {
  const Counted c = count_times(schedule, first, now, kMaxSkippedCounted);
  const std::string late = "missed by more than the misfire threshold of " + std::to_string(window) +
                           " ms (the scan ran at " + utc(now) + ")";
  std::string message;
  if (job.misfire_strategy == MisfireStrategy::kFireOnceNow) {
    message = "misfire: " + fires_text(c) + " coalesced into the fire scheduled at " + utc(fired) +
              ", " + range_text(first, c) + ": " + late +
              "; the job's misfire strategy FIRE_ONCE_NOW sends one fire for all it missed";
  } else {
    message = "misfire: " + fires_text(c) + " skipped, " + range_text(first, c) + ": " + late +
              "; the job's misfire strategy DO_NOTHING skips the fires it missed";
  }
  out.skipped.push_back({job.id, first, c.last, c.count, c.at_least, std::move(message)});
}

void decide_job(const DueJob& job, const Schedule& schedule, std::int64_t now, std::int64_t window,
                ScanDecision& out) {
  JobAdvance advance;
  advance.job_id = job.id;
  advance.read_next_time = job.trigger_next_time;
  advance.last_time = job.trigger_last_time;

  const bool fix_delay = schedule.type() == ScheduleType::kFixDelay;
  auto fire = [&](std::int64_t at, TriggerType type) {
    out.fires.push_back({job.id, at, type});
    advance.last_time = at;
  };

  std::optional<std::int64_t> next;
  bool awaiting = false;
  std::int64_t read = job.trigger_next_time;
  if (read > 0 && schedule.excluded(read)) {
    // Its calendar excludes the time it waits for: the first time it lets through instead,
    // without a fire or a record.
    auto moved = schedule.next_after(read);
    if (!moved) {
      advance.trigger_status = 0;
      advance.next_time = 0;
      advance.stop_reason = schedule.end_reason(read);
      out.jobs.push_back(std::move(advance));
      return;
    }
    if (*moved > now + window) {
      advance.next_time = *moved;
      out.jobs.push_back(std::move(advance));
      return;
    }
    read = *moved;
  }
  if (read <= 0) {
    // Never computed (a row written around the API): start from now, fire nothing missed.
    next = schedule.next_after(now);
  } else if (now > read + window) {
    if (job.misfire_strategy == MisfireStrategy::kFireOnceNow) {
      fire(read, TriggerType::kMisfire);
      awaiting = fix_delay;
      // The fire at `read` stands for every later one up to now; a FIX_DELAY job has none.
      if (!fix_delay) {
        if (auto coalesced = schedule.next_after(read); coalesced && *coalesced <= now) {
          record_misfire(job, schedule, *coalesced, read, now, window, out);
        }
      }
    } else {
      record_misfire(job, schedule, read, read, now, window, out);
    }
    if (!awaiting) next = schedule.next_after(now);
  } else {
    fire(read, TriggerType::kSchedule);
    awaiting = fix_delay;
    if (!awaiting) next = schedule.next_after(read);
  }

  for (int decided = 0; !awaiting && next && *next <= now + window && decided < kMaxFiresPerJob; ++decided) {
    fire(*next, TriggerType::kSchedule);
    awaiting = fix_delay;
    if (!awaiting) next = schedule.next_after(*next);
  }

  if (awaiting) {
    advance.next_time = kAwaitingCompletion;
  } else if (next) {
    advance.next_time = *next;
  } else {
    advance.trigger_status = 0;
    advance.next_time = 0;
    advance.stop_reason = schedule.end_reason(advance.last_time > 0 ? advance.last_time : now);
    if (advance.stop_reason.empty()) advance.stop_reason = "the schedule has no further fire time";
  }
  out.jobs.push_back(std::move(advance));
}

}  // namespace

ScanDecision decide_fires(const std::vector<DueJob>& jobs, std::int64_t now, std::int64_t window_ms,
                          const ScanCalendars& calendars) {
  ScanDecision out;
  out.jobs.reserve(jobs.size());
  ScheduleCache cache;
  std::set<std::int64_t> wanted;
  for (const auto& job : jobs) {
    std::string error;
    const Schedule* schedule = cache.get(job, error);
    if (schedule == nullptr) {
      out.jobs.push_back({job.id, job.trigger_next_time, job.trigger_last_time, 0, 0,
                          "its schedule cannot be read: " + error});
      continue;
    }
    if (job.calendar_id == 0) {
      decide_job(job, *schedule, now, window_ms, out);
      continue;
    }
    auto it = calendars.find(job.calendar_id);
    if (it == calendars.end() || it->second.version != job.calendar_version) {
      wanted.insert(job.calendar_id);
      out.jobs.push_back({job.id, job.trigger_next_time, job.trigger_last_time, job.trigger_next_time, 1, ""});
      continue;
    }
    const ScanCalendar& calendar = it->second;
    if (!calendar.calendar) {
      out.jobs.push_back({job.id, job.trigger_next_time, job.trigger_last_time, 0, 0,
                          "its calendar " + calendar.name + " cannot be used: " + calendar.error});
      continue;
    }
    decide_job(job, schedule->with_calendar({calendar.name, *calendar.calendar, job.calendar_mode}), now, window_ms,
               out);
  }
  out.calendars_wanted.assign(wanted.begin(), wanted.end());
  return out;
}

namespace {

// A stable, well-mixed order of jobs for one second (splitmix64's finaliser).
std::uint64_t shed_order(std::int64_t job_id, std::int64_t second) {
  std::uint64_t x = static_cast<std::uint64_t>(job_id) * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(second);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::size_t shed_fires(ScanDecision& decision, const std::vector<DueJob>& due, double keep, std::int64_t now,
                       const std::string& why, std::int64_t window_ms, std::int64_t skip_ahead_ms) {
  if (!(keep < 1.0) || decision.fires.empty()) return 0;
  keep = std::max(0.0, keep);

  std::map<std::int64_t, std::vector<std::int64_t>> times;  // each job's fires, by job
  std::set<std::int64_t> not_sheddable;
  for (const auto& f : decision.fires) {
    times[f.job_id].push_back(f.scheduled_time);
    if (f.trigger_type != TriggerType::kSchedule) not_sheddable.insert(f.job_id);
  }
  for (const auto& skip : decision.skipped) not_sheddable.insert(skip.job_id);
  std::map<std::int64_t, JobAdvance*> advances;
  for (auto& advance : decision.jobs) advances.emplace(advance.job_id, &advance);

  struct Candidate {
    const DueJob* job = nullptr;
    std::uint64_t order = 0;
  };
  const std::int64_t second = util::floor_div(now, 1000);
  std::vector<Candidate> candidates;
  for (const auto& job : due) {
    if (!times.contains(job.id) || not_sheddable.contains(job.id) || !advances.contains(job.id)) continue;
    if (job.misfire_strategy != MisfireStrategy::kDoNothing || job.schedule_type == ScheduleType::kFixDelay) continue;
    candidates.push_back({&job, shed_order(job.id, second)});
    not_sheddable.insert(job.id);  // a job read twice is one candidate
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.job->priority != b.job->priority ? a.job->priority < b.job->priority : a.order < b.order;
  });

  // What shedding a job skips: its fires in the window, and its times after them up to
  // skip_until (its next time then the first after those). A job with a calendar, or whose
  // schedule ends meanwhile, skips only its window.
  struct Skip {
    std::int64_t job_id = 0;
    Counted counted;
    std::optional<std::int64_t> next;  // its new next time, when it skips beyond the window
  };
  ScheduleCache cache;
  const std::int64_t skip_until = now + window_ms + std::max<std::int64_t>(0, skip_ahead_ms);
  auto skip_of = [&](const DueJob& job) {
    auto& at = times[job.id];
    std::sort(at.begin(), at.end());
    Skip out{job.id, Counted{static_cast<std::int64_t>(at.size()), at.back(), false}, std::nullopt};
    const JobAdvance& advance = *advances[job.id];
    std::string error;
    const Schedule* schedule = job.calendar_id == 0 ? cache.get(job, error) : nullptr;
    if (schedule != nullptr && advance.trigger_status == 1 && advance.next_time > at.back() &&
        advance.next_time <= skip_until) {
      const Counted later = count_times(*schedule, advance.next_time, skip_until, kMaxSkippedCounted);
      if (auto next = schedule->next_after(later.last); next && !later.at_least) {
        out.counted.count += later.count;
        out.counted.last = later.last;
        out.next = *next;
      }
    }
    return out;
  };

  // Shed jobs until the times skipped are at least 1 - keep of the times decided and skipped:
  // a job shed skips more than a second's fire, and is not read again until after them, so over
  // time the share of its fire times the node keeps is `keep`.
  double kept = static_cast<double>(decision.fires.size());
  double skipped = 0;
  std::vector<Skip> skips;
  for (const auto& c : candidates) {
    if (skipped >= (1.0 - keep) * (kept + skipped)) break;
    Skip skip = skip_of(*c.job);
    kept -= static_cast<double>(times[c.job->id].size());
    skipped += static_cast<double>(skip.counted.count);
    skips.push_back(std::move(skip));
  }
  if (skips.empty()) return 0;

  std::set<std::int64_t> shed_jobs;
  for (const auto& skip : skips) shed_jobs.insert(skip.job_id);
  std::erase_if(decision.fires, [&](const DecidedFire& f) { return shed_jobs.contains(f.job_id); });
  std::map<std::int64_t, const Skip*> skip_by_job;
  for (const auto& skip : skips) skip_by_job.emplace(skip.job_id, &skip);
  std::size_t shed = 0;
  for (const auto& job : due) {  // the records in the order read
    auto it = skip_by_job.find(job.id);
    if (it == skip_by_job.end()) continue;
    const Skip& skip = *it->second;
    skip_by_job.erase(it);
    JobAdvance& advance = *advances[job.id];
    advance.last_time = job.trigger_last_time;
    if (skip.next) advance.next_time = *skip.next;
    const std::int64_t first = times[job.id].front();
    const std::string range = skip.counted.count == 1
                                  ? "scheduled at " + utc(first)
                                  : "scheduled from " + utc(first) + " to " + utc(skip.counted.last);
    decision.skipped.push_back({job.id, first, skip.counted.last, skip.counted.count, false,
                                "shed: " + fires_text(skip.counted) + " skipped, " + range + ": " + why +
                                    "; the job's misfire strategy DO_NOTHING skips the fires it cannot have on time"});
    shed += static_cast<std::size_t>(skip.counted.count);
  }
  return shed;
}

namespace {

bool scheduled(TriggerType type) { return type == TriggerType::kSchedule || type == TriggerType::kMisfire; }

std::string lateness(const PendingFire& fire, std::int64_t now, std::int64_t window) {
  return "misfire: this fire was " + std::to_string(now - fire.scheduled_time) +
         " ms late, more than the misfire threshold of " + std::to_string(window) + " ms; ";
}

}  // namespace

LateFiresVerdict judge_late_fires(const std::vector<PendingFireRow>& fires, std::int64_t now, std::int64_t window_ms) {
  auto late = [&](const PendingFireRow& row) {
    return scheduled(row.trigger_type) && now > row.fire.scheduled_time + window_ms;
  };
  // The newest late fire of each FIRE_ONCE_NOW job: the one that goes out.
  std::map<std::int64_t, PendingFire> newest;
  for (const auto& row : fires) {
    if (!late(row) || row.misfire_strategy != MisfireStrategy::kFireOnceNow) continue;
    auto [it, inserted] = newest.emplace(row.fire.job_id, row.fire);
    if (!inserted && due_order(it->second, row.fire)) it->second = row.fire;
  }

  LateFiresVerdict out;
  for (const auto& row : fires) {
    const PendingFire& fire = row.fire;
    if (!late(row)) {
      out.send.push_back(fire);
    } else if (row.misfire_strategy == MisfireStrategy::kFireOnceNow) {
      const PendingFire& kept = newest.at(fire.job_id);
      if (fire.scheduled_time == kept.scheduled_time) {
        out.send.push_back(fire);
        continue;
      }
      out.cancel.push_back({fire.log_id, lateness(fire, now, window_ms) +
                                             "the job's misfire strategy FIRE_ONCE_NOW sends only the newest of its "
                                             "late fires (run " + std::to_string(kept.log_id) + ", scheduled " +
                                             std::to_string(kept.scheduled_time - fire.scheduled_time) +
                                             " ms after this one), so this one is coalesced into it"});
      ++out.coalesced;
    } else {
      out.cancel.push_back({fire.log_id, lateness(fire, now, window_ms) +
                                             "the job's misfire strategy DO_NOTHING skips a late fire"});
      ++out.skipped;
    }
  }
  return out;
}

}  // namespace cronwheel::admin
