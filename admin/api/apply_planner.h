#pragma once

// Jobs files on the server (docs/jobs-as-code.md): what an apply changes, and what an export
// writes. Both are pure functions of the snapshot the store read (admin/model/apply_store.h),
// so every rule is tested with tables of cases, without a database.
//
// plan_apply's rules:
//  - The file describes each job whole: a key left out is the default, not "keep". A job is
//    found by (appName, name); it is created, updated (the fields that differ), or unchanged.
//    With `prune`, a job of the file's groups that the file does not name is deleted.
//  - Each job is read and checked as POST jobs reads one (read_job_body, validate_job); a
//    problem is a 400 whose field and message start with the job's path
//    (`groups[billing].jobs[nightly].scheduleConf: ...`).
//  - `running: true` starts a stopped job from its schedule's next time after now (as POST
//    jobs/{id}/start does); a running job whose schedule changed gets its next time anew;
//    `running: false` (or left out) stops it.
//  - Child jobs are by name (`name`: same group, `appName/name`: another) and may name jobs the
//    same file creates; one that does not exist, or that the caller may not see, is a 400. A
//    cycle of child jobs through a job of the file is refused, naming it.
//  - Alarm channels are by name; a channel takes exactly the file's jobs that name it, among
//    the jobs of the file's groups.
//  - A changed glueSource or glueRemark of a script job saves a new version of its history.
//  - A group's title, address type, (for manual groups) address list and maxRunning are the
//    file's; an automatic group's addresses are its executors' and stay as they are.
//  - Permissions: a normal user may name only their own groups (403 naming the first other),
//    may not create or change groups, and may not change which alarm channels take a job.
//  - Users (admins only): one the server lacks is created without a password (it cannot log in
//    until an admin sets one); one it has gets the file's role and groups, its password left
//    alone. Usernames match in any case. An admin cannot change their own role, and a plan
//    that leaves no admin is refused (409).
//  - Workflows (a group's `workflows`, docs/workflows.md "As code") are described whole, as jobs
//    are, and found by (appName, name): created, updated (the fields that differ; nodes one by
//    one, as `nodes[KEY]`), or unchanged. Each is read and checked as POST workflows reads one;
//    its nodes are in key order and its edges are each node's `after`, the graph checked by
//    check_workflow_graph (a cycle named by the `after` entries that close it, with their lines
//    when `line_of` knows them). A node's job is by name and may be one the same file creates;
//    one that does not exist or that the caller may not see, one that --prune deletes, and a
//    SHARDING_BROADCAST job are refused (400).
//  - A workflow's `running: true` starts its schedule from its next time after now, as POST
//    workflows/{id}/start does (a workflow without a schedule cannot be running); a running one
//    whose schedule changed gets its next time anew. An update that changes more than `running`
//    bumps the workflow's version.
//  - Calendars (the file's `calendars` list) are found by name and created, updated (the fields
//    that differ: description, timezone, businessDays, each date, as excludedDates[2026-10-01],
//    compared without its source, and the excluded times, compared as seconds), or unchanged;
//    each is checked as the calendars API checks one (BusinessCalendar::make; a problem names its
//    path, `calendars[cn].excludedDates[3]`). An update carries the version read, and its dates
//    keep the source of the stored date of the same day and kind (with_stored_sources), so an
//    imported holiday stays its import's. Creating or changing a calendar is for admins (403).
//  - A job's or workflow's `calendar` names one of the file's calendars or the server's (a 400
//    at its path otherwise), with its calendarMode; a change of either is a change of its
//    schedule. First fire times go by the calendar as the plan leaves it; one that lets no fire
//    through within ten years is a 400 at `...calendar`. A running job or workflow of the file
//    whose calendar's rules the plan changes gets its next time anew when that is sooner (its
//    own fields unchanged).
//  - A job's dstGap (skip|fire_after) and dstRepeat (once|both) are its DST policy, read and
//    checked as POST jobs reads dstGap and dstRepeat (other than the default only for CRON).
//  - A job's retryBackoff (fixed|exponential), retryJitter, maxConcurrent and priority, and under an
//    exponential back-off its retryMultiplier and retryMaxInterval, are the file's, read and checked
//    as POST jobs reads them. A fixed back-off has no multiplier or ceiling: the ones a job has
//    stored (the console keeps them for when it is exponential again) are neither compared nor
//    exported, and an update writes them back as they are.
//  - With `prune`, an admin's plan deletes a calendar that the file does not list, that a job
//    or workflow of the file's groups named, and that no job or workflow names once the plan is
//    applied.
//  - With `prune`, a workflow of the file's groups that the file does not name is deleted; one
//    with a run waiting or running cannot be: the plan says so (its entry's `blocked`, the
//    report's `refused`) and carries a refusal, which the store answers with 409 unless it is a
//    dry run. A job --prune would delete that a workflow the plan leaves alone runs is refused
//    (409).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/model/apply_store.h"
#include "admin/model/authenticator.h"

namespace cronwheel::admin {

// The line of the file a path of the document is on (its nearest known node's), 0 when unknown.
using LineOf = std::function<int(const std::string& path)>;

// `document` passed common::jobs_file's checks (check_json or parse_yaml). `line_of`, when given,
// puts lines in messages that name more than one place (a workflow's cycle).
ApplyPlan plan_apply(const nlohmann::json& document, const JobsSnapshot& snapshot, const Principal& who, bool prune,
                     std::int64_t now_ms, const LineOf& line_of = {});

// The app names a document's groups name, in the file's order.
std::vector<std::string> app_names_of(const nlohmann::json& document);

// The jobs file of the snapshot's groups named by `app_names` (every group `who` may see when
// empty): fields equal to a new job's (or workflow's) defaults left out, scripts included,
// children, alarm channels, calendars and workflow nodes' jobs by name, each node's parents as
// its `after`, and the calendars its jobs and workflows name, whole (dates without their
// sources, times as HH:MM:SS). plan_apply of it against the same snapshot changes nothing. A
// name that is not a group `who` may see is a 400 naming it.
nlohmann::json export_document(const JobsSnapshot& snapshot, const std::vector<std::string>& app_names,
                               const Principal& who);

}  // namespace cronwheel::admin
