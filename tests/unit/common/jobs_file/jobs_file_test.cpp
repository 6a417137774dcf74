#include "common/jobs_file/jobs_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace cronwheel::common::jobs_file {
namespace {

using json = nlohmann::json;

const ScriptReader kNoScripts;

// The problem parse_yaml reports for `text`; fails the test when it reports none.
Problem problem_of(const std::string& text, const ScriptReader& read = kNoScripts) {
  try {
    parse_yaml(text, "jobs.yaml", read);
  } catch (const JobsFileError& e) {
    return e.problem();
  }
  ADD_FAILURE() << "no problem reported for:\n" << text;
  return {};
}

TEST(JobsFile, ReadsGroupsJobsAndUsersIntoTheJsonForm) {
  const auto parsed = parse_yaml(R"(apiVersion: cronwheel/v1
groups:
  - appName: billing
    title: Billing
    addressType: manual
    addressList: [http://10.0.0.1:9999/]
    jobs:
      nightly:
        jobDesc: Nightly
        scheduleType: CRON
        scheduleConf: "0 0 2 * * ?"
        executorTimeout: 600
        executorParam: 600
        childJobs: [reconcile, other-app/notify]
        running: true
      reconcile:
        jobDesc: Reconcile
users:
  - username: alice
    groups: [billing]
)",
                                 "jobs.yaml", kNoScripts);
  const json expected = json::parse(R"({
    "apiVersion": "cronwheel/v1",
    "groups": [{"appName": "billing", "title": "Billing", "addressType": "manual",
                "addressList": ["http://10.0.0.1:9999/"],
                "jobs": {"nightly": {"jobDesc": "Nightly", "scheduleType": "CRON", "scheduleConf": "0 0 2 * * ?",
                                     "executorTimeout": 600, "executorParam": "600",
                                     "childJobs": ["reconcile", "other-app/notify"], "running": true},
                         "reconcile": {"jobDesc": "Reconcile"}}}],
    "users": [{"username": "alice", "groups": ["billing"]}]})");
  EXPECT_EQ(parsed.document, expected);
}

// A group with two jobs and a workflow running them, its edges given by each node's `after`.
const char* const kWorkflowFile = R"(groups:
  - appName: billing
    jobs:
      extract: {jobDesc: Extract}
      load: {jobDesc: Load}
    workflows:
      nightly-etl:
        description: Extract, then load
        scheduleType: CRON
        scheduleConf: "0 0 2 * * ?"
        timezone: Europe/Berlin
        overlap: SKIP
        maxParallel: 2
        timeout: 3600
        onFailureRunning: KILL
        params:
          - {name: day, default: 7, description: days back}
          - name: region
        nodes:
          extract:
            job: extract
            params: "--days=${params.day}"
          load:
            job: load
            after: [extract]
            onFailure: CONTINUE
          report:
            job: reports/weekly
            after: [extract, load]
        running: true
)";

TEST(JobsFile, ReadsWorkflowsWithTheirNodesAndAfterLists) {
  const auto parsed = parse_yaml(kWorkflowFile, "jobs.yaml", kNoScripts);
  const json expected = json::parse(R"({
    "description": "Extract, then load", "scheduleType": "CRON", "scheduleConf": "0 0 2 * * ?",
    "timezone": "Europe/Berlin", "overlap": "SKIP", "maxParallel": 2, "timeout": 3600, "onFailureRunning": "KILL",
    "params": [{"name": "day", "default": "7", "description": "days back"}, {"name": "region"}],
    "nodes": {"extract": {"job": "extract", "params": "--days=${params.day}"},
              "load": {"job": "load", "after": ["extract"], "onFailure": "CONTINUE"},
              "report": {"job": "reports/weekly", "after": ["extract", "load"]}},
    "running": true})");
  EXPECT_EQ(parsed.document["groups"][0]["workflows"]["nightly-etl"], expected);
  EXPECT_EQ(locate(parsed, "groups[billing].workflows[nightly-etl].nodes[report].after[1]")->line, 29);
  EXPECT_EQ(locate(parsed, "groups[billing].workflows[nightly-etl].nodes[load].job")->line, 24);
  EXPECT_EQ(locate(parsed, "groups[billing].workflows[nightly-etl].params[1].name")->line, 18);
}

