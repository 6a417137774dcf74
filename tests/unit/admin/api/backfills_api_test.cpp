// The backfills API (admin/api/backfills_api.h) on a real HttpServer over FakeBackfillStore: a
// dry run's instants, a backfill made and cancelled (audited), each refusal naming its field,
// permissions as for triggering the job, the run list filtered by backfill; the same for a
// workflow's backfill (its inputs, its workflow runs listed by backfill).

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "admin/api/backfills_api.h"
#include "admin/api/workflows_api.h"
#include "admin/model/backfill.h"
#include "tests/support/fake_backfill_store.h"
#include "tests/support/fake_calendar_store.h"
#include "tests/support/fake_workflow_store.h"
#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kBackfillHour = 3'600'000;

class BackfillsApiTest : public ResourceApiTest {
 protected:
  void add_more_routes(ApiRouter& router) override {
    BackfillRoutes routes;
    routes.store = &backfills_;
    routes.calendars = &calendars_;
    routes.node_id = "node-under-test";
    routes.finished_runs = &finished_runs_;
    routes.created = [this] { ++pump_woken_; };
    routes.workflows = &workflows_;
    add_backfill_routes(router, stores_, routes, clock_);
    WorkflowRoutes workflow_routes;
    workflow_routes.store = &workflows_;
    add_workflow_routes(router, stores_, workflow_routes, clock_);
  }

  void SetUp() override {
    ResourceApiTest::SetUp();
    group_ = add_group("backfilled");
    other_group_ = add_group("elsewhere");
    add_user("alice", "normal", {group_.id});
    add_user("bob", "normal", {other_group_.id});
    hourly_ = add_job(group_.id, "hourly report", ScheduleType::kCron, "0 0 * * * ?").id;
  }

  std::string backfill_path(std::int64_t job) { return "jobs/" + std::to_string(job) + "/backfill"; }

  // The day before the fixture's now, to the hour.
  std::int64_t day_start() const { return (kStartMs / kBackfillHour) * kBackfillHour - 24 * kBackfillHour; }

  nlohmann::json body(std::int64_t from, std::int64_t to, nlohmann::json more = nlohmann::json::object()) {
    more["from"] = from;
    more["to"] = to;
    return more;
  }

  // Writes the next runs of backfill `id` as the pump would (no schedule needed: `instants`).
  std::vector<JobLog> write(std::int64_t id, std::vector<std::int64_t> instants) {
    return backfills_
        .step(id, "node-under-test", clock_.now_ms(),
              [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
                BackfillStep step;
                step.write = instants;
                step.cursor = instants.back();
                return step;
              })
        .fires;
  }

  // An hourly workflow of the fixture's group (or `cron`; "" for NONE) with a parameter `day`
  // defaulting to "today" and one `region` without a default (a CRON workflow's would need one:
  // written to the store directly, as a row written around the API).
  Workflow workflow(const std::string& name, const std::string& cron = "0 0 * * * ?", std::int64_t group = 0) {
    Workflow w;
    w.job_group = group != 0 ? group : group_.id;
    w.name = name;
    w.schedule_type = cron.empty() ? ScheduleType::kNone : ScheduleType::kCron;
    w.schedule_conf = cron;
    w.params = {{"day", "today", true, ""}, {"region", "", false, ""}};
    w.graph.nodes = {{"only", hourly_, "${params.day}", true, NodeFailurePolicy::kFail}};
    return workflows_.create(w, system_);
  }

  std::string workflow_path(std::int64_t id) { return "workflows/" + std::to_string(id) + "/backfill"; }

  testing::FakeWorkflowStore workflows_{stores_.jobs, clock_};
  testing::FakeBackfillStore backfills_{fake_, &workflows_};
  testing::FakeCalendarStore calendars_{fake_};
  std::atomic<int> pump_woken_{0};
  Group group_, other_group_;
  std::int64_t hourly_ = 0;
};

