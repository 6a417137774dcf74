#pragma once

// What an alarm says (docs/alarms.md): pure functions of a claim, so the wording is tested with
// fixed runs and every channel sends the same text.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/alarm_store.h"
#include "admin/model/workflow_store.h"

namespace cronwheel::admin {

struct AlarmText {
  std::string subject;  // one line
  std::string body;     // plain text, '\n' between lines
};

struct AlarmTextOptions {
  // The console's address as operators reach it, e.g. "https://cron.example.com/": each run is
  // linked as <console_url>runs/<id>. Empty: no links.
  std::string console_url;
  std::string node_id;  // the node that sends it, named at the end
};

// The alarm for `claim`. One run: the subject names it and what happened to it. Several (a job
// that kept failing through its quiet period): the subject counts them, the body lists the runs
// the claim carries, oldest first, and says how many more there were. Each run says what
// happened (failed with the executor's code and message, result lost, trigger failed, skipped
// by the misfire strategy), when it was scheduled (ISO-8601, UTC), on which executor and with
// which handler, and links to the run in the console. Messages from executors are cut to 1,000
// characters; control characters other than newlines and tabs are replaced, so nothing an
// executor or a user wrote can shape the message.
AlarmText render_alarm(const AlarmClaim& claim, const AlarmTextOptions& options);

// What happened to a run that ended badly, in a few words ("failed with code 500",
// "result lost", "trigger failed", "skipped by the misfire strategy").
std::string_view run_outcome(const JobLog& run);

// The JSON document a webhook channel receives for `claim` (docs/alarms.md "Webhooks"):
//   {"event":"alarm","subject","text",                  // `text`, as the mail says it
//    "job":{"id","jobGroup","jobDesc","executorHandler"},
//    "runsTotal", "runs":[{"id","state","outcome","triggerType","scheduledTime","triggerTime",
//      "handleTime","triggerCode","triggerMsg","handleCode","handleMsg","executorAddress",
//      "shardIndex","shardTotal","url"}],             // url: the run in the console, or null
//    "previousAlarmAt", "node", "sentAt"}             // times in epoch ms; previousAlarmAt 0: none
// Messages are cut as render_alarm cuts them; invalid UTF-8 becomes U+FFFD.
std::string alarm_webhook_body(const AlarmClaim& claim, const AlarmText& text, const AlarmTextOptions& options);

// The alarm of a workflow run that failed or timed out (docs/alarms.md, "Workflows"): the
// subject names the workflow, the run and how it ended; the body gives the reason, every node
// that did not succeed with its message and run, the times, and a link to the run in the
// console. Cut and cleaned as render_alarm's.
AlarmText render_workflow_alarm(const WorkflowStore::Alarm& alarm, const AlarmTextOptions& options);
// Its webhook form: {"event":"workflow_alarm","subject","text",
//   "workflow":{"id","name","jobGroup"},
//   "run":{"id","state","reason","triggerType","scheduledTime","startedAt","endedAt","url",
//          "nodes":[{"key","state","runId","message"}]},      // the nodes that did not succeed
//   "node","sentAt"}
std::string workflow_alarm_webhook_body(const WorkflowStore::Alarm& alarm, const AlarmText& text,
                                        const AlarmTextOptions& options);

// The alarm of an executor whose clock is off the admin's by more than `bound_ms`
// (docs/alarms.md, "Executor clocks"): the subject names the executor and how far off its clock
// is, which way; the body says what that does to its fires and what to do about it. The app name
// and address are cleaned as render_alarm cleans what executors send.
AlarmText render_clock_alarm(const ClockAlarmClaim& claim, std::int64_t bound_ms, const AlarmTextOptions& options);
// Its webhook form: {"event":"executor_clock","subject","text",
//   "executor":{"appName","address"},"offsetMs","delayMs","boundMs","node","sentAt"}
// offsetMs: the admin's clock minus the executor's (positive: the executor's clock is behind).
std::string clock_alarm_webhook_body(const ClockAlarmClaim& claim, std::int64_t bound_ms, const AlarmText& text,
                                     const AlarmTextOptions& options);

// A channel's test alarm ("send a test alarm"): says which channel it tests, from which node
// and when (`now`, epoch ms), and that nothing failed.
AlarmText render_test_alarm(std::string_view channel_name, const AlarmTextOptions& options, std::int64_t now);
// Its webhook form: {"event":"test","subject","text","channel","node","sentAt"}.
std::string test_webhook_body(std::string_view channel_name, const AlarmText& text, const AlarmTextOptions& options,
                              std::int64_t now);

// A job's alarm addresses: Job::alarm_email split at commas, trimmed, empty items and repeats
// dropped, in order.
std::vector<std::string> alarm_recipients(std::string_view alarm_email);

}  // namespace cronwheel::admin
