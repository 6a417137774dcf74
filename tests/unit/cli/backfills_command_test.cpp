// `cronwheel jobs backfill`, `cronwheel workflows backfill` and `cronwheel backfills` against a
// scripted API: the times the command line takes, the arguments refused before anything is sent,
// what is sent, a dry run's instants, following a backfill to its end (on the harness's fake
// clock) with its exit status, and the list, the page of one backfill and its cancel.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "cli/instant.h"
#include "tests/unit/cli/cli_harness.h"

namespace cronwheel::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::CliResult;
using testing::job_json;
using testing::page_of;

constexpr std::int64_t kMay1 = 1777593600000;  // 2026-05-01T00:00:00Z

// ---- times

std::int64_t instant(const std::string& text) {
  const auto parsed = parse_instant(text);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << text << ": " << *why;
    return 0;
  }
  return std::get<std::int64_t>(parsed);
}

std::string refusal(const std::string& text) {
  const auto parsed = parse_instant(text);
  if (const auto* why = std::get_if<std::string>(&parsed)) return *why;
  ADD_FAILURE() << text << " was taken as " << std::get<std::int64_t>(parsed);
  return {};
}

TEST(Instant, TakesIso8601WithItsOffsetOrEpochMilliseconds) {
  EXPECT_EQ(instant("2026-05-01T00:00:00Z"), kMay1);
  EXPECT_EQ(instant("2026-05-01T00:00Z"), kMay1);
  EXPECT_EQ(instant("2026-05-01T02:00:00+02:00"), kMay1);
  EXPECT_EQ(instant("2026-04-30T19:30:00-04:30"), kMay1);
  EXPECT_EQ(instant("2026-05-01T00:00:01.5Z"), kMay1 + 1500);
  EXPECT_EQ(instant("2026-05-01T00:00:01.123+00:00"), kMay1 + 1123);
  EXPECT_EQ(instant("2024-02-29T12:00:00Z"), 1709208000000);  // a leap day
  EXPECT_EQ(instant("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(instant("1777593600000"), kMay1);
  EXPECT_EQ(instant("0"), 0);
}

TEST(Instant, RefusesWhatIsNotOneInstantSayingWhy) {
  EXPECT_NE(refusal("2026-05-01T02:00:00").find("needs its UTC offset"), std::string::npos);
  EXPECT_NE(refusal("2026-05-01T02:00").find("needs its UTC offset"), std::string::npos);
  EXPECT_EQ(refusal("2026-02-30T00:00:00Z"), "no such day: 2026-02-30");
  EXPECT_EQ(refusal("2025-02-29T00:00:00Z"), "no such day: 2025-02-29");
  EXPECT_EQ(refusal("2026-13-01T00:00:00Z"), "no such day: 2026-13-01");
  EXPECT_EQ(refusal("2026-05-01T24:00:00Z"), "no such time of day: 24:00:00");
  EXPECT_EQ(refusal("2026-05-01T23:60Z"), "no such time of day: 23:60");
  EXPECT_EQ(refusal("2026-05-01T00:00:00.1234Z"), "a second's fraction has 1 to 3 digits (milliseconds)");
  EXPECT_EQ(refusal("2026-05-01T00:00:00+24:00"), "a UTC offset is +HH:MM or -HH:MM, at most 23:59");
  EXPECT_EQ(refusal("1969-12-31T23:59:59Z"), "no such day: 1969-12-31");
  EXPECT_EQ(refusal("1234567890123456789"), "epoch milliseconds have at most 18 digits");
  for (const char* text : {"", "now", "-1", "2026-05-01", "2026-05-01 00:00:00Z", "2026-5-01T00:00:00Z",
                           "2026-05-01T00:00:00+0200", "2026-05-01T00:00:00z", "2026-05-01T00:00:00Zjunk",
                           "2026-05-01T00:00:00+02:00:00", "+2026-05-01T00:00:00Z", "2026-05-01T00:00:00.Z",
                           "2026-05-01T0:00:00Z"}) {
    EXPECT_NE(refusal(text), "") << text;
  }
  EXPECT_NE(refusal(std::string(10'000, '2')).find("at most 18 digits"), std::string::npos);
  EXPECT_NE(refusal("2026-05-01T00:00:00Z" + std::string(10'000, ' ')).find("expected a time"), std::string::npos);
}

// ---- the commands

// A backfill of job 7 as the API answers it: 3 instants from May 1st, 00:00 UTC, a minute apart.
json backfill_json(std::int64_t id, const std::string& state, std::int64_t written, json runs, const std::string& reason = "") {
  return {{"id", id},
          {"kind", "job"},
          {"jobId", 7},
          {"workflowId", nullptr},
          {"workflowName", nullptr},
          {"inputs", nullptr},
          {"jobGroup", 3},
          {"from", kMay1},
          {"to", kMay1 + 180'000},
          {"onExisting", "SKIP"},
          {"maxConcurrent", 1},
          {"state", state},
          {"cursor", written > 0 ? json(kMay1 + (written - 1) * 60'000) : json(nullptr)},
          {"total", 3},
          {"written", written},
          {"skipped", 0},
          {"createdBy", "ops"},
          {"createdAt", kMay1 + 3'600'000},
          {"endedAt", state == "running" ? json(nullptr) : json(kMay1 + 3'700'000)},
          {"reason", reason},
          {"runs", std::move(runs)}};
}

json runs_of(int pending, int running, int succeeded, int failed, int cancelled) {
  return {{"pending", pending}, {"running", running}, {"succeeded", succeeded}, {"failed", failed}, {"cancelled", cancelled}};
}

class BackfillsCommandTest : public testing::CliCommandTest {
 protected:
  void SetUp() override {
    CliCommandTest::SetUp();
    // billing/nightly is job 7.
    cli_.api.answer("GET api/v1/jobs?appName=billing&name=nightly&limit=2", 200, page_of(json::array({job_json(7, 3, "nightly")})));
  }

  json sent_body(std::size_t i) const { return json::parse(*cli_.api.requests().at(i).body); }
};

TEST_F(BackfillsCommandTest, BadArgumentsAreBadUsageBeforeAnythingIsSent) {
  expect_usage_error({"jobs", "backfill", "billing/nightly", "--to", "2026-05-01T00:03Z"},
                     "cronwheel: jobs backfill: --from is required");
  expect_usage_error({"jobs", "backfill", "billing/nightly", "--from", "2026-05-01T00:00", "--to", "2026-05-01T00:03Z"},
                     "cronwheel: jobs backfill: --from: '2026-05-01T00:00': an ISO-8601 time needs its UTC offset, as "
                     "2026-05-01T02:00:00+02:00 or 2026-05-01T00:00:00Z");
  expect_usage_error({"jobs", "backfill", "billing/nightly", "--from", "1777593600000", "--to", "yesterday"},
                     "cronwheel: jobs backfill: --to: 'yesterday': expected a time as ISO-8601 with its UTC offset "
                     "(2026-05-01T02:00:00+02:00, 2026-05-01T00:00Z) or epoch milliseconds");
  expect_usage_error({"jobs", "backfill", "billing/nightly", "--from", "0", "--to", "1", "--on-existing", "RERUN"},
                     "cronwheel: jobs backfill: --on-existing: RERUN not in {skip,rerun}");
  expect_usage_error({"jobs", "backfill", "billing/nightly", "--from", "0", "--to", "1", "--max-concurrent", "101"},
                     "cronwheel: jobs backfill: --max-concurrent: Value 101 not in range 1 to 100");
  expect_usage_error({"jobs", "backfill", "billing/nightly", "--from", "0", "--to", "1", "--dry-run", "--wait"},
                     "cronwheel: jobs backfill: --dry-run excludes --wait");
  expect_usage_error({"jobs", "backfill", "billing/nightly", "--from", "0", "--to", "1", "--wait-timeout", "60"},
                     "cronwheel: jobs backfill: --wait-timeout requires --wait");
  expect_usage_error({"backfills", "get", "twelve"}, "cronwheel: backfills get: ID: 'twelve': an id is a positive whole number");
  expect_usage_error({"backfills", "list", "--state", "failed"},
                     "cronwheel: backfills list: --state: failed not in {running,done,cancelled}");
}

TEST_F(BackfillsCommandTest, ADryRunSendsTheRangeAndPrintsEachInstantAndWhetherItRanAlready) {
  cli_.api.answer("POST api/v1/jobs/7/backfill", 200,
                  {{"jobId", 7},
                   {"from", kMay1},
                   {"to", kMay1 + 180'000},
                   {"onExisting", "SKIP"},
                   {"total", 3},
                   {"toRun", 2},
                   {"instants", {kMay1, kMay1 + 60'000, kMay1 + 120'000}},
                   {"existing", {kMay1 + 60'000}}});
  const CliResult r = cli_.run({"jobs", "backfill", "billing/nightly", "--from", "2026-05-01T02:00:00+02:00", "--to",
                                "2026-05-01T00:03Z", "--max-concurrent", "4", "--dry-run"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "INSTANT                    RAN BEFORE  BACKFILL\n"
            "2026-05-01T00:00:00+00:00  no          runs\n"
            "2026-05-01T00:01:00+00:00  yes         skips\n"
            "2026-05-01T00:02:00+00:00  no          runs\n"
            "job billing/nightly (7): 3 instants from 2026-05-01T00:00:00+00:00 to 2026-05-01T00:03:00+00:00, 2 to run, "
            "1 of them ran already (skipped) (dry run: nothing written)\n");
  ASSERT_EQ(cli_.api.calls().back(), "POST api/v1/jobs/7/backfill");
  EXPECT_EQ(sent_body(cli_.api.requests().size() - 1),
            json({{"from", kMay1}, {"to", kMay1 + 180'000}, {"maxConcurrent", 4}, {"dryRun", true}}));
}

TEST_F(BackfillsCommandTest, ADryRunWithRerunSaysTheInstantsThatRanRunAgainAndJsonPrintsTheAnswer) {
  const json plan{{"jobId", 7}, {"from", kMay1}, {"to", kMay1 + 60'000}, {"onExisting", "RERUN"}, {"total", 1},
                  {"toRun", 1}, {"instants", {kMay1}}, {"existing", {kMay1}}};
  cli_.api.answer("POST api/v1/jobs/7/backfill", 200, plan);
  CliResult r = cli_.run({"jobs", "backfill", "7", "--from", "1777593600000", "--to", "1777593660000", "--on-existing",
                          "rerun", "--dry-run"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2026-05-01T00:00:00+00:00  yes         runs again\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 to run, 1 of them ran already (run again: --on-existing rerun)"), std::string::npos) << r.out;
  EXPECT_EQ(sent_body(0)["onExisting"], "RERUN") << "a job named by its id is not looked up";

  r = cli_.run({"jobs", "backfill", "7", "--from", "1777593600000", "--to", "1777593660000", "--dry-run", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), plan);
}

TEST_F(BackfillsCommandTest, WithoutWaitTheBackfillIsCreatedAndItsIdPrinted) {
  cli_.api.answer("POST api/v1/jobs/7/backfill", 201, backfill_json(12, "running", 0, runs_of(0, 0, 0, 0, 0)));
  CliResult r = cli_.run({"jobs", "backfill", "billing/nightly", "--from", "2026-05-01T00:00Z", "--to", "2026-05-01T00:03Z"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "job billing/nightly (7): backfill 12 running, 3 instants from 2026-05-01T00:00:00+00:00 to "
                   "2026-05-01T00:03:00+00:00 (cronwheel backfills get 12)\n");
  EXPECT_EQ(sent_body(1), json({{"from", kMay1}, {"to", kMay1 + 180'000}})) << "the server's defaults are its own";

  r = cli_.run({"jobs", "backfill", "billing/nightly", "--from", "2026-05-01T00:00Z", "--to", "2026-05-01T00:03Z", "-o", "yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("id: 12\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(BackfillsCommandTest, WaitFollowsTheBackfillToItsEndAndExitsZeroWhenEveryRunSucceeded) {
  cli_.api.answer("POST api/v1/jobs/7/backfill", 201, backfill_json(12, "running", 1, runs_of(0, 1, 0, 0, 0)));
  cli_.api.answer("GET api/v1/backfills/12", 200, backfill_json(12, "running", 1, runs_of(0, 1, 0, 0, 0)));
  // A failed run whose retry then succeeded counts as succeeded.
  cli_.api.answer("GET api/v1/backfills/12", 200, backfill_json(12, "running", 2, runs_of(1, 0, 1, 1, 0)));
  cli_.api.answer("GET api/v1/backfills/12", 200, backfill_json(12, "done", 3, runs_of(0, 0, 3, 1, 0)));
  const CliResult r =
      cli_.run({"jobs", "backfill", "billing/nightly", "--from", "2026-05-01T00:00Z", "--to", "2026-05-01T00:03Z", "--wait"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "job billing/nightly (7): backfill 12 running, 3 instants from 2026-05-01T00:00:00+00:00 to "
            "2026-05-01T00:03:00+00:00\n"
            "backfill 12 running, 3 instants: 1 run written, 0 skipped; runs 0 pending, 1 running, 0 succeeded, 0 failed, "
            "0 cancelled\n"
            "backfill 12 running, 3 instants: 2 runs written, 0 skipped; runs 1 pending, 0 running, 1 succeeded, 1 failed, "
            "0 cancelled\n"
            "backfill 12 done, 3 instants: 3 runs written, 0 skipped; runs 0 pending, 0 running, 3 succeeded, 1 failed, "
            "0 cancelled\n");
  EXPECT_EQ(cli_.pauses, (std::vector<std::chrono::milliseconds>{1000ms, 1000ms, 1000ms})) << "once a second, no sleep";
}

TEST_F(BackfillsCommandTest, WaitExitsOneWhenARunFailedOrTheBackfillWasCancelled) {
  cli_.api.answer("POST api/v1/jobs/7/backfill", 201, backfill_json(12, "running", 0, runs_of(0, 0, 0, 0, 0)));
  cli_.api.answer("GET api/v1/backfills/12", 200, backfill_json(12, "done", 3, runs_of(0, 0, 2, 1, 0)));
  CliResult r = cli_.run({"jobs", "backfill", "7", "--from", "0", "--to", "1", "--wait", "-o", "json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(json::parse(r.out)["state"], "done") << "the backfill as it ended, alone on stdout";
  EXPECT_NE(r.err.find("backfill 12 done, 3 instants: 3 runs written"), std::string::npos) << "the progress on stderr: " << r.err;

  testing::CliHarness cancelled;
  cancelled.api.answer("POST api/v1/jobs/7/backfill", 201, backfill_json(13, "running", 0, runs_of(0, 0, 0, 0, 0)));
  cancelled.api.answer("GET api/v1/backfills/13", 200,
                       backfill_json(13, "cancelled", 1, runs_of(0, 0, 1, 0, 2), "cancelled by ops\nsecond line"));
  r = cancelled.run({"jobs", "backfill", "7", "--from", "0", "--to", "1", "--wait"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("backfill 13 cancelled (cancelled by ops second line), 3 instants: 1 run written"), std::string::npos) << r.out;
}

TEST_F(BackfillsCommandTest, WaitGivesUpAtItsTimeoutAndStopsAtCtrlC) {
  cli_.api.answer("POST api/v1/jobs/7/backfill", 201, backfill_json(12, "running", 0, runs_of(0, 0, 0, 0, 0)));
  cli_.api.answer("GET api/v1/backfills/12", 200, backfill_json(12, "running", 1, runs_of(0, 1, 0, 0, 0)));
  CliResult r = cli_.run({"jobs", "backfill", "7", "--from", "0", "--to", "1", "--wait", "--wait-timeout", "3"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: jobs backfill 7: backfill 12 is still running after 3 s; it goes on (cronwheel backfills cancel "
                   "12 ends it)\n");
  EXPECT_EQ(cli_.pauses.size(), 3u);

  testing::CliHarness interrupted;
  interrupted.pauses_before_interrupt = 2;
  interrupted.api.answer("POST api/v1/jobs/7/backfill", 201, backfill_json(12, "running", 0, runs_of(0, 0, 0, 0, 0)));
  interrupted.api.answer("GET api/v1/backfills/12", 200, backfill_json(12, "running", 1, runs_of(0, 1, 0, 0, 0)));
  r = interrupted.run({"jobs", "backfill", "7", "--from", "0", "--to", "1", "--wait"});
  EXPECT_EQ(r.status, 130);
}

TEST_F(BackfillsCommandTest, AStateTheApiDoesNotDefineIsAnUnexpectedAnswerNotAnEndlessWait) {
  cli_.api.answer("POST api/v1/jobs/7/backfill", 201, backfill_json(12, "paused", 0, runs_of(0, 0, 0, 0, 0)));
  const CliResult r = cli_.run({"jobs", "backfill", "7", "--from", "0", "--to", "1", "--wait"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("unexpected answer from the server: the backfill's state 'paused' is none the API defines"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(cli_.pauses.empty());
}

TEST_F(BackfillsCommandTest, TheServersRefusalIsSaidWithItsField) {
  cli_.api.answer("POST api/v1/jobs/7/backfill", 400,
                  {{"error", {{"code", "invalid"}, {"field", "to"}, {"message", "to: must be after from"}}}});
  const CliResult r = cli_.run({"jobs", "backfill", "billing/nightly", "--from", "2", "--to", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cronwheel: jobs backfill billing/nightly: to: must be after from"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(BackfillsCommandTest, ListShowsAPageFilteredByJobAndState) {
  json item = backfill_json(12, "done", 3, runs_of(0, 0, 3, 0, 0));
  item.erase("runs");
  cli_.api.answer("GET api/v1/backfills?jobId=7&state=done&limit=5", 200, page_of(json::array({item})));
  CliResult r = cli_.run({"backfills", "list", "--job", "billing/nightly", "--state", "done", "--limit", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  OF     STATE  FROM                       TO                         WRITTEN  SKIPPED  TOTAL  ON EXISTING  BY   REASON\n"
            "12  job 7  done   2026-05-01T00:00:00+00:00  2026-05-01T00:03:00+00:00  3        0        3      SKIP         ops\n");
  cli_.api.answer("GET api/v1/backfills?limit=20", 200, page_of(json::array()));
  r = cli_.run({"backfills", "list"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "No backfills.\n");
}

TEST_F(BackfillsCommandTest, GetShowsTheBackfillAndItsRunsAndCancelSaysWhatItDid) {
  cli_.api.answer("GET api/v1/backfills/12", 200, backfill_json(12, "running", 2, runs_of(1, 1, 0, 0, 0)));
  CliResult r = cli_.run({"backfills", "get", "12"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Of:              job 7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("State:           running\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Progress:        3 instants: 2 runs written, 0 skipped\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Last instant:    2026-05-01T00:01:00+00:00\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Runs:            1 pending, 1 running, 0 succeeded, 0 failed, 0 cancelled\n"), std::string::npos)
      << r.out;

  cli_.api.answer("POST api/v1/backfills/12/cancel", 200,
                  backfill_json(12, "cancelled", 2, runs_of(0, 1, 0, 0, 1), "cancelled by ops"));
  r = cli_.run({"backfills", "cancel", "12"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "backfill 12 cancelled, 3 instants: 2 runs written, 0 skipped; runs 0 pending, 1 running, 0 succeeded, "
                   "0 failed, 1 cancelled (runs already sent go on)\n");
  EXPECT_EQ(cli_.api.calls().back(), "POST api/v1/backfills/12/cancel");

  cli_.api.error("POST api/v1/backfills/14/cancel", 409, "conflict", "backfill 14 has ended already (done)");
  r = cli_.run({"backfills", "cancel", "14"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cronwheel: backfills cancel 14: backfill 14 has ended already (done)"), std::string::npos) << r.err;
}

TEST_F(BackfillsCommandTest, RunsListFiltersByBackfill) {
  cli_.api.answer("GET api/v1/logs?backfillId=12&status=failure&limit=20", 200, page_of(json::array()));
  const CliResult r = cli_.run({"runs", "list", "--backfill", "12", "--state", "failure"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "No runs.\n");
  expect_usage_error({"runs", "list", "--backfill", "x"},
                     "cronwheel: runs list: --backfill: 'x': an id is a positive whole number");
}

// ---- workflows backfill

// A backfill of workflow 12 (billing/etl) as the API answers it.
json workflow_backfill_json(std::int64_t id, const std::string& state, std::int64_t written, json runs) {
  json b = backfill_json(id, state, written, std::move(runs));
  b["kind"] = "workflow";
  b["jobId"] = nullptr;
  b["workflowId"] = 12;
  b["workflowName"] = "etl";
  b["inputs"] = {{"day", "monday"}, {"region", "eu"}};
  return b;
}

class WorkflowBackfillCommandTest : public BackfillsCommandTest {
 protected:
  void SetUp() override {
    BackfillsCommandTest::SetUp();
    // billing/etl is workflow 12.
    const json groups = page_of(json::array({{{"id", 3}, {"appName", "billing"}}}));
    cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200, groups);
    cli_.api.answer("GET api/v1/workflows?jobGroup=3&name=etl&limit=2", 200,
                    page_of(json::array({{{"id", 12}, {"jobGroup", 3}, {"name", "etl"}}})));
  }
};

TEST_F(WorkflowBackfillCommandTest, SendsTheRangeAndTheInputsToTheWorkflowAndFollowsItToItsEnd) {
  cli_.api.answer("POST api/v1/workflows/12/backfill", 201, workflow_backfill_json(21, "running", 0, runs_of(0, 0, 0, 0, 0)));
  cli_.api.answer("GET api/v1/backfills/21", 200, workflow_backfill_json(21, "running", 2, runs_of(0, 2, 0, 0, 0)));
  cli_.api.answer("GET api/v1/backfills/21", 200, workflow_backfill_json(21, "done", 3, runs_of(0, 0, 3, 0, 0)));
  const CliResult r = cli_.run({"workflows", "backfill", "billing/etl", "--from", "2026-05-01T00:00Z", "--to",
                                "2026-05-01T00:03Z", "-p", "region=eu", "--max-concurrent", "2", "--wait"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "workflow billing/etl (12): backfill 21 running, 3 instants from 2026-05-01T00:00:00+00:00 to "
            "2026-05-01T00:03:00+00:00\n"
            "backfill 21 running, 3 instants: 0 runs written, 0 skipped; runs 0 pending, 0 running, 0 succeeded, 0 failed, "
            "0 cancelled\n"
            "backfill 21 running, 3 instants: 2 runs written, 0 skipped; runs 0 pending, 2 running, 0 succeeded, 0 failed, "
            "0 cancelled\n"
            "backfill 21 done, 3 instants: 3 runs written, 0 skipped; runs 0 pending, 0 running, 3 succeeded, 0 failed, "
            "0 cancelled\n");
  const auto calls = cli_.api.calls();
  const auto post = std::find(calls.begin(), calls.end(), "POST api/v1/workflows/12/backfill");
  ASSERT_NE(post, calls.end()) << "the workflow's backfill, not a job's";
  EXPECT_EQ(sent_body(static_cast<std::size_t>(post - calls.begin())),
            json({{"from", kMay1}, {"to", kMay1 + 180'000}, {"maxConcurrent", 2}, {"inputs", {{"region", "eu"}}}}));
}

TEST_F(WorkflowBackfillCommandTest, ADryRunPrintsTheInstantsAndWithoutInputsNoneAreSent) {
  cli_.api.answer("POST api/v1/workflows/12/backfill", 200,
                  {{"kind", "workflow"},
                   {"workflowId", 12},
                   {"from", kMay1},
                   {"to", kMay1 + 120'000},
                   {"onExisting", "SKIP"},
                   {"total", 2},
                   {"toRun", 1},
                   {"instants", {kMay1, kMay1 + 60'000}},
                   {"existing", {kMay1}}});
  const CliResult r = cli_.run({"workflows", "backfill", "12", "--from", "1777593600000", "--to", "1777593720000", "--dry-run"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "INSTANT                    RAN BEFORE  BACKFILL\n"
            "2026-05-01T00:00:00+00:00  yes         skips\n"
            "2026-05-01T00:01:00+00:00  no          runs\n"
            "workflow 12: 2 instants from 2026-05-01T00:00:00+00:00 to 2026-05-01T00:02:00+00:00, 1 to run, 1 of them "
            "ran already (skipped) (dry run: nothing written)\n");
  EXPECT_EQ(sent_body(0), json({{"from", kMay1}, {"to", kMay1 + 120'000}, {"dryRun", true}})) << "the defaults are the server's";
}

TEST_F(WorkflowBackfillCommandTest, BadArgumentsAreBadUsageBeforeAnythingIsSent) {
  expect_usage_error({"workflows", "backfill", "billing/etl", "--from", "0", "--to", "1", "-p", "region"},
                     "cronwheel: workflows backfill: --param: 'region': an input is NAME=VALUE");
  expect_usage_error({"workflows", "backfill", "billing/etl", "--from", "0", "--to", "1", "-p", "day=a", "-p", "day=b"},
                     "cronwheel: workflows backfill: --param: day is given twice");
  expect_usage_error({"workflows", "backfill", "billing/etl", "--from", "0"}, "cronwheel: workflows backfill: --to is required");
  expect_usage_error({"workflows", "backfill", "billing/etl", "--from", "0", "--to", "1", "--dry-run", "--wait"},
                     "cronwheel: workflows backfill: --dry-run excludes --wait");
  expect_usage_error({"backfills", "list", "--job", "7", "--workflow", "12"},
                     "cronwheel: backfills list: --job excludes --workflow");
  EXPECT_TRUE(cli_.api.calls().empty());
}

TEST_F(WorkflowBackfillCommandTest, ListGetAndCancelNameTheWorkflow) {
  json item = workflow_backfill_json(21, "running", 1, runs_of(0, 1, 0, 0, 0));
  item.erase("runs");
  cli_.api.answer("GET api/v1/backfills?workflowId=12&limit=20", 200, page_of(json::array({item})));
  CliResult r = cli_.run({"backfills", "list", "--workflow", "billing/etl"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("21  workflow etl (12)  running"), std::string::npos) << r.out;

  cli_.api.answer("GET api/v1/backfills/21", 200, workflow_backfill_json(21, "running", 1, runs_of(0, 1, 0, 0, 0)));
  r = cli_.run({"backfills", "get", "21"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Of:              workflow etl (12)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Inputs:          {\"day\":\"monday\",\"region\":\"eu\"}\n"), std::string::npos) << r.out;

  cli_.api.answer("POST api/v1/backfills/21/cancel", 200, workflow_backfill_json(21, "cancelled", 1, runs_of(0, 1, 0, 0, 0)));
  r = cli_.run({"backfills", "cancel", "21"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "backfill 21 cancelled, 3 instants: 1 run written, 0 skipped; runs 0 pending, 1 running, 0 succeeded, "
                   "0 failed, 0 cancelled (its workflow runs go on)\n");

  cli_.api.answer("GET api/v1/workflow-runs?backfillId=21&limit=20", 200, page_of(json::array()));
  r = cli_.run({"workflow-runs", "list", "--backfill", "21"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "No workflow runs.\n");
}

}  // namespace
}  // namespace cronwheel::cli