TEST_F(BackfillsApiTest, ADryRunAnswersTheInstantsThoseThatRanAndHowManyWouldRunWritingNothing) {
  const auto from = day_start();
  JobLog ran;
  ran.job_id = hourly_;
  ran.job_group = group_.id;
  ran.trigger_type = TriggerType::kSchedule;
  ran.scheduled_time = from + 2 * kBackfillHour;
  ran.state = FireState::kSucceeded;
  ran.admin_node = "node-under-test";
  fake_.put_log(ran);
  auto dry = post(backfill_path(hourly_), body(from, from + 5 * kBackfillHour, {{"dryRun", true}}));
  ASSERT_EQ(dry.status, 200) << dry.text;
  EXPECT_EQ(dry.body["total"], 5);
  EXPECT_EQ(dry.body["toRun"], 4);
  EXPECT_EQ(dry.body["onExisting"], "SKIP");
  EXPECT_EQ(dry.body["instants"],
            (std::vector<std::int64_t>{from, from + kBackfillHour, from + 2 * kBackfillHour, from + 3 * kBackfillHour,
                                       from + 4 * kBackfillHour}));
  EXPECT_EQ(dry.body["existing"], (std::vector<std::int64_t>{from + 2 * kBackfillHour}));
  auto rerun = post(backfill_path(hourly_), body(from, from + 5 * kBackfillHour, {{"dryRun", true}, {"onExisting", "RERUN"}}));
  EXPECT_EQ(rerun.body["toRun"], 5);
  EXPECT_EQ(get("backfills").body["total"], 0) << "a dry run makes no backfill";
  EXPECT_EQ(pump_woken_, 0);
}

TEST_F(BackfillsApiTest, ABackfillIsMadeRunningAuditedAndWakesThePump) {
  const auto from = day_start();
  auto made = post(backfill_path(hourly_), body(from, from + 24 * kBackfillHour, {{"maxConcurrent", 10}, {"onExisting", "RERUN"}}),
                   "alice");
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(made.body["jobId"], hourly_);
  EXPECT_EQ(made.body["jobGroup"], group_.id);
  EXPECT_EQ(made.body["state"], "running");
  EXPECT_EQ(made.body["total"], 24);
  EXPECT_EQ(made.body["maxConcurrent"], 10);
  EXPECT_EQ(made.body["onExisting"], "RERUN");
  EXPECT_EQ(made.body["createdBy"], "alice");
  EXPECT_EQ(made.body["runs"]["pending"], 0);
  EXPECT_EQ(pump_woken_, 1);
  const auto audit = last_audit();
  EXPECT_EQ(audit.action, "backfill.create");
  EXPECT_EQ(audit.username, "alice");
  EXPECT_EQ(audit.entity_id, made.body["id"].get<std::int64_t>());
  // Defaults: SKIP, one at a time.
  auto defaults = post(backfill_path(hourly_), body(from, from + kBackfillHour));
  ASSERT_EQ(defaults.status, 201) << defaults.text;
  EXPECT_EQ(defaults.body["onExisting"], "SKIP");
  EXPECT_EQ(defaults.body["maxConcurrent"], 1);
}

