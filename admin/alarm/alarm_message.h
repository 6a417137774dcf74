#pragma once

// What an alarm says (docs/alarms.md): pure functions of a claim, so the wording is tested with
// fixed runs and every channel sends the same text.

#include <string>
#include <string_view>
#include <vector>

#include "admin/model/alarm_store.h"

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

// A job's alarm addresses: Job::alarm_email split at commas, trimmed, empty items and repeats
// dropped, in order.
std::vector<std::string> alarm_recipients(std::string_view alarm_email);

}  // namespace cronwheel::admin
