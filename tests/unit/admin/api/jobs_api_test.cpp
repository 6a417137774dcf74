#include <nlohmann/json.hpp>

#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class JobsApi : public ResourceApiTest {
 protected:
  void SetUp() override {
    ResourceApiTest::SetUp();
    group_ = add_group("reports");
  }

  json cron_job_body() const {
    return {{"jobGroup", group_.id},
            {"jobDesc", "morning report"},
            {"author", "ops"},
            {"scheduleType", "CRON"},
            {"scheduleConf", "0 0 9 * * ?"},
            {"timezone", "America/New_York"},
            {"executorHandler", "reportHandler"}};
  }

  std::string path(const Job& job, const std::string& rest = "") const {
    return "jobs/" + std::to_string(job.id) + rest;
  }

  Group group_;
};

// 09:00 New York on 2023-11-15..19 (EST); the clock starts at 2023-11-14 17:13:20 EST.
const std::vector<std::int64_t> kNineAmNewYork{1'700'056'800'000, 1'700'143'200'000, 1'700'229'600'000,
                                               1'700'316'000'000, 1'700'402'400'000};

TEST_F(JobsApi, CreatesACronJobInAZoneAndPreviewsItsFireTimes) {
  auto r = post("jobs", cron_job_body());
  ASSERT_EQ(r.status, 201) << r.text;
  const auto id = r.body["id"].get<std::int64_t>();
  EXPECT_GT(id, 0);
  EXPECT_EQ(r.body["jobDesc"], "morning report");
  EXPECT_EQ(r.body["timezone"], "America/New_York");
  EXPECT_EQ(r.body["triggerStatus"], 0);
  EXPECT_EQ(r.body["triggerNextTime"], 0);
  EXPECT_EQ(last_audit().action, "job.create");

  auto fires = get("jobs/" + std::to_string(id) + "/next-fires?count=5");
  ASSERT_EQ(fires.status, 200) << fires.text;
  EXPECT_EQ(fires.body,
            json({{"times", kNineAmNewYork}, {"skipped", json::array()}, {"dst", json::array()}, {"end", nullptr}}));
  EXPECT_EQ(get("jobs/" + std::to_string(id) + "/next-fires").body["times"].size(), 5u);  // default count
}