TEST_F(BackfillsApiTest, EachRefusalNamesItsField) {
  const auto from = day_start();
  Job none = add_job(group_.id, "by hand", ScheduleType::kNone, "");
  Job delay = add_job(group_.id, "after each run", ScheduleType::kFixDelay, "60");
  Job every_second = add_job(group_.id, "every second", ScheduleType::kCron, "* * * * * ?");
  struct Case {
    std::int64_t job;
    nlohmann::json body;
    std::string field;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {hourly_, {{"to", from + kBackfillHour}}, "from", "from: is required"},
      {hourly_, {{"from", from}}, "to", "to: is required"},
      {hourly_, body(946'684'799'999, from), "from", "is before 946684800000 (2000-01-01T00:00:00+00:00)"},
      {hourly_, body(from, from), "to", "to: must be after from"},
      {hourly_, body(from, kStartMs + 1), "to", "is in the future (now is 1700000000000"},
      {hourly_, body(INT64_MAX, 0), "to", "to: must be after from (9223372036854775807), got 0"},
      {hourly_, body(from, INT64_MAX), "to", "to: 9223372036854775807 is in the future"},
      {hourly_, body(INT64_MIN, from), "from", "from: -9223372036854775808 is before"},
      {hourly_, body(from, from + kBackfillHour, {{"onExisting", "skip"}}), "onExisting", "must be SKIP"},
      {hourly_, body(from, from + kBackfillHour, {{"maxConcurrent", 0}}), "maxConcurrent", "maxConcurrent"},
      {hourly_, body(from, from + kBackfillHour, {{"maxConcurrent", 101}}), "maxConcurrent", "maxConcurrent"},
      {hourly_, body(from, from + kBackfillHour, {{"dryRun", "yes"}}), "dryRun", "dryRun"},
      {hourly_, body(from, from + kBackfillHour, {{"count", 3}}), "count", "count: unknown field"},
      {hourly_, {{"from", "yesterday"}, {"to", from}}, "from", "from: expected an integer"},
      {none.id, body(from, from + kBackfillHour), "scheduleType", "has schedule NONE"},
      {delay.id, body(from, from + kBackfillHour), "scheduleType", "has schedule FIX_DELAY"},
      {every_second.id, body(from, from + 3 * kBackfillHour), "to",
       "to: the range holds more than 10000 instants of the job's schedule; backfill it in parts (the first 10000 end "
       "at "},
      {hourly_, body(from + 1, from + kBackfillHour), "to", "to: the job's schedule has no instant from"},
  };
  for (const auto& c : cases) {
    auto answer = post(backfill_path(c.job), c.body);
    EXPECT_EQ(answer.status, 400) << c.body.dump() << " " << answer.text;
    if (answer.status != 400) continue;
    EXPECT_EQ(answer.field(), c.field) << c.body.dump() << " " << answer.text;
    EXPECT_NE(answer.message().find(c.message_part), std::string::npos) << c.body.dump() << " " << answer.message();
  }
  EXPECT_EQ(get("backfills").body["total"], 0);
  auto bad_filter = get("backfills?state=paused");
  EXPECT_EQ(bad_filter.status, 400);
  EXPECT_EQ(bad_filter.field(), "state");
  EXPECT_EQ(get("backfills?jobid=1").status, 400) << "a misspelt filter";
}

TEST_F(BackfillsApiTest, TheJobsCalendarAppliesToItsInstants) {
  Calendar holidays;
  holidays.name = "holidays";
  CalendarDate day;
  day.day = {2023, 11, 12, "A holiday"};
  holidays.dates = {day};
  const auto calendar = calendars_.create(holidays, system_);
  auto job = post("jobs", {{"jobGroup", group_.id},
                           {"jobDesc", "noon"},
                           {"scheduleType", "CRON"},
                           {"scheduleConf", "0 0 12 * * ?"},
                           {"executorHandler", "h"},
                           {"calendarId", calendar.id}});
  ASSERT_EQ(job.status, 201) << job.text;
  const std::int64_t nov11 = 1'699'660'800'000;  // 2023-11-11T00:00:00Z
  auto dry = post(backfill_path(job.body["id"].get<std::int64_t>()), body(nov11, nov11 + 3 * 24 * kBackfillHour, {{"dryRun", true}}));
  ASSERT_EQ(dry.status, 200) << dry.text;
  EXPECT_EQ(dry.body["instants"],
            (std::vector<std::int64_t>{nov11 + 12 * kBackfillHour, nov11 + (48 + 12) * kBackfillHour}))
      << "the 12th is a holiday";
}

TEST_F(BackfillsApiTest, PermissionsAreThoseOfTriggeringTheJob) {
  const auto from = day_start();
  EXPECT_EQ(post(backfill_path(hourly_), body(from, from + kBackfillHour), "bob").status, 404);
  auto made = post(backfill_path(hourly_), body(from, from + kBackfillHour), "alice");
  ASSERT_EQ(made.status, 201) << made.text;
  const std::string path = "backfills/" + std::to_string(made.body["id"].get<std::int64_t>());
  EXPECT_EQ(get(path, "alice").status, 200);
  EXPECT_EQ(get(path, "bob").status, 404);
  EXPECT_EQ(post(path + "/cancel", nlohmann::json::object(), "bob").status, 404);
  EXPECT_EQ(get("backfills", "bob").body["total"], 0);
  EXPECT_EQ(get("backfills", "alice").body["total"], 1);
  EXPECT_EQ(get("backfills/999", "admin").status, 404);
}

TEST_F(BackfillsApiTest, ListsNewestFirstByJobAndStateInOffsetPages) {
  const auto from = day_start();
  Job other = add_job(group_.id, "other", ScheduleType::kCron, "0 30 * * * ?");
  std::vector<std::int64_t> ids;
  for (auto job : {hourly_, other.id, hourly_}) {
    auto made = post(backfill_path(job), body(from, from + 2 * kBackfillHour));
    ASSERT_EQ(made.status, 201) << made.text;
    ids.push_back(made.body["id"].get<std::int64_t>());
  }
  auto all = get("backfills");
  ASSERT_EQ(all.status, 200) << all.text;
  EXPECT_EQ(all.body["total"], 3);
  EXPECT_EQ(all.body["items"][0]["id"], ids[2]);
  auto of_job = get("backfills?jobId=" + std::to_string(hourly_));
  EXPECT_EQ(of_job.body["total"], 2);
  auto page = get("backfills?offset=1&limit=1");
  ASSERT_EQ(page.body["items"].size(), 1u);
  EXPECT_EQ(page.body["items"][0]["id"], ids[1]);
  ASSERT_EQ(post("backfills/" + std::to_string(ids[0]) + "/cancel").status, 200);
  auto cancelled = get("backfills?state=cancelled");
  ASSERT_EQ(cancelled.body["total"], 1);
  EXPECT_EQ(cancelled.body["items"][0]["id"], ids[0]);
  EXPECT_EQ(get("backfills?state=running").body["total"], 2);
}

TEST_F(BackfillsApiTest, CancelEndsItWithItsPendingRunsOnceAndIsAudited) {
  const auto from = day_start();
  auto made = post(backfill_path(hourly_), body(from, from + 6 * kBackfillHour, {{"maxConcurrent", 3}}), "alice");
  ASSERT_EQ(made.status, 201) << made.text;
  const auto id = made.body["id"].get<std::int64_t>();
  const auto runs = write(id, {from, from + kBackfillHour, from + 2 * kBackfillHour});
  ASSERT_EQ(runs.size(), 3u);
  fake_.with_state([&](testing::fake_stores_detail::State& s) {
    s.logs.at(runs[0].id).state = FireState::kTriggered;
    s.logs.at(runs[0].id).trigger_time = s.now();
  });
  auto detail = get("backfills/" + std::to_string(id), "alice");
  ASSERT_EQ(detail.status, 200) << detail.text;
  EXPECT_EQ(detail.body["written"], 3);
  EXPECT_EQ(detail.body["runs"], (nlohmann::json{{"pending", 2}, {"running", 1}, {"succeeded", 0}, {"failed", 0}, {"cancelled", 0}}));
  auto cancelled = post("backfills/" + std::to_string(id) + "/cancel", nlohmann::json::object(), "alice");
  ASSERT_EQ(cancelled.status, 200) << cancelled.text;
  EXPECT_EQ(cancelled.body["state"], "cancelled");
  EXPECT_EQ(cancelled.body["reason"], "cancelled by alice");
  EXPECT_EQ(cancelled.body["runs"]["cancelled"], 2);
  EXPECT_EQ(cancelled.body["runs"]["running"], 1) << "a run already sent goes on";
  EXPECT_EQ(last_audit().action, "backfill.cancel");
  auto again = post("backfills/" + std::to_string(id) + "/cancel", nlohmann::json::object(), "alice");
  EXPECT_EQ(again.status, 409);
  EXPECT_NE(again.message().find("has ended already (cancelled)"), std::string::npos) << again.message();
  EXPECT_EQ(post("backfills/" + std::to_string(id) + "/cancel", {{"now", true}}).status, 400) << "a body with fields";
}

TEST_F(BackfillsApiTest, TheRunListShowsABackfillsRunsByItsId) {
  const auto from = day_start();
  auto made = post(backfill_path(hourly_), body(from, from + 6 * kBackfillHour, {{"maxConcurrent", 3}}));
  ASSERT_EQ(made.status, 201) << made.text;
  const auto id = made.body["id"].get<std::int64_t>();
  write(id, {from, from + kBackfillHour});
  JobLog manual;
  manual.job_id = hourly_;
  manual.job_group = group_.id;
  manual.trigger_type = TriggerType::kManual;
  manual.scheduled_time = kStartMs;
  manual.admin_node = "node-under-test";
  fake_.put_log(manual);
  auto listed = get("logs?backfillId=" + std::to_string(id));
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.body["items"].size(), 2u);
  for (const auto& run : listed.body["items"]) {
    EXPECT_EQ(run["triggerType"], "BACKFILL");
    EXPECT_EQ(run["backfillId"], id);
  }
  EXPECT_EQ(listed.body["items"][0]["scheduledTime"], from + kBackfillHour) << "newest first";
  EXPECT_EQ(get("logs?jobId=" + std::to_string(hourly_)).body["items"].size(), 3u);
  EXPECT_EQ(get("logs?backfillId=x").field(), "backfillId");
}

TEST_F(BackfillsApiTest, AWorkflowsDryRunAnswersItsScheduleInstantsAndAMadeBackfillNamesItsWorkflow) {
  const auto from = day_start();
  const auto w = workflow("nightly-etl");
  auto dry = post(workflow_path(w.id), body(from, from + 3 * kBackfillHour, {{"dryRun", true}, {"inputs", {{"region", "eu"}}}}));
  ASSERT_EQ(dry.status, 200) << dry.text;
  EXPECT_EQ(dry.body["kind"], "workflow");
  EXPECT_EQ(dry.body["workflowId"], w.id);
  EXPECT_FALSE(dry.body.contains("jobId"));
  EXPECT_EQ(dry.body["total"], 3);
  EXPECT_EQ(dry.body["toRun"], 3);
  EXPECT_EQ(dry.body["instants"], (std::vector<std::int64_t>{from, from + kBackfillHour, from + 2 * kBackfillHour}));
  EXPECT_EQ(get("backfills").body["total"], 0) << "a dry run makes no backfill";

  auto made = post(workflow_path(w.id), body(from, from + 3 * kBackfillHour, {{"maxConcurrent", 2}, {"inputs", {{"region", "eu"}}}}),
                   "alice");
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(made.body["kind"], "workflow");
  EXPECT_EQ(made.body["workflowId"], w.id);
  EXPECT_EQ(made.body["workflowName"], "nightly-etl");
  EXPECT_TRUE(made.body["jobId"].is_null());
  EXPECT_EQ(made.body["jobGroup"], group_.id);
  EXPECT_EQ(made.body["inputs"], (nlohmann::json{{"day", "today"}, {"region", "eu"}})) << "every parameter, defaults filled in";
  EXPECT_EQ(made.body["total"], 3);
  EXPECT_EQ(made.body["runs"], (nlohmann::json{{"pending", 0}, {"running", 0}, {"succeeded", 0}, {"failed", 0}, {"cancelled", 0}}));
  EXPECT_EQ(pump_woken_, 1);
  EXPECT_EQ(last_audit().action, "backfill.create");
  const auto id = made.body["id"].get<std::int64_t>();
  auto of_workflow = get("backfills?workflowId=" + std::to_string(w.id));
  ASSERT_EQ(of_workflow.body["total"], 1);
  EXPECT_EQ(of_workflow.body["items"][0]["workflowName"], "nightly-etl");
  EXPECT_EQ(get("backfills?jobId=" + std::to_string(hourly_)).body["total"], 0) << "a workflow's is not its jobs'";

  // Its runs, as the pump writes them: listed by backfill, trigger BACKFILL, its inputs.
  backfills_.step(id, "node-under-test", clock_.now_ms(), [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
    BackfillStep step;
    step.write = {from, from + kBackfillHour};
    step.cursor = from + kBackfillHour;
    return step;
  });
  auto runs = get("workflow-runs?backfillId=" + std::to_string(id), "alice");
  ASSERT_EQ(runs.status, 200) << runs.text;
  ASSERT_EQ(runs.body["items"].size(), 2u);
  for (const auto& run : runs.body["items"]) {
    EXPECT_EQ(run["triggerType"], "BACKFILL");
    EXPECT_EQ(run["backfillId"], id);
    EXPECT_EQ(run["params"]["region"], "eu");
  }
  EXPECT_EQ(runs.body["items"][0]["scheduledTime"], from + kBackfillHour) << "newest first";
  EXPECT_EQ(get("workflow-runs?backfillId=" + std::to_string(id + 1)).body["items"].size(), 0u);
  EXPECT_EQ(get("workflow-runs?backfillId=x").field(), "backfillId");
  auto detail = get("backfills/" + std::to_string(id));
  EXPECT_EQ(detail.body["runs"]["running"], 2);
  // Cancelled: no more runs, the ones running go on.
  auto cancelled = post("backfills/" + std::to_string(id) + "/cancel", nlohmann::json::object(), "alice");
  ASSERT_EQ(cancelled.status, 200) << cancelled.text;
  EXPECT_EQ(cancelled.body["state"], "cancelled");
  EXPECT_EQ(cancelled.body["runs"]["running"], 2);
}

TEST_F(BackfillsApiTest, AWorkflowsRefusalsNameTheirFieldAndPermissionsAreThoseOfTriggeringIt) {
  const auto from = day_start();
  const auto w = workflow("refusing");
  const auto by_hand = workflow("by-hand", "");
  const auto foreign = workflow("foreign", "0 0 * * * ?", other_group_.id);
  struct Case {
    std::int64_t workflow;
    nlohmann::json body;
    std::string field;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {by_hand.id, body(from, from + kBackfillHour, {{"inputs", {{"region", "eu"}}}}), "scheduleType",
       "scheduleType: workflow " + std::to_string(by_hand.id) + " has schedule NONE: it never fires by itself"},
      {w.id, body(from, from + kBackfillHour), "inputs", "inputs.region: is required (it has no default)"},
      {w.id, body(from, from + kBackfillHour, {{"inputs", {{"region", "eu"}, {"nope", 1}}}}), "inputs",
       "inputs.nope: the workflow has no such parameter"},
      {w.id, body(from, from + kBackfillHour, {{"inputs", "eu"}}), "inputs", "inputs: expected an object"},
      {w.id, body(from, kStartMs + 1, {{"inputs", {{"region", "eu"}}}}), "to", "is in the future"},
      {w.id, body(from, from + kBackfillHour, {{"inputs", {{"region", "eu"}}}, {"maxConcurrent", 101}}), "maxConcurrent", ""},
      {w.id, body(from, from + kBackfillHour, {{"inputs", {{"region", "eu"}}}, {"onExisting", "ALWAYS"}}), "onExisting", ""},
      {w.id, body(from, from + kBackfillHour, {{"inputs", {{"region", "eu"}}}, {"params", {}}}), "params", ""},
  };
  for (const auto& c : cases) {
    auto refused = post(workflow_path(c.workflow), c.body);
    EXPECT_EQ(refused.status, 400) << c.body.dump() << ": " << refused.text;
    EXPECT_EQ(refused.field(), c.field) << c.body.dump();
    EXPECT_NE(refused.message().find(c.message_part), std::string::npos) << refused.message();
  }
  EXPECT_EQ(post(backfill_path(hourly_), body(from, from + kBackfillHour, {{"inputs", {}}})).field(), "inputs")
      << "a job's backfill has no inputs";
  EXPECT_EQ(post(workflow_path(foreign.id), body(from, from + kBackfillHour, {{"inputs", {{"region", "eu"}}}}), "alice").status,
            404);
  EXPECT_EQ(post(workflow_path(w.id + 1000), body(from, from + kBackfillHour)).status, 404);
  auto made = post(workflow_path(foreign.id), body(from, from + kBackfillHour, {{"inputs", {{"region", "eu"}}}}), "bob");
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(get("backfills/" + made.body["id"].dump(), "alice").status, 404);
  EXPECT_EQ(get("backfills", "alice").body["total"], 0);
  EXPECT_EQ(get("backfills", "bob").body["total"], 1);
  EXPECT_EQ(get("backfills").body["total"], 0 + 1) << "nothing else was made";
}

TEST_F(BackfillsApiTest, NoMoreThanTheBoundOfBackfillsRunAtOnce) {
  const auto from = day_start();
  for (std::int64_t i = 0; i < kMaxRunningBackfills; ++i) {
    Backfill b;
    b.job_id = hourly_;
    b.from = from;
    b.to = from + kBackfillHour;
    b.total = 1;
    backfills_.create(b, system_);
  }
  auto refused = post(backfill_path(hourly_), body(from, from + kBackfillHour));
  EXPECT_EQ(refused.status, 409) << refused.text;
  EXPECT_NE(refused.message().find("100 backfills are running"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace cronwheel::admin