TEST(JobsFile, WorkflowProblemsNameTheirLineAndPath) {
  const std::string head = "groups:\n  - appName: billing\n    workflows:\n      etl:\n        nodes:\n";
  auto p = problem_of(head + "          a: {job: x}\n          b:\n            job: y\n            after: [a, c]\n");
  EXPECT_EQ(p.location.line, 9);
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].nodes[b].after[1]");
  EXPECT_NE(p.message.find("no node 'c'"), std::string::npos) << p.message;

  p = problem_of(head + "          a:\n            job: x\n            after: [a]\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].nodes[a].after[0]");
  EXPECT_NE(p.message.find("cannot run after itself"), std::string::npos) << p.message;

  p = problem_of(head + "          a: {job: x}\n          b: {job: y, after: [a, a]}\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].nodes[b].after[1]");
  EXPECT_NE(p.message.find("listed twice"), std::string::npos) << p.message;

  p = problem_of(head + "          a:\n            params: x\n");
  EXPECT_EQ(p.location.line, 6);
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].nodes[a]");
  EXPECT_NE(p.message.find("job: missing"), std::string::npos) << p.message;

  p = problem_of(head + "          1st: {job: x}\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].nodes[1st]");
  EXPECT_NE(p.message.find("a node's key"), std::string::npos) << p.message;

  p = problem_of(head + "          a: {job: 'Not/a/ref'}\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].nodes[a].job");

  p = problem_of(head + "          a: {job: x, onFailure: IGNORE}\n");
  EXPECT_NE(p.message.find("expected one of FAIL, CONTINUE"), std::string::npos) << p.message;

  p = problem_of(head + "          a: {job: x}\n        edges: [{from: a, to: a}]\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].edges");
  EXPECT_NE(p.message.find("unknown key 'edges'"), std::string::npos) << "edges are each node's after: " << p.message;

  p = problem_of(head + "          {}\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].nodes");
  EXPECT_NE(p.message.find("at least one node"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    workflows:\n      etl:\n        description: x\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl]");
  EXPECT_NE(p.message.find("nodes: missing"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    workflows:\n      etl:\n        scheduleType: FIX_DELAY\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].scheduleType");
  EXPECT_NE(p.message.find("NONE, CRON, FIX_RATE"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    workflows:\n      " + std::string(65, 'w') + ":\n        nodes: {a: {job: x}}\n");
  EXPECT_NE(p.message.find("1-64"), std::string::npos) << "a workflow's name is at most 64: " << p.message;

  p = problem_of(head + "          a: {job: x}\n        params:\n          - name: day\n          - name: day\n");
  EXPECT_EQ(p.location.line, 9);
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].params[1].name");
  EXPECT_NE(p.message.find("declared twice"), std::string::npos) << p.message;

  p = problem_of(head + "          a: {job: x}\n        params: [{default: x}]\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].params[0]");
  EXPECT_NE(p.message.find("name: missing"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    workflows: [etl]\n");
  EXPECT_EQ(p.path, "groups[billing].workflows");
}

// Calendars, and a job and a workflow naming one by name.
const char* const kCalendarFile = R"(calendars:
  - name: cn-holidays
    description: Mainland China public holidays
    timezone: Asia/Shanghai
    businessDays: [MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY]
    excludedDates:
      - {date: 2026-10-01, name: National Day}
      - {date: --01-01, name: New Year}
    includedDates:
      - date: 2026-09-27
        name: Make-up day
    excludedTimes:
      - {start: "12:00", end: "13:00:00"}
  - name: every-day
groups:
  - appName: billing
    jobs:
      nightly:
        jobDesc: Nightly
        calendar: cn-holidays
        calendarMode: only
    workflows:
      etl:
        calendar: every-day
        nodes:
          a: {job: nightly}
)";

TEST(JobsFile, ReadsCalendarsAndTheJobsAndWorkflowsThatNameThem) {
  const auto parsed = parse_yaml(kCalendarFile, "jobs.yaml", kNoScripts);
  const json expected = json::parse(R"([
    {"name": "cn-holidays", "description": "Mainland China public holidays", "timezone": "Asia/Shanghai",
     "businessDays": ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"],
     "excludedDates": [{"date": "2026-10-01", "name": "National Day"}, {"date": "--01-01", "name": "New Year"}],
     "includedDates": [{"date": "2026-09-27", "name": "Make-up day"}],
     "excludedTimes": [{"start": "12:00", "end": "13:00:00"}]},
    {"name": "every-day"}])");
  EXPECT_EQ(parsed.document["calendars"], expected);
  const auto& job = parsed.document["groups"][0]["jobs"]["nightly"];
  EXPECT_EQ(job["calendar"], "cn-holidays");
  EXPECT_EQ(job["calendarMode"], "only");
  EXPECT_EQ(parsed.document["groups"][0]["workflows"]["etl"]["calendar"], "every-day");
  EXPECT_EQ(locate(parsed, "calendars[cn-holidays].excludedDates[1].date")->line, 8);
  EXPECT_EQ(locate(parsed, "calendars[cn-holidays].includedDates[0].name")->line, 11);
  EXPECT_EQ(locate(parsed, "calendars[cn-holidays].timezone")->line, 4);
  EXPECT_EQ(locate(parsed, "calendars[every-day]")->line, 14);
  EXPECT_EQ(locate(parsed, "groups[billing].jobs[nightly].calendar")->line, 20);
  EXPECT_NO_THROW(check_json(parsed.document));
}

TEST(JobsFile, CalendarProblemsNameTheirLineAndPath) {
  const std::string head = "calendars:\n  - name: cn\n";
  auto p = problem_of(head + "    excludedDates:\n      - {date: 2026-13-01}\ngroups: []\n");
  EXPECT_EQ(p.location.line, 4);
  EXPECT_EQ(p.path, "calendars[cn].excludedDates[0].date");
  EXPECT_NE(p.message.find("expected YYYY-MM-DD, or --MM-DD"), std::string::npos) << p.message;

  for (const char* bad : {"20261001", "2026-1-01", "--1-01", "2026-10-32", "--00-10", "2026/10/01", "tomorrow"}) {
    p = problem_of(head + "    excludedDates: [{date: '" + bad + "'}]\ngroups: []\n");
    EXPECT_EQ(p.path, "calendars[cn].excludedDates[0].date") << bad;
  }

  p = problem_of(head + "    excludedDates:\n      - {date: 2026-10-01}\n      - {date: 2026-10-01, name: again}\ngroups: []\n");
  EXPECT_EQ(p.location.line, 5);
  EXPECT_EQ(p.path, "calendars[cn].excludedDates[1].date");
  EXPECT_NE(p.message.find("listed twice"), std::string::npos) << p.message;

  p = problem_of(head + "    excludedDates: [{date: 2026-10-01}]\n    includedDates:\n      - {date: 2026-10-03}\n"
                        "      - {date: 2026-10-01}\ngroups: []\n");
  EXPECT_EQ(p.location.line, 6);
  EXPECT_EQ(p.path, "calendars[cn].includedDates[1].date");
  EXPECT_NE(p.message.find("in excludedDates too"), std::string::npos) << p.message;

  p = problem_of(head + "    excludedDates: [{name: no date}]\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars[cn].excludedDates[0]");
  EXPECT_NE(p.message.find("date: missing"), std::string::npos) << p.message;

  p = problem_of(head + "    excludedDates: [{date: 2026-10-01, day: holiday}]\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars[cn].excludedDates[0].day");
  EXPECT_NE(p.message.find("expected one of date, name"), std::string::npos) << p.message;

  p = problem_of(head + "    excludedDates: 2026-10-01\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars[cn].excludedDates");

  for (const char* bad : {"24:00", "9:00", "09:60", "09:00:60", "0900", "noon"}) {
    p = problem_of(head + "    excludedTimes:\n      - {start: '" + bad + "', end: '10:00'}\ngroups: []\n");
    EXPECT_EQ(p.location.line, 4) << bad;
    EXPECT_EQ(p.path, "calendars[cn].excludedTimes[0].start") << bad;
  }
  p = problem_of(head + "    excludedTimes: [{start: '09:00'}]\ngroups: []\n");
  EXPECT_NE(p.message.find("end: missing"), std::string::npos) << p.message;

  p = problem_of(head + "    businessDays: [MONDAY, Tuesday]\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars[cn].businessDays[1]");
  EXPECT_NE(p.message.find("unknown weekday 'Tuesday'"), std::string::npos) << p.message;
  p = problem_of(head + "    businessDays: [MONDAY, MONDAY]\ngroups: []\n");
  EXPECT_NE(p.message.find("listed twice"), std::string::npos) << p.message;

  p = problem_of("calendars:\n  - description: nameless\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars[0]");
  EXPECT_NE(p.message.find("name: missing"), std::string::npos) << p.message;
  p = problem_of("calendars:\n  - name: CN Holidays\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars[0].name");
  p = problem_of("calendars:\n  - name: cn\n  - name: cn\ngroups: []\n");
  EXPECT_EQ(p.location.line, 3);
  EXPECT_EQ(p.path, "calendars[cn].name");
  EXPECT_NE(p.message.find("'cn' is listed twice"), std::string::npos) << p.message;
  p = problem_of("calendars: {cn: {}}\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars");
  p = problem_of(head + "    zone: UTC\ngroups: []\n");
  EXPECT_EQ(p.path, "calendars[cn].zone");
  EXPECT_NE(p.message.find("timezone"), std::string::npos) << "the message lists the keys there are: " << p.message;

  const std::string job = "groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n";
  p = problem_of(job + "        calendarMode: only\n");
  EXPECT_EQ(p.location.line, 6);
  EXPECT_EQ(p.path, "groups[billing].jobs[a].calendarMode");
  EXPECT_NE(p.message.find("goes with calendar"), std::string::npos) << p.message;
  p = problem_of(job + "        calendar: cn\n        calendarMode: ONLY\n");
  EXPECT_NE(p.message.find("unknown value 'ONLY', expected one of skip, only"), std::string::npos) << p.message;
  p = problem_of(job + "        calendar: CN/holidays\n");
  EXPECT_EQ(p.path, "groups[billing].jobs[a].calendar");
  p = problem_of("groups:\n  - appName: billing\n    workflows:\n      etl:\n        calendarMode: skip\n        nodes: {a: {job: x}}\n");
  EXPECT_EQ(p.path, "groups[billing].workflows[etl].calendarMode");
}

TEST(JobsFile, ACronJobsDstPolicyIsReadInLowerCase) {
  const auto parsed = parse_yaml("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n"
                                 "        scheduleType: CRON\n        scheduleConf: \"0 30 2 * * ?\"\n"
                                 "        timezone: Europe/Berlin\n        dstGap: fire_after\n        dstRepeat: both\n",
                                 "jobs.yaml", kNoScripts);
  const auto& job = parsed.document["groups"][0]["jobs"]["a"];
  EXPECT_EQ(job["dstGap"], "fire_after");
  EXPECT_EQ(job["dstRepeat"], "both");
  EXPECT_EQ(locate(parsed, "groups[billing].jobs[a].dstRepeat")->line, 10);
  EXPECT_NO_THROW(check_json(parsed.document));
  EXPECT_EQ(parse_yaml(to_yaml(parsed.document), "again.yaml", kNoScripts).document, parsed.document);
}

TEST(JobsFile, ADstPolicyOtherThanTheDefaultIsACronJobsOnly) {
  const std::string job = "groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n";
  auto p = problem_of(job + "        dstGap: fire_after\n");
  EXPECT_EQ(p.location.line, 6);
  EXPECT_EQ(p.location.column, 9);
  EXPECT_EQ(p.path, "groups[billing].jobs[a].dstGap");
  EXPECT_NE(p.message.find("only for scheduleType CRON: a NONE schedule"), std::string::npos) << p.message;
  p = problem_of(job + "        scheduleType: FIX_RATE\n        scheduleConf: \"60\"\n        dstRepeat: both\n");
  EXPECT_EQ(p.location.line, 8);
  EXPECT_EQ(p.path, "groups[billing].jobs[a].dstRepeat");
  EXPECT_NE(p.message.find("a FIX_RATE schedule"), std::string::npos) << p.message;
  // The defaults say nothing a schedule without wall times could not do.
  EXPECT_NO_THROW(parse_yaml(job + "        scheduleType: FIX_RATE\n        dstGap: skip\n        dstRepeat: once\n", "jobs.yaml",
                             kNoScripts));
  p = problem_of(job + "        scheduleType: CRON\n        dstGap: FIRE_AFTER\n");
  EXPECT_EQ(p.path, "groups[billing].jobs[a].dstGap");
  EXPECT_NE(p.message.find("unknown value 'FIRE_AFTER', expected one of skip, fire_after"), std::string::npos) << p.message;
  p = problem_of(job + "        scheduleType: CRON\n        dstRepeat: twice\n");
  EXPECT_NE(p.message.find("expected one of once, both"), std::string::npos) << p.message;
  // The JSON form is held to the same rule.
  try {
    check_json(json::parse(R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","dstRepeat":"both"}}}]})"));
    ADD_FAILURE() << "a NONE job with dstRepeat both was taken";
  } catch (const JobsFileError& e) {
    EXPECT_EQ(e.problem().path, "groups[billing].jobs[a].dstRepeat");
  }
}

TEST(JobsFile, RetriesLimitsAndPrioritiesAreReadAsTheApisFields) {
  const auto parsed = parse_yaml("groups:\n  - appName: billing\n    maxRunning: 10\n    jobs:\n      a:\n        jobDesc: x\n"
                                 "        retryInterval: 30\n        retryBackoff: exponential\n        retryMultiplier: 1.5\n"
                                 "        retryMaxInterval: 3600\n        retryJitter: 20\n        maxConcurrent: 2\n"
                                 "        priority: -5\n"
                                 "      b:\n        jobDesc: y\n        retryBackoff: exponential\n        retryMultiplier: 3.0\n"
                                 "        priority: 1000\n",
                                 "jobs.yaml", kNoScripts);
  const auto& group = parsed.document["groups"][0];
  EXPECT_EQ(group["maxRunning"], 10);
  const auto& a = group["jobs"]["a"];
  EXPECT_EQ(a["retryBackoff"], "exponential");
  EXPECT_TRUE(a["retryMultiplier"].is_number_float());
  EXPECT_EQ(a["retryMultiplier"].get<double>(), 1.5);
  EXPECT_EQ(a["retryMaxInterval"], 3600);
  EXPECT_EQ(a["retryJitter"], 20);
  EXPECT_EQ(a["maxConcurrent"], 2);
  EXPECT_EQ(a["priority"], -5);
  // A whole multiplier is a whole number however it was written.
  EXPECT_TRUE(group["jobs"]["b"]["retryMultiplier"].is_number_integer());
  EXPECT_EQ(group["jobs"]["b"]["retryMultiplier"], 3);
  EXPECT_EQ(locate(parsed, "groups[billing].jobs[a].priority")->line, 13);
  EXPECT_EQ(locate(parsed, "groups[billing].maxRunning")->line, 3);
  EXPECT_NO_THROW(check_json(parsed.document));
  const auto yaml = to_yaml(parsed.document);
  EXPECT_NE(yaml.find("    maxRunning: 10\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("        retryMultiplier: 1.5\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("        retryMultiplier: 3\n"), std::string::npos) << yaml;
  EXPECT_EQ(parse_yaml(yaml, "again.yaml", kNoScripts).document, parsed.document) << yaml;
  // The JSON form takes a multiplier as a JSON number.
  EXPECT_NO_THROW(check_json(json::parse(
      R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","retryBackoff":"exponential","retryMultiplier":2.25}}}]})")));
}

TEST(JobsFile, RetriesLimitsAndPrioritiesOutOfBoundsNameTheirLine) {
  const std::string job = "groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n";
  struct Case {
    std::string lines;
    std::string path;
    std::string message;
  };
  const std::vector<Case> cases{
      {"        priority: 1001\n", "priority", "expected a whole number from -1000 to 1000, got 1001"},
      {"        priority: -1001\n", "priority", "expected a whole number from -1000 to 1000, got -1001"},
      {"        priority: high\n", "priority", "expected a whole number"},
      {"        maxConcurrent: 1001\n", "maxConcurrent", "expected a whole number from 0 to 1000, got 1001"},
      {"        maxConcurrent: -1\n", "maxConcurrent", "from 0 to 1000"},
      {"        retryJitter: 101\n", "retryJitter", "expected a whole number from 0 to 100, got 101"},
      {"        retryBackoff: exponential\n        retryMaxInterval: 2592001\n", "retryMaxInterval",
       "expected a whole number from 0 to 2592000, got 2592001"},
      {"        retryBackoff: EXPONENTIAL\n", "retryBackoff",
       "unknown value 'EXPONENTIAL', expected one of fixed, exponential"},
      {"        retryBackoff: exponential\n        retryMultiplier: 0.5\n", "retryMultiplier",
       "expected a number from 1 to 10, got '0.5'"},
      {"        retryBackoff: exponential\n        retryMultiplier: 10.5\n", "retryMultiplier",
       "expected a number from 1 to 10, got '10.5'"},
      {"        retryBackoff: exponential\n        retryMultiplier: 1e1\n", "retryMultiplier",
       "expected a number from 1 to 10 (such as 2 or 1.5), got '1e1'"},
      {"        retryBackoff: exponential\n        retryMultiplier: .nan\n", "retryMultiplier", "(such as 2 or 1.5)"},
      {"        retryBackoff: exponential\n        retryMultiplier: -2\n", "retryMultiplier",
       "expected a number from 1 to 10, got '-2'"},
      {"        retryBackoff: exponential\n        retryMultiplier: [2]\n", "retryMultiplier",
       "expected a number from 1 to 10, got a list"},
      {"        retryBackoff: exponential\n        retryMultiplier: 99999999999999999999999999\n", "retryMultiplier",
       "(such as 2 or 1.5)"},
      // A multiplier or a ceiling says nothing under a fixed back-off.
      {"        retryMultiplier: 3\n", "retryMultiplier", "only with retryBackoff exponential"},
      {"        retryBackoff: fixed\n        retryMaxInterval: 60\n", "retryMaxInterval", "only with retryBackoff exponential"},
  };
  for (const auto& c : cases) {
    const auto p = problem_of(job + c.lines);
    EXPECT_EQ(p.path, "groups[billing].jobs[a]." + c.path) << c.lines;
    EXPECT_EQ(p.location.line, 5 + static_cast<int>(std::count(c.lines.begin(), c.lines.end(), '\n'))) << c.lines;
    EXPECT_NE(p.message.find(c.message), std::string::npos) << c.lines << p.message;
  }
  auto p = problem_of("groups:\n  - appName: billing\n    maxRunning: 10001\n");
  EXPECT_EQ(p.path, "groups[billing].maxRunning");
  EXPECT_EQ(p.location.line, 3);
  EXPECT_NE(p.message.find("from 0 to 10000, got 10001"), std::string::npos) << p.message;
  // Their defaults are no claim about the back-off.
  EXPECT_NO_THROW(parse_yaml(job + "        retryBackoff: fixed\n        retryMultiplier: 2\n        retryMaxInterval: 0\n",
                             "jobs.yaml", kNoScripts));
  // The JSON form is held to the same rules, and takes no text for a number.
  for (const char* body :
       {R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","retryMultiplier":2.5}}}]})",
        R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","retryBackoff":"exponential","retryMultiplier":"1.5"}}}]})",
        R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","priority":5000000000}}}]})",
        R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","priority":18446744073709551615}}}]})"}) {
    try {
      check_json(json::parse(body));
      ADD_FAILURE() << "taken: " << body;
    } catch (const JobsFileError& e) {
      EXPECT_NE(e.problem().path.find("groups[billing].jobs[a]."), std::string::npos) << e.what();
    }
  }
}

TEST(JobsFile, MergeTakesACalendarDescribedAlikeInTwoFilesOnce) {
  const auto a = parse_yaml("calendars:\n  - {name: cn, timezone: Asia/Shanghai}\ngroups:\n  - appName: billing\n", "a.yaml", kNoScripts);
  const auto b = parse_yaml("calendars:\n  - {name: us}\n  - {name: cn, timezone: Asia/Shanghai}\ngroups:\n  - appName: reports\n",
                            "b.yaml", kNoScripts);
  const auto merged = merge({a, b});
  EXPECT_EQ(merged.document["calendars"],
            json::parse(R"([{"name": "cn", "timezone": "Asia/Shanghai"}, {"name": "us"}])"));
  EXPECT_EQ(locate(merged, "calendars[cn].timezone")->file, "a.yaml");

  const auto c = parse_yaml("calendars:\n  - {name: cn, timezone: Asia/Hong_Kong}\ngroups: []\n", "c.yaml", kNoScripts);
  try {
    merge({a, c});
    FAIL() << "cn is described differently";
  } catch (const JobsFileError& e) {
    EXPECT_EQ(e.problem().location.file, "c.yaml");
    EXPECT_EQ(e.problem().path, "calendars[cn]");
    EXPECT_NE(e.problem().message.find("a.yaml"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(merge({parse_yaml("groups: []\n", "d.yaml", kNoScripts)}).document.contains("calendars"));
}

TEST(JobsFile, NullValuesAreLeftOut) {
  const auto parsed = parse_yaml("groups:\n  - appName: billing\n    title:\n    jobs:\n      a:\n        jobDesc: A\n        author: ~\n",
                                 "jobs.yaml", kNoScripts);
  EXPECT_EQ(parsed.document["groups"][0], json::parse(R"({"appName":"billing","jobs":{"a":{"jobDesc":"A"}}})"));
}

TEST(JobsFile, UnknownKeyNamesFileLineAndPath) {
  const auto p = problem_of("groups:\n  - appName: billing\n    jobs:\n      nightly:\n        jobDesc: x\n        schedule: CRON\n");
  EXPECT_EQ(p.location.file, "jobs.yaml");
  EXPECT_EQ(p.location.line, 6);
  EXPECT_EQ(p.path, "groups[billing].jobs[nightly].schedule");
  EXPECT_NE(p.message.find("unknown key 'schedule'"), std::string::npos) << p.message;
  EXPECT_NE(p.message.find("scheduleType"), std::string::npos) << "the message lists the keys there are";
  EXPECT_EQ(to_string(p).rfind("jobs.yaml:6:9: groups[billing].jobs[nightly].schedule: unknown key", 0), 0u) << to_string(p);
}

TEST(JobsFile, WrongTypesAreRefusedWithTheirLine) {
  auto p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        executorTimeout: ten\n");
  EXPECT_EQ(p.location.line, 6);
  EXPECT_EQ(p.path, "groups[billing].jobs[a].executorTimeout");
  EXPECT_NE(p.message.find("whole number"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        running: yes\n");
  EXPECT_EQ(p.path, "groups[billing].jobs[a].running");
  EXPECT_NE(p.message.find("true or false"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: [x]\n");
  EXPECT_EQ(p.path, "groups[billing].jobs[a].jobDesc");
  EXPECT_NE(p.message.find("expected a string, got a list"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        executorTimeout: -1\n");
  EXPECT_NE(p.message.find("from 0 to 2147483647"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        executorTimeout: 2147483648\n");
  EXPECT_NE(p.message.find("from 0 to 2147483647"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        misfireStrategy: SOMETIMES\n");
  EXPECT_NE(p.message.find("unknown value 'SOMETIMES', expected one of DO_NOTHING, FIRE_ONCE_NOW"), std::string::npos)
      << p.message;
}

TEST(JobsFile, NamesAndReferencesAreChecked) {
  auto p = problem_of("groups:\n  - appName: billing\n    jobs:\n      Nightly:\n        jobDesc: x\n");
  EXPECT_EQ(p.path, "groups[billing].jobs[Nightly]");
  EXPECT_NE(p.message.find("lower-case"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: bil\n    jobs: {}\n");
  EXPECT_EQ(p.path, "groups[0].appName");

  p = problem_of("groups:\n  - title: x\n");
  EXPECT_EQ(p.path, "groups[0]");
  EXPECT_NE(p.message.find("appName: missing"), std::string::npos);

  p = problem_of("groups:\n  - appName: billing\n  - appName: billing\n");
  EXPECT_EQ(p.location.line, 3);
  EXPECT_NE(p.message.find("'billing' is listed twice"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        childJobs: [b, 'x/y', b]\n");
  EXPECT_EQ(p.path, "groups[billing].jobs[a].childJobs[1]");

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        childJobs: [b, b]\n");
  EXPECT_EQ(p.path, "groups[billing].jobs[a].childJobs[1]");
  EXPECT_NE(p.message.find("listed twice"), std::string::npos);

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        author: x\n");
  EXPECT_NE(p.message.find("jobDesc: missing"), std::string::npos);

  p = problem_of("groups: []\nusers:\n  - username: a\n  - username: a\n");
  EXPECT_EQ(p.path, "users[a].username");
}

TEST(JobsFile, DuplicateKeysAndSecondDocumentsAreRefused) {
  auto p = problem_of("groups:\n  - appName: billing\n    title: a\n    title: b\n");
  EXPECT_EQ(p.location.line, 4);
  EXPECT_NE(p.message.find("'title' appears twice"), std::string::npos) << p.message;

  p = problem_of("groups: []\n---\ngroups: []\n");
  EXPECT_NE(p.message.find("one document per file"), std::string::npos) << p.message;
  EXPECT_EQ(p.location.line, 2);
  p = problem_of("groups: []\n...\n");
  EXPECT_NE(p.message.find("one document per file"), std::string::npos) << p.message;
  EXPECT_NO_THROW(parse_yaml("# jobs\n%YAML 1.2\n---\ngroups: []\n", "jobs.yaml", kNoScripts)) << "a leading --- is one document";
  p = problem_of("groups: []\n---x: is not a marker\n");
  EXPECT_EQ(p.path, "---x") << "a key, not a second document";

  // Texts on which YAML::LoadAll never returns.
  p = problem_of(",0](,0](");
  EXPECT_FALSE(p.message.empty());

  p = problem_of("");
  EXPECT_NE(p.message.find("expected a map with the key groups"), std::string::npos) << p.message;

  p = problem_of("apiVersion: cronwheel/v1\n");
  EXPECT_NE(p.message.find("groups: missing"), std::string::npos) << p.message;

  p = problem_of("apiVersion: cronwheel/v2\ngroups: []\n");
  EXPECT_EQ(p.path, "apiVersion");

  p = problem_of("groups: [\n");
  EXPECT_GT(p.location.line, 0) << "a syntax error says where";
}

TEST(JobsFile, ScriptFilesAreReadThroughTheReader) {
  const ScriptReader read = [](const std::string& path) -> std::string {
    if (path == "scripts/a.sh") return "#!/bin/sh\necho a\n";
    throw std::runtime_error("no such file");
  };
  const auto parsed = parse_yaml(
      "groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        glueType: GLUE_SHELL\n"
      "        scriptFile: scripts/a.sh\n",
      "jobs.yaml", read);
  const auto& job = parsed.document["groups"][0]["jobs"]["a"];
  EXPECT_EQ(job["glueSource"], "#!/bin/sh\necho a\n");
  EXPECT_FALSE(job.contains("scriptFile"));
  EXPECT_EQ(locate(parsed, "groups[billing].jobs[a].glueSource")->line, 7) << "the source's problems point at scriptFile";

  auto p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        scriptFile: gone.sh\n", read);
  EXPECT_EQ(p.location.line, 6);
  EXPECT_NE(p.message.find("cannot read 'gone.sh': no such file"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        glueSource: x\n        scriptFile: scripts/a.sh\n",
                 read);
  EXPECT_NE(p.message.find("not both"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        scriptFile: scripts/a.sh\n");
  EXPECT_NE(p.message.find("only the cronwheel command reads script files"), std::string::npos) << p.message;

  const ScriptReader binary = [](const std::string&) { return std::string("\xff\xfe", 2); };
  p = problem_of("groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: x\n        scriptFile: a.bin\n", binary);
  EXPECT_NE(p.message.find("not UTF-8"), std::string::npos) << p.message;
}

TEST(JobsFile, HostileDocumentsAreBounded) {
  // Aliases that would expand to 10^9 values.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char prev = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  }
  auto p = problem_of(bomb);
  EXPECT_NE(p.message.find("more than"), std::string::npos) << p.message;

  // Aliases of a long text: few values, much memory.
  std::string wide = "a: &a \"" + std::string(60'000, 'x') + "\"\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n";
  for (char c = 'c'; c <= 'h'; ++c) {
    const char prev = static_cast<char>(c - 1);
    wide += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  }
  p = problem_of(wide);
  EXPECT_NE(p.message.find("MiB once its aliases are expanded"), std::string::npos) << p.message;

  p = problem_of("groups: []\n" + std::string(300, 'k') + ": 1\n");
  EXPECT_NE(p.message.find("a key longer than 200 bytes"), std::string::npos) << p.message;

  p = problem_of(std::string(200, '[') + std::string(200, ']'));
  EXPECT_FALSE(p.message.empty());

  p = problem_of(std::string(kMaxDocumentBytes + 1, ' '));
  EXPECT_NE(p.message.find("larger than 16 MiB"), std::string::npos) << p.message;

  p = problem_of("groups:\n  - appName: \"bill\\xffing\"\n");
  EXPECT_FALSE(p.message.empty());
}

TEST(JobsFile, JsonFormIsCheckedStrictly) {
  EXPECT_NO_THROW(check_json(json::parse(R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","executorParam":"600"}}}]})")));
  try {
    check_json(json::parse(R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","executorParam":600}}}]})"));
    FAIL() << "a number for a string field is refused in JSON";
  } catch (const JobsFileError& e) {
    EXPECT_EQ(e.problem().path, "groups[billing].jobs[a].executorParam");
    EXPECT_EQ(e.problem().location.line, 0);
  }
  try {
    check_json(json::parse(R"({"groups":[{"appName":"billing","jobs":{"a":{"jobDesc":"x","scriptFile":"a.sh"}}}]})"));
    FAIL() << "scriptFile is the CLI's";
  } catch (const JobsFileError& e) {
    EXPECT_EQ(e.problem().path, "groups[billing].jobs[a].scriptFile");
  }  EXPECT_NO_THROW(check_json(parse_yaml(kWorkflowFile, "jobs.yaml", kNoScripts).document));
  try {
    check_json(json::parse(R"({"groups":[{"appName":"billing","workflows":{"etl":{"nodes":{"a":{"job":"x","after":"b"}}}}}]})"));
    FAIL() << "after is a list";
  } catch (const JobsFileError& e) {
    EXPECT_EQ(e.problem().path, "groups[billing].workflows[etl].nodes[a].after");
  }
  EXPECT_NO_THROW(check_json(json::parse(R"({"calendars":[{"name":"cn","excludedDates":[{"date":"2026-10-01"}]}],"groups":[]})")));
  try {
    check_json(json::parse(R"({"calendars":[{"name":"cn","excludedTimes":[{"start":900,"end":"10:00"}]}],"groups":[]})"));
    FAIL() << "a time is a string in JSON";
  } catch (const JobsFileError& e) {
    EXPECT_EQ(e.problem().path, "calendars[cn].excludedTimes[0].start");
  }
}

TEST(JobsFile, MergeRefusesAGroupInTwoFiles) {
  auto a = parse_yaml("groups:\n  - appName: billing\n", "a.yaml", kNoScripts);
  auto b = parse_yaml("groups:\n  - appName: reports\n  - appName: billing\n", "b.yaml", kNoScripts);
  try {
    merge({a, b});
    FAIL() << "billing is in both";
  } catch (const JobsFileError& e) {
    EXPECT_EQ(e.problem().location.file, "b.yaml");
    EXPECT_EQ(e.problem().location.line, 3);
    EXPECT_NE(e.problem().message.find("a.yaml"), std::string::npos) << e.what();
  }
  auto c = parse_yaml("groups:\n  - appName: reports\n    jobs:\n      x:\n        jobDesc: x\n", "c.yaml", kNoScripts);
  const auto merged = merge({a, c});
  EXPECT_EQ(merged.document["groups"].size(), 2u);
  EXPECT_EQ(locate(merged, "groups[reports].jobs[x].scheduleConf")->file, "c.yaml");
  EXPECT_EQ(locate(merged, "groups[reports].jobs[x].scheduleConf")->line, 4);
}

TEST(JobsFile, LocateFindsTheNearestKnownNode) {
  const auto parsed = parse_yaml("groups:\n  - appName: billing\n    jobs:\n      a.b:\n        jobDesc: x\n", "f.yaml", kNoScripts);
  EXPECT_EQ(locate(parsed, "groups[billing].jobs[a.b].jobDesc")->line, 5);
  EXPECT_EQ(locate(parsed, "groups[billing].jobs[a.b].timezone")->line, 4);
  EXPECT_EQ(locate(parsed, "groups[billing]")->line, 2);
  EXPECT_EQ(locate(parsed, "nothing[here]")->line, 1) << "the document itself";
  // Any text at all: the path may come from a server's answer.
  for (const char* odd : {"(]", "]", "[", "..", "a]b]", "groups[billing]]"}) EXPECT_TRUE(locate(parsed, odd)) << odd;
}

// Texts that are easy to write wrong as YAML.
std::vector<std::string> awkward_texts() {
  return {"",
          "plain",
          "two words",
          "Two  spaces",
          "true story",
          "word ",
          "0 0 2 * * ?",
          "600",
          "007",
          "-5",
          "true",
          "null",
          "~",
          "yes",
          "a: b",
          "# not a comment",
          "- not a list",
          "'quoted'",
          "\"dq\"",
          " leading",
          "trailing ",
          "line\nline",
          "line\nline\n",
          "line\nline\n\n\n",
          "#!/bin/sh\n  indented\n\n\tend\n",
          "\n\nafter blank lines",
          " starts with a space\nsecond\n",
          "crlf\r\nline\r\n",
          "control \x01 and \x7f",
          "unicode: 计划任务 ✓",
          "tab\tinside",
          "back\\slash",
          "line\n  \nwith a line of spaces\n",
          "ends with spaces  \nnext  \n",
          "next line \xc2\x85 char\nx"};
}

TEST(JobsFile, ToYamlReadsBackTheSameDocument) {
  json jobs = json::object();
  int i = 0;
  for (const auto& text : awkward_texts()) {
    jobs["job-" + std::to_string(i++)] = json{{"jobDesc", text.empty() ? "x" : text},
                                              {"executorParam", text},
                                              {"glueSource", text},
                                              {"childJobs", json::array({"a", "other-app/b"})},
                                              {"executorTimeout", 5},
                                              {"running", true},
                                              {"glueHistory", json::array({json{{"createdAt", 1700000000000}, {"glueSource", text}}})}};
  }
  jobs["1numeric"] = json{{"jobDesc", "x"}};
  jobs["null"] = json{{"jobDesc", "x"}};
  json params = json::array();
  json nodes = json::object();
  i = 0;
  for (const auto& text : awkward_texts()) {
    params.push_back(json{{"name", "p" + std::to_string(i)}, {"default", text}, {"description", text}});
    nodes["n" + std::to_string(i)] = json{{"job", "other-app/b"}, {"params", text}, {"after", json::array({"first"})}};
    ++i;
  }
  nodes["first"] = json{{"job", "a"}, {"onFailure", "CONTINUE"}};
  nodes["y"] = json{{"job", "null"}, {"after", json::array({"first", "n1"})}};
  const json workflows{{"etl", json{{"description", "Extract: then load"}, {"scheduleType", "FIX_RATE"}, {"scheduleConf", "30"},
                                    {"maxParallel", 3}, {"params", params}, {"nodes", nodes}, {"running", false}}},
                       {"true", json{{"nodes", json{{"only", json{{"job", "a"}}}}}, {"params", json::array()}}}};
  json calendars = json::array();
  json dates = json::array();
  i = 0;
  for (const auto& text : awkward_texts()) {
    char date[32];
    std::snprintf(date, sizeof date, "2026-%02d-%02d", 1 + i / 28, 1 + i % 28);
    dates.push_back(json{{"date", date}, {"name", text}});
    ++i;
  }
  calendars.push_back(json{{"name", "cn-holidays"}, {"description", "Holidays: the state's\nsecond line"},
                           {"timezone", "Asia/Shanghai"}, {"businessDays", json::array({"MONDAY", "FRIDAY"})},
                           {"excludedDates", dates}, {"includedDates", json::array({json{{"date", "2026-09-27"}}})},
                           {"excludedTimes", json::array({json{{"start", "23:00"}, {"end", "01:00:00"}}})}});
  calendars.push_back(json{{"name", "true"}, {"businessDays", json::array()}, {"excludedDates", json::array()},
                           {"excludedTimes", json::array()}});
  calendars.push_back(json{{"name", "0"}});
  jobs["with-calendar"] = json{{"jobDesc", "x"}, {"calendar", "true"}, {"calendarMode", "only"}};
  jobs["numeric-calendar"] = json{{"jobDesc", "x"}, {"calendar", "0"}};
  jobs["dst"] = json{{"jobDesc", "x"}, {"scheduleType", "CRON"}, {"scheduleConf", "0 30 2 * * ?"}, {"dstGap", "fire_after"},
                     {"dstRepeat", "both"}, {"calendar", "0"}};
  jobs["retries"] = json{{"jobDesc", "x"}, {"retryBackoff", "exponential"}, {"retryMultiplier", 1.1},
                         {"retryMaxInterval", 2592000}, {"retryJitter", 100}, {"maxConcurrent", 1000}, {"priority", -1000}};
  jobs["whole-multiplier"] = json{{"jobDesc", "x"}, {"retryBackoff", "exponential"}, {"retryMultiplier", 10}};
  const json document{{"apiVersion", "cronwheel/v1"},
                      {"calendars", calendars},
                      {"groups", json::array({json{{"appName", "billing"}, {"title", "Billing: the team's"}, {"jobs", jobs}, {"workflows", workflows}},
                                              json{{"appName", "empty-group"}, {"addressList", json::array()}, {"maxRunning", 0},
                                                   {"workflows", json::object()}}})},
                      {"users", json::array({json{{"username", "true"}, {"role", "normal"}, {"groups", json::array({"billing"})}}})}};
  ASSERT_NO_THROW(check_json(document));
  const auto yaml = to_yaml(document);
  ParsedFile back;
  ASSERT_NO_THROW(back = parse_yaml(yaml, "export.yaml", kNoScripts)) << yaml;
  EXPECT_EQ(back.document, document) << yaml;
}

TEST(JobsFile, ToYamlWritesCalendarsFirstAndADateALine) {
  const json document{{"calendars", json::array({json{{"name", "cn"},
                                                      {"excludedDates", json::array({json{{"date", "2026-10-01"}, {"name", "National Day"}},
                                                                                     json{{"date", "--01-01"}}})},
                                                      {"excludedTimes", json::array({json{{"start", "12:00"}, {"end", "13:00"}}})}}})},
                      {"groups", json::array()}};
  EXPECT_EQ(to_yaml(document), "calendars:\n"
                               "  - name: cn\n"
                               "    excludedDates:\n"
                               "      - {date: \"2026-10-01\", name: National Day}\n"
                               "      - {date: \"--01-01\"}\n"
                               "    excludedTimes:\n"
                               "      - {start: \"12:00\", end: \"13:00\"}\n"
                               "groups: []\n");
}

TEST(JobsFile, ToYamlWritesScriptsAsLiteralBlocks) {
  const json document{{"groups", json::array({json{{"appName", "billing"},
                                                   {"jobs", json{{"a", json{{"jobDesc", "x"}, {"glueSource", "#!/bin/sh\necho hi\n"}}}}}}})}};
  const auto yaml = to_yaml(document);
  EXPECT_NE(yaml.find("glueSource: |2\n          #!/bin/sh\n          echo hi\n"), std::string::npos) << yaml;
}

// Every YAML example in docs/ that has a `groups:` key is a valid jobs file.
TEST(JobsFile, ExamplesInTheDocsAreValid) {
  const ScriptReader any_script = [](const std::string&) { return std::string("#!/bin/sh\necho example\n"); };
  int examples = 0;
  for (const char* doc : {"docs/jobs-as-code.md", "docs/migrating-from-xxl-job.md", "docs/cli.md", "docs/workflows.md", "README.md"}) {
    std::ifstream in(std::string(CRONWHEEL_SOURCE_DIR) + "/" + doc);
    if (!in) continue;  // not every document has examples yet
    std::stringstream text;
    text << in.rdbuf();
    const std::string content = text.str();
    static const std::regex block("```yaml\n([\\s\\S]*?)```");
    for (auto it = std::sregex_iterator(content.begin(), content.end(), block); it != std::sregex_iterator(); ++it) {
      const std::string example = (*it)[1];
      if (example.find("groups:") == std::string::npos) continue;
      ++examples;
      EXPECT_NO_THROW(parse_yaml(example, doc, any_script)) << doc << ":\n" << example;
    }
  }
  EXPECT_GE(examples, 1);
}

// The fuzz target's properties (tests/fuzz/jobs_file_fuzz.cpp) on its seeds, in every build: what
// parse_yaml reads passes check_json, and to_yaml of it reads back as the same document.
TEST(JobsFile, FuzzSeedsKeepTheFuzzTargetsProperties) {
  const ScriptReader scripts = [](const std::string& path) { return "#!/bin/sh\necho " + path + "\n"; };
  int read = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CRONWHEEL_SOURCE_DIR) + "/tests/fuzz/corpus/jobs_file")) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    ParsedFile parsed;
    try {
      parsed = parse_yaml(text.str(), entry.path().filename().string(), scripts);
    } catch (const JobsFileError&) {
      continue;  // seeds of refusals
    }
    ++read;
    EXPECT_NO_THROW(check_json(parsed.document)) << entry.path();
    const auto yaml = to_yaml(parsed.document);
    ParsedFile again;
    ASSERT_NO_THROW(again = parse_yaml(yaml, "again.yaml", kNoScripts)) << entry.path() << ":\n" << yaml;
    EXPECT_EQ(again.document, parsed.document) << entry.path() << ":\n" << yaml;
  }
  EXPECT_GE(read, 5);
}

// The keys the format takes at one level, as a problem about an unknown key there lists them.
std::set<std::string> keys_taken(const std::string& yaml_with_zzz) {
  const auto message = problem_of(yaml_with_zzz).message;
  const auto list = message.substr(message.find("expected one of ") + 16);
  std::set<std::string> keys;
  std::stringstream in(list);
  for (std::string key; std::getline(in, key, ',');) keys.insert(key.substr(key.find_first_not_of(' ')));
  return keys;
}

std::set<std::string> schema_keys(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.at("properties").items()) keys.insert(key);
  return keys;
}

// docs/jobs-file.schema.json names exactly the keys the format takes, at every level.
TEST(JobsFile, TheJsonSchemaHasTheFormatsKeys) {
  std::ifstream in(std::string(CRONWHEEL_SOURCE_DIR) + "/docs/jobs-file.schema.json");
  ASSERT_TRUE(in);
  const auto schema = json::parse(in);
  const auto& defs = schema.at("$defs");
  EXPECT_EQ(keys_taken("zzz: 1\ngroups: []\n"), schema_keys(schema));
  EXPECT_EQ(keys_taken("groups:\n  - appName: billing\n    zzz: 1\n"), schema_keys(defs.at("group")));
  EXPECT_EQ(keys_taken("groups:\n  - appName: billing\n    jobs:\n      a: {jobDesc: x, zzz: 1}\n"), schema_keys(defs.at("job")));
  EXPECT_EQ(keys_taken("groups:\n  - appName: billing\n    jobs:\n      a: {jobDesc: x, glueHistory: [{zzz: 1}]}\n"),
            schema_keys(defs.at("job").at("properties").at("glueHistory").at("items")));
  EXPECT_EQ(keys_taken("groups: []\nusers:\n  - {username: a, zzz: 1}\n"), schema_keys(defs.at("user")));
  const std::string workflow = "groups:\n  - appName: billing\n    workflows:\n      etl:\n";
  EXPECT_EQ(keys_taken(workflow + "        zzz: 1\n"), schema_keys(defs.at("workflow")));
  EXPECT_EQ(keys_taken(workflow + "        nodes: {a: {job: x, zzz: 1}}\n"), schema_keys(defs.at("workflowNode")));
  EXPECT_EQ(keys_taken(workflow + "        params: [{name: a, zzz: 1}]\n"), schema_keys(defs.at("workflowParam")));
  EXPECT_EQ(keys_taken("calendars: [{name: cn, zzz: 1}]\ngroups: []\n"), schema_keys(defs.at("calendar")));
  EXPECT_EQ(keys_taken("calendars: [{name: cn, excludedDates: [{zzz: 1}]}]\ngroups: []\n"),
            schema_keys(defs.at("calendarDate")));
  EXPECT_EQ(keys_taken("calendars: [{name: cn, excludedTimes: [{zzz: 1}]}]\ngroups: []\n"),
            schema_keys(defs.at("calendarTimeRange")));
}

}  // namespace
}  // namespace cronwheel::common::jobs_file