// 2024-03-10 in New York: 02:00 EST is followed by 03:00 EDT (07:00Z).
TEST_F(JobsApi, ADstPolicyIsStoredAndItsPreviewFiresAfterTheGapAndSaysWhy) {
  auto body = cron_job_body();
  body["scheduleConf"] = "0 30 2 10 3 ?";  // March 10th, 02:30
  auto r = post("jobs", body);
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["dstGap"], "SKIP");
  EXPECT_EQ(r.body["dstRepeat"], "ONCE");
  const auto quartz = r.body["id"].get<std::int64_t>();
  auto fires = get("jobs/" + std::to_string(quartz) + "/next-fires?count=2");
  ASSERT_EQ(fires.status, 200) << fires.text;
  EXPECT_EQ(fires.body["times"], json({1'741'588'200'000, 1'773'124'200'000}));  // 2025 and 2026, 02:30 EDT
  ASSERT_EQ(fires.body["dst"].size(), 1u) << fires.text;
  EXPECT_EQ(fires.body["dst"][0]["time"], 1'710'054'000'000);
  EXPECT_EQ(fires.body["dst"][0]["note"],
            "2024-03-10: the clocks in America/New_York go forward from 02:00 to 03:00, so 02:30 does not happen: no "
            "fire for it that day");

  body["name"] = "after-the-gap";
  body["dstGap"] = "FIRE_AFTER";
  body["dstRepeat"] = "BOTH";
  r = post("jobs", body);
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["dstGap"], "FIRE_AFTER");
  EXPECT_EQ(r.body["dstRepeat"], "BOTH");
  const auto id = r.body["id"].get<std::int64_t>();
  EXPECT_EQ(stores_.jobs.get(id)->dst, (common::DstPolicy{common::DstGap::kFireAfter, common::DstRepeat::kBoth}));
  fires = get("jobs/" + std::to_string(id) + "/next-fires?count=2");
  EXPECT_EQ(fires.body["times"], json({1'710'054'000'000, 1'741'588'200'000}));  // 03:00 EDT that night
  EXPECT_EQ(fires.body["dst"][0]["note"],
            "2024-03-10: the clocks in America/New_York go forward from 02:00 to 03:00, so 02:30 does not happen: it "
            "fires at 03:00, the first instant after the gap");

  // Started, the job's first fire is the one the policy adds.
  ASSERT_EQ(post("jobs/" + std::to_string(id) + "/start").status, 200);
  EXPECT_EQ(stores_.jobs.get(id)->trigger_next_time, 1'710'054'000'000);
  // Changing only the policy of a running job is a schedule change: its next time follows.
  r = put("jobs/" + std::to_string(id), {{"dstGap", "SKIP"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(stores_.jobs.get(id)->trigger_next_time, 1'741'588'200'000);
}

TEST_F(JobsApi, BothFiresARepeatedTimeTwiceInThePreview) {
  auto body = cron_job_body();
  body["scheduleConf"] = "0 30 1 3 11 ?";  // November 3rd, 01:30: twice in 2024
  body["dstRepeat"] = "BOTH";
  auto r = post("jobs", body);
  ASSERT_EQ(r.status, 201) << r.text;
  auto fires = get("jobs/" + r.body["id"].dump() + "/next-fires?count=3");
  EXPECT_EQ(fires.body["times"], json({1'730'611'800'000, 1'730'615'400'000, 1'762'151'400'000}));
  EXPECT_EQ(fires.body["dst"][0]["note"],
            "2024-11-03: the clocks in America/New_York go back from 02:00 to 01:00, so 01:30 happens twice: it fires "
            "at both (-04:00 and -05:00)");
}

TEST_F(JobsApi, ADstPolicyIsRefusedOutsideItsValuesAndOnSchedulesWithoutWallTimes) {
  auto body = cron_job_body();
  body["dstGap"] = "skip";
  auto r = post("jobs", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "dstGap");
  EXPECT_EQ(r.message(), "dstGap: unknown value 'skip', expected SKIP (a time the clocks jump over does not fire that "
                         "day) or FIRE_AFTER (it fires at the first instant after the gap)");
  body = cron_job_body();
  body["dstRepeat"] = 2;
  EXPECT_EQ(post("jobs", body).field(), "dstRepeat");

  body = cron_job_body();
  body["scheduleType"] = "FIX_RATE";
  body["scheduleConf"] = "60";
  body["dstRepeat"] = "BOTH";
  r = post("jobs", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "dstRepeat");
  EXPECT_EQ(r.message(), "dstRepeat: applies to CRON schedules only; give ONCE for scheduleType FIX_RATE");
  body["dstRepeat"] = "ONCE";
  EXPECT_EQ(post("jobs", body).status, 201);
  EXPECT_EQ(stores_.jobs.list({}).total, 1);
}

TEST_F(JobsApi, ARetryBackOffIsStoredAndBoundedFieldByField) {
  auto body = cron_job_body();
  auto r = post("jobs", body);
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["retryBackoff"], "FIXED");
  EXPECT_EQ(r.body["retryMultiplier"], 2.0);
  EXPECT_EQ(r.body["retryMaxInterval"], 0);
  EXPECT_EQ(r.body["retryJitter"], 0);

  body["name"] = "backing-off";
  body["executorFailRetryCount"] = 5;
  body["retryInterval"] = 10;
  body["retryBackoff"] = "EXPONENTIAL";
  body["retryMultiplier"] = 1.5;
  body["retryMaxInterval"] = 600;
  body["retryJitter"] = 20;
  r = post("jobs", body);
  ASSERT_EQ(r.status, 201) << r.text;
  const auto id = r.body["id"].get<std::int64_t>();
  EXPECT_EQ(stores_.jobs.get(id)->retry, (RetryPolicy{RetryBackoff::kExponential, 1.5, 600, 20}));
  EXPECT_EQ(r.body["retryMultiplier"], 1.5);
  r = put("jobs/" + std::to_string(id), {{"retryBackoff", "FIXED"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(stores_.jobs.get(id)->retry, (RetryPolicy{RetryBackoff::kFixed, 1.5, 600, 20})) << "the rest kept";

  const std::vector<std::pair<json, std::string>> refused{
      {{{"retryBackoff", "LINEAR"}}, "retryBackoff"},      {{{"retryBackoff", 1}}, "retryBackoff"},
      {{{"retryMultiplier", 0.5}}, "retryMultiplier"},     {{{"retryMultiplier", 11}}, "retryMultiplier"},
      {{{"retryMultiplier", "2"}}, "retryMultiplier"},     {{{"retryMaxInterval", -1}}, "retryMaxInterval"},
      {{{"retryMaxInterval", 2'592'001}}, "retryMaxInterval"}, {{{"retryJitter", 101}}, "retryJitter"},
      {{{"retryInterval", 2'592'001}}, "retryInterval"}};
  for (const auto& [fields, field] : refused) {
    r = put("jobs/" + std::to_string(id), fields);
    EXPECT_EQ(r.status, 400) << fields.dump();
    EXPECT_EQ(r.field(), field) << fields.dump() << " " << r.text;
  }
  EXPECT_EQ(put("jobs/" + std::to_string(id), {{"retryMultiplier", 0.5}}).message(),
            "retryMultiplier: must be a number from 1 to 10, got 0.5");
}

TEST_F(JobsApi, AJobsConcurrencyLimitAndPriorityAreStoredAndBounded) {
  auto body = cron_job_body();
  auto r = post("jobs", body);
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["maxConcurrent"], 0);
  EXPECT_EQ(r.body["priority"], 0);
  const auto id = r.body["id"].get<std::int64_t>();
  r = put("jobs/" + std::to_string(id), {{"maxConcurrent", 3}, {"priority", -20}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(stores_.jobs.get(id)->max_concurrent, 3);
  EXPECT_EQ(stores_.jobs.get(id)->priority, -20);
  const std::vector<std::pair<json, std::string>> refused{{{{"maxConcurrent", -1}}, "maxConcurrent"},
                                                          {{{"maxConcurrent", 1001}}, "maxConcurrent"},
                                                          {{{"priority", 1001}}, "priority"},
                                                          {{{"priority", -1001}}, "priority"},
                                                          {{{"priority", "high"}}, "priority"}};
  for (const auto& [fields, field] : refused) {
    r = put("jobs/" + std::to_string(id), fields);
    EXPECT_EQ(r.status, 400) << fields.dump();
    EXPECT_EQ(r.field(), field) << r.text;
  }
}

TEST_F(JobsApi, InvalidFieldsAreNamed) {
  auto body = cron_job_body();
  body["scheduleConf"] = "0 0 25 * * ?";
  auto r = post("jobs", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "scheduleConf");
  EXPECT_EQ(r.message(), "scheduleConf: hours: 25 is out of range 0-23");

  body = cron_job_body();
  body["timezone"] = "Mars/Base";
  r = post("jobs", body);
  EXPECT_EQ(r.field(), "timezone");

  body = cron_job_body();
  body["jobGroup"] = 999;
  r = post("jobs", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message(), "jobGroup: group 999 does not exist");

  body = cron_job_body();
  body["childJobId"] = {12345};
  r = post("jobs", body);
  EXPECT_EQ(r.message(), "childJobId: job 12345 does not exist");

  body = cron_job_body();
  body["triggerStatus"] = 1;
  r = post("jobs", body);
  EXPECT_EQ(r.field(), "triggerStatus");
  EXPECT_EQ(stores_.jobs.list({}).total, 0);
}

TEST_F(JobsApi, GetAnswersTheJobOr404) {
  auto job = add_job(group_.id);
  auto r = get(path(job));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["id"], job.id);
  EXPECT_EQ(r.body["executorHandler"], "reportHandler");
  auto missing = get("jobs/999");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.error()["code"], "not_found");
  EXPECT_EQ(get("jobs/99999999999999999999").status, 404);
}

TEST_F(JobsApi, ListFiltersByGroupStatusAndText) {
  auto other = add_group("billing");
  auto a = add_job(group_.id, "morning report");
  add_job(group_.id, "evening cleanup");
  add_job(other.id, "invoice run");
  stores_.jobs.set_trigger_status(a.id, 1, kStartMs + 60'000, "job.start", system_);

  EXPECT_EQ(get("jobs").body["total"], 3);
  EXPECT_EQ(get("jobs?jobGroup=" + std::to_string(other.id)).body["total"], 1);
  auto running = get("jobs?triggerStatus=1");
  EXPECT_EQ(running.body["total"], 1);
  EXPECT_EQ(running.body["items"][0]["id"], a.id);
  EXPECT_EQ(get("jobs?text=CLEANUP").body["total"], 1);
  EXPECT_EQ(get("jobs?text=reportHandler").body["total"], 3);  // handler matches too
  auto paged = get("jobs?limit=2&offset=0");
  EXPECT_EQ(paged.body["total"], 3);
  EXPECT_EQ(paged.body["totalExact"], true);
  EXPECT_EQ(paged.body["items"].size(), 2u);
  auto rest = get("jobs?limit=2&after=" + paged.body["nextCursor"].get<std::string>());
  ASSERT_EQ(rest.body["items"].size(), 1u);
  EXPECT_EQ(rest.body["items"][0]["id"], a.id);  // the oldest
  EXPECT_TRUE(rest.body["nextCursor"].is_null());
  EXPECT_EQ(get("jobs?after=" + std::to_string(a.id)).field(), "after");

  auto bad = get("jobs?triggerStatus=2");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.message(), "triggerStatus: 2 is out of range 0-1");
  EXPECT_EQ(get("jobs?jobGroup=x").message(), "jobGroup: expected an integer, got \"x\"");
}

TEST_F(JobsApi, UpdateChangesGivenFieldsOnly) {
  auto job = add_job(group_.id);
  auto r = put(path(job), {{"jobDesc", "renamed"}, {"executorTimeout", 30}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["jobDesc"], "renamed");
  EXPECT_EQ(r.body["executorTimeout"], 30);
  EXPECT_EQ(r.body["scheduleConf"], "0 0 3 * * ?");
  auto audit = last_audit();
  EXPECT_EQ(audit.action, "job.update");
  EXPECT_EQ(json::parse(*audit.before)["jobDesc"], "nightly report");
  EXPECT_EQ(json::parse(*audit.after)["jobDesc"], "renamed");

  auto bad = put(path(job), {{"executorFailRetryCount", 1000}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.field(), "executorFailRetryCount");
  auto own_child = put(path(job), {{"childJobId", std::to_string(job.id)}});
  EXPECT_EQ(own_child.message(), "childJobId: job " + std::to_string(job.id) + " cannot be its own child");
  EXPECT_EQ(put("jobs/999", {{"jobDesc", "x"}}).status, 404);
}

TEST_F(JobsApi, ScheduleChangeOfARunningJobRecomputesItsNextTime) {
  auto job = add_job(group_.id, "ticker", ScheduleType::kFixRate, "60");
  ASSERT_EQ(post(path(job, "/start")).status, 200);
  clock_.advance(std::chrono::seconds(100));
  auto r = put(path(job), {{"scheduleConf", "30"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["triggerStatus"], 1);
  EXPECT_EQ(r.body["triggerNextTime"], kStartMs + 100'000 + 5'000 + 30'000);

  // Other changes leave the next time alone.
  r = put(path(job), {{"jobDesc", "ticker 2"}});
  EXPECT_EQ(r.body["triggerNextTime"], kStartMs + 100'000 + 5'000 + 30'000);

  auto none = put(path(job), {{"scheduleType", "NONE"}});
  EXPECT_EQ(none.status, 400);
  EXPECT_EQ(none.message(), "scheduleType: a running job needs a schedule; stop the job first to set NONE");
}

TEST_F(JobsApi, StartComputesTheNextTimeFromFiveSecondsAhead) {
  auto fixed = add_job(group_.id, "ticker", ScheduleType::kFixRate, "60");
  auto r = post(path(fixed, "/start"));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["triggerStatus"], 1);
  EXPECT_EQ(r.body["triggerNextTime"], kStartMs + 5'000 + 60'000);
  EXPECT_EQ(last_audit().action, "job.start");

  // A cron second that is less than 5 s away is skipped, as XXL-JOB does.
  auto every_second = add_job(group_.id, "every 10 s", ScheduleType::kCron, "*/10 * * * * ?");
  clock_.advance(std::chrono::milliseconds(7'000));  // 22:13:27Z: :30 is only 3 s away
  r = post(path(every_second, "/start"));
  EXPECT_EQ(r.body["triggerNextTime"], kStartMs + 20'000);  // 22:13:40Z
}

TEST_F(JobsApi, StartingAgainChangesNothing) {
  auto job = add_job(group_.id, "ticker", ScheduleType::kFixRate, "60");
  auto first = post(path(job, "/start"));
  clock_.advance(std::chrono::seconds(10));
  auto again = post(path(job, "/start"));
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body["triggerNextTime"], first.body["triggerNextTime"]);
}

TEST_F(JobsApi, StartRefusesAScheduleWithoutFireTimes) {
  auto manual = add_job(group_.id, "by hand", ScheduleType::kNone, "");
  auto r = post(path(manual, "/start"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "scheduleType");
  EXPECT_EQ(r.message(), "scheduleType: NONE never fires by itself; give the job a schedule, or trigger it by hand");

  auto past = add_job(group_.id, "long ago", ScheduleType::kCron, "0 0 0 1 1 ? 2020");
  r = post(path(past, "/start"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "scheduleConf");
  EXPECT_EQ(r.message(), "scheduleConf: '0 0 0 1 1 ? 2020' has no fire time after 2023-11-14T22:13:20+00:00");
  EXPECT_EQ(stores_.jobs.get(past.id)->trigger_status, 0);
}

TEST_F(JobsApi, StopClearsTheNextTime) {
  auto job = add_job(group_.id, "ticker", ScheduleType::kFixRate, "60");
  post(path(job, "/start"));
  auto r = post(path(job, "/stop"));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["triggerStatus"], 0);
  EXPECT_EQ(r.body["triggerNextTime"], 0);
  EXPECT_EQ(last_audit().action, "job.stop");
  EXPECT_EQ(post(path(job, "/stop")).status, 200);  // already stopped
}

TEST_F(JobsApi, StartAndStopTakeNoBody) {
  auto job = add_job(group_.id, "ticker", ScheduleType::kFixRate, "60");
  auto r = post(path(job, "/start"), {{"force", true}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message(), "force: unknown field");
}

TEST_F(JobsApi, CopyCreatesAStoppedJob) {
  auto job = add_job(group_.id, "ticker", ScheduleType::kFixRate, "60");
  post(path(job, "/start"));
  auto r = post(path(job, "/copy"));
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_NE(r.body["id"], job.id);
  EXPECT_EQ(r.body["jobDesc"], "ticker (copy)");
  EXPECT_EQ(r.body["triggerStatus"], 0);
  EXPECT_EQ(r.body["triggerNextTime"], 0);
  EXPECT_EQ(r.body["scheduleConf"], "60");
  EXPECT_EQ(stores_.jobs.list({}).total, 2);

  auto long_desc = add_job(group_.id, std::string(255, 'd'));
  r = post(path(long_desc, "/copy"));
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["jobDesc"], std::string(248, 'd') + " (copy)");
}

TEST_F(JobsApi, AJobGivenNoNameIsNamedAfterItsIdAndAnEditWithoutOneKeepsIt) {
  auto r = post("jobs", cron_job_body());
  ASSERT_EQ(r.status, 201) << r.text;
  const auto id = r.body["id"].get<std::int64_t>();
  EXPECT_EQ(r.body["name"], "job-" + std::to_string(id));

  auto renamed = put("jobs/" + std::to_string(id), {{"name", "morning-report.v2"}});
  ASSERT_EQ(renamed.status, 200) << renamed.text;
  EXPECT_EQ(renamed.body["name"], "morning-report.v2");
  auto edited = put("jobs/" + std::to_string(id), {{"jobDesc", "the morning report"}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  EXPECT_EQ(edited.body["name"], "morning-report.v2");
  EXPECT_EQ(get("jobs/" + std::to_string(id)).body["name"], "morning-report.v2");

  // A copy cannot share the name: it is named after its own id.
  auto copy = post("jobs/" + std::to_string(id) + "/copy");
  ASSERT_EQ(copy.status, 201) << copy.text;
  EXPECT_EQ(copy.body["name"], "job-" + std::to_string(copy.body["id"].get<std::int64_t>()));
}

TEST_F(JobsApi, ANameIsUniqueWithinItsGroupOnly) {
  auto body = cron_job_body();
  body["name"] = "nightly_export";
  ASSERT_EQ(post("jobs", body).status, 201);
  auto twice = post("jobs", body);
  EXPECT_EQ(twice.status, 409) << twice.text;
  EXPECT_EQ(twice.field(), "name");

  auto other = add_group("billing");
  body["jobGroup"] = other.id;
  auto elsewhere = post("jobs", body);
  ASSERT_EQ(elsewhere.status, 201) << elsewhere.text;
  // Nor may an edit take a name another job of the group has, or move a job into a group where
  // its name is taken.
  auto second = post("jobs", cron_job_body());
  ASSERT_EQ(second.status, 201);
  const std::string second_path = "jobs/" + std::to_string(second.body["id"].get<std::int64_t>());
  EXPECT_EQ(put(second_path, {{"name", "nightly_export"}}).status, 409);
  auto moved = put("jobs/" + std::to_string(elsewhere.body["id"].get<std::int64_t>()), {{"jobGroup", group_.id}});
  EXPECT_EQ(moved.status, 409) << moved.text;
  EXPECT_EQ(moved.field(), "name");
}

TEST_F(JobsApi, AJobIsFoundByItsGroupsAppNameAndItsName) {
  auto body = cron_job_body();
  body["name"] = "morning-report";
  const auto id = post("jobs", body).body["id"].get<std::int64_t>();
  auto other = add_group("billing");
  body["jobGroup"] = other.id;
  post("jobs", body);  // the same name in another group

  auto found = get("jobs?appName=" + group_.app_name + "&name=morning-report");
  ASSERT_EQ(found.status, 200) << found.text;
  ASSERT_EQ(found.body["items"].size(), 1u) << found.text;
  EXPECT_EQ(found.body["items"][0]["id"], id);
  EXPECT_EQ(get("jobs?name=morning-report").body["items"].size(), 2u);
  EXPECT_EQ(get("jobs?appName=" + group_.app_name + "&name=evening-report").body["items"].size(), 0u);
  EXPECT_EQ(get("jobs?appName=no-such-app&name=morning-report").body["items"].size(), 0u);
  // appName and a different jobGroup: nothing can match.
  EXPECT_EQ(get("jobs?appName=" + group_.app_name + "&jobGroup=" + std::to_string(other.id)).body["items"].size(), 0u);
}

TEST_F(JobsApi, ANameOutsideTheFormatIsRefusedNamingTheRule) {
  for (const std::string& name : std::vector<std::string>{"", "Upper", "-leading-dash", "has space", "caf\u00e9", std::string(101, 'a'), "a/b"}) {
    auto body = cron_job_body();
    body["name"] = name;
    auto r = post("jobs", body);
    EXPECT_EQ(r.status, 400) << name << ": " << r.text;
    EXPECT_EQ(r.field(), "name") << name;
    EXPECT_NE(r.body["error"]["message"].get<std::string>().find("lower-case letters, digits"), std::string::npos) << r.text;
  }
  auto body = cron_job_body();
  body["name"] = std::string(100, 'a');
  EXPECT_EQ(post("jobs", body).status, 201);
  body["name"] = 42;
  EXPECT_EQ(post("jobs", body).status, 400);
}

TEST_F(JobsApi, PausingAGroupStopsItsRunningJobsAndResumingStartsExactlyThoseAgain) {
  auto running = add_job(group_.id, "running", ScheduleType::kFixRate, "60");
  auto also_running = add_job(group_.id, "also running", ScheduleType::kFixRate, "30");
  auto stopped = add_job(group_.id, "stopped before", ScheduleType::kFixRate, "60");
  auto other_group = add_group("billing");
  auto elsewhere = add_job(other_group.id, "elsewhere", ScheduleType::kFixRate, "60");
  for (const auto& j : {running, also_running, elsewhere}) ASSERT_EQ(post(path(j, "/start")).status, 200);

  auto paused = post("groups/" + std::to_string(group_.id) + "/pause");
  ASSERT_EQ(paused.status, 200) << paused.text;
  EXPECT_EQ(paused.body["paused"], json({running.id, also_running.id}));
  EXPECT_EQ(last_audit().action, "group.pause");
  auto after_pause = get(path(running));
  EXPECT_EQ(after_pause.body["triggerStatus"], 0);
  EXPECT_EQ(after_pause.body["triggerNextTime"], 0);
  EXPECT_EQ(after_pause.body["pausedWithGroup"], true);
  EXPECT_EQ(get(path(stopped)).body["pausedWithGroup"], false);
  EXPECT_EQ(get(path(elsewhere)).body["triggerStatus"], 1) << "another group's jobs run on";

  // A job started by hand meanwhile is no longer the pause's to resume.
  ASSERT_EQ(post(path(also_running, "/start")).status, 200);
  EXPECT_EQ(get(path(also_running)).body["pausedWithGroup"], false);

  auto resumed = post("groups/" + std::to_string(group_.id) + "/resume");
  ASSERT_EQ(resumed.status, 200) << resumed.text;
  EXPECT_EQ(resumed.body["resumed"], json({running.id}));
  EXPECT_EQ(resumed.body["notResumed"], json::array());
  EXPECT_EQ(last_audit().action, "group.resume");
  auto after_resume = get(path(running));
  EXPECT_EQ(after_resume.body["triggerStatus"], 1);
  EXPECT_GT(after_resume.body["triggerNextTime"].get<std::int64_t>(), 0);
  EXPECT_EQ(after_resume.body["pausedWithGroup"], false);
  EXPECT_EQ(get(path(stopped)).body["triggerStatus"], 0) << "stopped before the pause: stays stopped";
  // Resuming again changes nothing.
  EXPECT_EQ(post("groups/" + std::to_string(group_.id) + "/resume").body["resumed"], json::array());
  EXPECT_EQ(post("groups/999/pause").status, 404);
}

TEST_F(JobsApi, APausedJobWhoseScheduleHasNoTimeLeftIsNamedAndStaysStopped) {
  auto job = add_job(group_.id, "ends soon", ScheduleType::kCron, "0 0 0 1 1 ? 2099");
  ASSERT_EQ(post(path(job, "/start")).status, 200);
  ASSERT_EQ(post("groups/" + std::to_string(group_.id) + "/pause").status, 200);
  // Its schedule is edited while paused to one that never fires again.
  ASSERT_EQ(put(path(job), {{"scheduleConf", "0 0 0 1 1 ? 2000"}}).status, 200);
  auto resumed = post("groups/" + std::to_string(group_.id) + "/resume");
  ASSERT_EQ(resumed.status, 200) << resumed.text;
  EXPECT_EQ(resumed.body["resumed"], json::array());
  ASSERT_EQ(resumed.body["notResumed"].size(), 1u) << resumed.text;
  EXPECT_EQ(resumed.body["notResumed"][0]["id"], job.id);
  EXPECT_NE(resumed.body["notResumed"][0]["reason"].get<std::string>().find("no fire time"), std::string::npos);
  EXPECT_EQ(get(path(job)).body["triggerStatus"], 0);
}

TEST_F(JobsApi, DeleteRemovesTheJobAndItsLogs) {
  auto job = add_job(group_.id);
  ASSERT_EQ(post(path(job, "/trigger")).status, 201);
  EXPECT_EQ(del(path(job)).status, 204);
  EXPECT_EQ(get(path(job)).status, 404);
  EXPECT_EQ(stores_.logs.list({}).total, 0);
  EXPECT_EQ(last_audit().action, "job.delete");
  EXPECT_EQ(del(path(job)).status, 404);
}

TEST_F(JobsApi, TriggerCreatesAPendingFireOwnedByThisNode) {
  auto job = add_job(group_.id);
  auto r = post(path(job, "/trigger"), {{"executorParam", "--dry-run"}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["state"], "pending");
  EXPECT_EQ(r.body["triggerType"], "MANUAL");
  EXPECT_EQ(r.body["jobId"], job.id);
  EXPECT_EQ(r.body["jobGroup"], group_.id);
  EXPECT_EQ(r.body["scheduledTime"], kStartMs);
  EXPECT_EQ(r.body["adminNode"], "node-under-test");
  EXPECT_EQ(r.body["executorParam"], "--dry-run");
  EXPECT_EQ(r.body["executorHandler"], "reportHandler");
  EXPECT_EQ(last_audit().action, "job.trigger");

  auto logs = get("logs?jobId=" + std::to_string(job.id));
  ASSERT_EQ(logs.body["total"], 1);
  EXPECT_EQ(logs.body["items"][0]["id"], r.body["id"]);
}

TEST_F(JobsApi, TriggerWithoutParamUsesTheJobsParam) {
  Job j;
  j.job_group = group_.id;
  j.job_desc = "with param";
  j.executor_handler = "h";
  j.executor_param = "--default";
  auto job = stores_.jobs.create(j, system_);
  EXPECT_EQ(post(path(job, "/trigger")).body["executorParam"], "--default");
}

TEST_F(JobsApi, TriggerLaterIsAnApiFire) {
  auto job = add_job(group_.id);
  auto r = post(path(job, "/trigger"), {{"delaySeconds", 90}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["triggerType"], "API");
  EXPECT_EQ(r.body["scheduledTime"], kStartMs + 90'000);

  r = post(path(job, "/trigger"), {{"at", kStartMs + 3'600'000}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["triggerType"], "API");
  EXPECT_EQ(r.body["scheduledTime"], kStartMs + 3'600'000);

  auto both = post(path(job, "/trigger"), {{"delaySeconds", 5}, {"at", kStartMs + 10'000}});
  EXPECT_EQ(both.status, 400);
  EXPECT_EQ(both.message(), "at: give either delaySeconds or at, not both");
  auto past = post(path(job, "/trigger"), {{"at", kStartMs - 1}});
  EXPECT_EQ(past.field(), "at");
  EXPECT_EQ(post(path(job, "/trigger"), {{"delaySeconds", -1}}).field(), "delaySeconds");
}

TEST_F(JobsApi, TriggerAddressListIsValidatedAndKeptOnTheFire) {
  std::vector<std::string> own;
  for (int i = 0; i < 12; ++i) own.push_back("http://10.0.0." + std::to_string(i) + ":9999/");
  auto group = add_group("manual-addresses", 1, own);
  auto job = add_job(group.id);
  auto bad = post(path(job, "/trigger"), {{"addressList", {"http://10.0.0.5:9999/", "10.0.0.6"}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.message(),
            "addressList[1]: expected an http(s) URL such as http://10.0.0.5:9999/, got '10.0.0.6' (not an http:// or "
            "https:// URL)");
  auto r = post(path(job, "/trigger"), {{"addressList", {"http://10.0.0.5:9999/", "http://10.0.0.6:9999"}}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["executorAddress"], "http://10.0.0.5:9999/,http://10.0.0.6:9999");
  EXPECT_EQ(post(path(job, "/trigger"), {{"addressList", "http://10.0.0.5:9999/"}}).status, 201);
  EXPECT_EQ(post(path(job, "/trigger"), {{"addressList", own}}).message(),
            "addressList: at most 255 characters in all, comma-separated");
  EXPECT_EQ(post(path(job, "/trigger"), {{"executorParams", "x"}}).message(), "executorParams: unknown field");
}

TEST_F(JobsApi, TriggerGoesOnlyToAddressesOfTheJobsGroup) {
  // The admin sends the group's access token with the run: any other address would receive it
  // (and the run, and its log and kill calls).
  auto group = add_group("manual-addresses", 1, {"http://10.0.0.5:9999/"});
  auto job = add_job(group.id);
  auto other = add_group("other-group", 1, {"http://10.0.0.7:9999/"});
  for (const std::string& address : {std::string("http://10.0.0.7:9999/"), std::string("http://169.254.169.254/"),
                                     std::string("http://127.0.0.1:5432/")}) {
    auto r = post(path(job, "/trigger"), {{"addressList", {address}}});
    EXPECT_EQ(r.status, 400) << address;
    EXPECT_EQ(r.field(), "addressList");
    EXPECT_EQ(r.message(), "addressList[0]: " + address +
                               " is not an address of group manual-addresses; a run goes only to its group's own executors");
  }
  EXPECT_EQ(stores_.logs.list({}).total, 0);
  EXPECT_EQ(post(path(job, "/trigger"), {{"addressList", {"http://10.0.0.5:9999/"}}}).status, 201);
  (void)other;
}

TEST_F(JobsApi, NextFiresOfARunningJobStartAtItsNextTime) {
  auto job = add_job(group_.id, "ticker", ScheduleType::kFixRate, "60");
  post(path(job, "/start"));
  auto r = get(path(job, "/next-fires?count=3"));
  ASSERT_EQ(r.status, 200) << r.text;
  const auto first = kStartMs + 65'000;
  EXPECT_EQ(r.body["times"], json({first, first + 60'000, first + 120'000}));
}

TEST_F(JobsApi, NextFiresCountIsOneToAHundred) {
  auto job = add_job(group_.id);
  EXPECT_EQ(get(path(job, "/next-fires?count=100")).body["times"].size(), 100u);
  auto r = get(path(job, "/next-fires?count=101"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message(), "count: 101 is out of range 1-100");
  EXPECT_EQ(get(path(job, "/next-fires?count=0")).status, 400);
  auto manual = add_job(group_.id, "by hand", ScheduleType::kNone, "");
  EXPECT_EQ(get(path(manual, "/next-fires")).body["times"], json::array());
}

TEST_F(JobsApi, NormalUserSeesAndActsOnlyInTheirGroups) {
  auto theirs = add_group("billing");
  add_user("alice", "normal", {group_.id});
  auto mine = add_job(group_.id, "mine");
  auto hidden = add_job(theirs.id, "hidden");

  auto list = get("jobs", "alice");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body["total"], 1);
  EXPECT_EQ(list.body["items"][0]["id"], mine.id);
  EXPECT_EQ(get("jobs?jobGroup=" + std::to_string(theirs.id), "alice").body["total"], 0);

  EXPECT_EQ(get(path(mine), "alice").status, 200);
  const std::string hidden_path = path(hidden);
  EXPECT_EQ(get(hidden_path, "alice").status, 404);
  EXPECT_EQ(get(hidden_path, "alice").message(), "no such job: " + std::to_string(hidden.id));
  EXPECT_EQ(put(hidden_path, {{"jobDesc", "x"}}, "alice").status, 404);
  EXPECT_EQ(del(hidden_path, "alice").status, 404);
  for (const char* action : {"/start", "/stop", "/trigger", "/copy"}) {
    EXPECT_EQ(post(hidden_path + action, json::object(), "alice").status, 404) << action;
  }
  EXPECT_EQ(get(hidden_path + "/next-fires", "alice").status, 404);
  EXPECT_EQ(stores_.jobs.get(hidden.id)->job_desc, "hidden");

  // Nor can a job be created in, moved to, or chained to another group.
  auto body = cron_job_body();
  body["jobGroup"] = theirs.id;
  EXPECT_EQ(post("jobs", body, "alice").message(), "jobGroup: group " + std::to_string(theirs.id) + " does not exist");
  EXPECT_EQ(put(path(mine), {{"jobGroup", theirs.id}}, "alice").status, 400);
  EXPECT_EQ(put(path(mine), {{"childJobId", {hidden.id}}}, "alice").message(),
            "childJobId: job " + std::to_string(hidden.id) + " does not exist");

  // Within their group, everything works.
  EXPECT_EQ(post("jobs", cron_job_body(), "alice").status, 201);
  EXPECT_EQ(post(path(mine, "/trigger"), json::object(), "alice").status, 201);
}

TEST_F(JobsApi, SessionChangesNeedTheCsrfToken) {
  auto job = add_job(group_.id);
  auto without = call("POST", path(job, "/trigger"), "{}", "", {{"Cookie", "session=admin"}});
  EXPECT_EQ(without.status, 403);
  auto with = call("POST", path(job, "/trigger"), "{}", "", {{"Cookie", "session=admin"}, {"X-CSRF-Token", "csrf-admin"}});
  EXPECT_EQ(with.status, 201);
}

}  // namespace
}  // namespace cronwheel::admin
