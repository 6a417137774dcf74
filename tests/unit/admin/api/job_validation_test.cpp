#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "admin/api/job_validation.h"
#include "common/http/http_error.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

struct Problem {
  int status = 0;
  std::string field;
  std::string message;
};

// The 400 a check throws, or status 0 when it passes.
Problem problem_of(const std::function<void()>& check) {
  try {
    check();
  } catch (const common::http::HttpError& e) {
    return {e.info().status, e.info().field, e.info().message};
  }
  return {};
}

json valid_body() { return {{"jobGroup", 1}, {"jobDesc", "nightly report"}, {"executorHandler", "reportHandler"}}; }

// Reads `body` as a create, then validates it; the first problem.
Problem create_problem(const json& body) {
  return problem_of([&] { validate_job(read_job_body(body.dump(), Job{}, JobBodyKind::kCreate)); });
}

Problem create_problem_with(const std::string& field, const json& value) {
  auto body = valid_body();
  body[field] = value;
  return create_problem(body);
}

void expect_problem(const Problem& p, const std::string& field, const std::string& message) {
  EXPECT_EQ(p.status, 400) << message;
  EXPECT_EQ(p.field, field) << message;
  EXPECT_EQ(p.message, message);
}

TEST(JobValidation, MinimalCreateTakesTheDefaults) {
  Job job = read_job_body(valid_body().dump(), Job{}, JobBodyKind::kCreate);
  validate_job(job);
  EXPECT_EQ(job.job_group, 1);
  EXPECT_EQ(job.job_desc, "nightly report");
  EXPECT_EQ(job.schedule_type, ScheduleType::kNone);
  EXPECT_EQ(job.timezone, "UTC");
  EXPECT_EQ(job.misfire_strategy, MisfireStrategy::kDoNothing);
  EXPECT_EQ(job.executor_route_strategy, RouteStrategy::kFirst);
  EXPECT_EQ(job.executor_block_strategy, BlockStrategy::kSerialExecution);
  EXPECT_EQ(job.glue_type, GlueType::kBean);
  EXPECT_EQ(job.trigger_status, 0);
}

TEST(JobValidation, EveryFieldIsRead) {
  json body = {{"jobGroup", 2},
               {"jobDesc", "  sync  "},
               {"author", "ops"},
               {"alarmEmail", "a@example.com, b@example.org"},
               {"scheduleType", "CRON"},
               {"scheduleConf", "0 0 9 ? * MON-FRI"},
               {"timezone", "Asia/Shanghai"},
               {"misfireStrategy", "FIRE_ONCE_NOW"},
               {"executorRouteStrategy", "SHARDING_BROADCAST"},
               {"executorHandler", ""},
               {"executorParam", "--full"},
               {"executorBlockStrategy", "COVER_EARLY"},
               {"executorTimeout", 60},
               {"executorFailRetryCount", 3},
               {"retryInterval", 30},
               {"glueType", "GLUE_SHELL"},
               {"glueSource", "echo hi"},
               {"glueRemark", "first"},
               {"childJobId", {3, 4}}};
  Job job = read_job_body(body.dump(), Job{}, JobBodyKind::kCreate);
  validate_job(job);
  EXPECT_EQ(job.job_desc, "sync");
  EXPECT_EQ(job.alarm_email, "a@example.com,b@example.org");
  EXPECT_EQ(job.schedule_conf, "0 0 9 ? * MON-FRI");
  EXPECT_EQ(job.timezone, "Asia/Shanghai");
  EXPECT_EQ(job.misfire_strategy, MisfireStrategy::kFireOnceNow);
  EXPECT_EQ(job.executor_route_strategy, RouteStrategy::kShardingBroadcast);
  EXPECT_EQ(job.executor_block_strategy, BlockStrategy::kCoverEarly);
  EXPECT_EQ(job.executor_timeout, 60);
  EXPECT_EQ(job.executor_fail_retry_count, 3);
  EXPECT_EQ(job.retry_interval, 30);
  EXPECT_EQ(job.glue_type, GlueType::kGlueShell);
  EXPECT_EQ(job.glue_source, "echo hi");
  EXPECT_EQ(job.glue_remark, "first");
  EXPECT_EQ(job.child_job_ids, (std::vector<std::int64_t>{3, 4}));
}

TEST(JobValidation, RequiredFieldsOnCreate) {
  auto body = valid_body();
  body.erase("jobGroup");
  expect_problem(create_problem(body), "jobGroup", "jobGroup: is required");
  body = valid_body();
  body.erase("jobDesc");
  expect_problem(create_problem(body), "jobDesc", "jobDesc: is required");
}

TEST(JobValidation, WrongTypesNameTheField) {
  expect_problem(create_problem_with("jobGroup", "1"), "jobGroup", "jobGroup: expected an integer, got string");
  expect_problem(create_problem_with("executorTimeout", 1.5), "executorTimeout",
                 "executorTimeout: expected an integer, got number");
  expect_problem(create_problem_with("jobDesc", 7), "jobDesc", "jobDesc: expected a string, got integer");
  expect_problem(create_problem_with("childJobId", json::object()), "childJobId",
                 "childJobId: expected an array of integers, got object");
  expect_problem(create_problem_with("childJobId", {1, "2"}), "childJobId[1]",
                 "childJobId[1]: expected an integer, got string");
}

TEST(JobValidation, JobDescIsRequiredAndAtMost255Characters) {
  expect_problem(create_problem_with("jobDesc", "   "), "jobDesc", "jobDesc: must not be empty");
  expect_problem(create_problem_with("jobDesc", std::string(256, 'x')), "jobDesc",
                 "jobDesc: at most 255 characters, got 256");
  // Characters, not bytes: 255 two-byte characters fit.
  std::string umlauts;
  for (int i = 0; i < 255; ++i) umlauts += "\xC3\xA4";
  EXPECT_EQ(create_problem_with("jobDesc", umlauts).status, 0);
}

TEST(JobValidation, NamesRefuseCharactersThatMakeThemLieWhenShown) {
  // "backup\u202Egpj.exe" would show as "backupexe.jpg"; invisible and separator characters let
  // two names that look alike differ.
  expect_problem(create_problem_with("jobDesc", "backup\u202Egpj.exe"), "jobDesc",
                 "jobDesc: must not contain U+202E (a bidirectional control)");
  expect_problem(create_problem_with("author", "al\u200Bice"), "author",
                 "author: must not contain U+200B (an invisible character)");
  expect_problem(create_problem_with("jobDesc", "one\u2028two"), "jobDesc",
                 "jobDesc: must not contain U+2028 (a line or paragraph separator)");
  expect_problem(create_problem_with("glueRemark", "v2\uFEFF"), "glueRemark",
                 "glueRemark: must not contain U+FEFF (an invisible character)");
  // Any script is fine: right-to-left text itself, emoji, CJK.
  EXPECT_EQ(create_problem_with("jobDesc", "\u05D2\u05D9\u05D1\u05D5\u05D9 \u6BCF\u65E5 \U0001F4BE").status, 0);
}

TEST(JobValidation, AKeyGivenTwiceOrALeadingByteOrderMarkIsRefused) {
  auto twice = problem_of([] {
    read_job_body(R"({"jobGroup":1,"jobDesc":"a","jobDesc":"b","executorHandler":"h"})", Job{}, JobBodyKind::kCreate);
  });
  expect_problem(twice, "jobDesc", "jobDesc: given twice");
  auto bom = problem_of([] { read_job_body("\xEF\xBB\xBF{\"jobGroup\":1}", Job{}, JobBodyKind::kCreate); });
  EXPECT_EQ(bom.status, 400);
  EXPECT_EQ(bom.message, "the body starts with a byte order mark; send UTF-8 JSON without one");
}

TEST(JobValidation, AuthorIsAtMost64Characters) {
  expect_problem(create_problem_with("author", std::string(65, 'a')), "author", "author: at most 64 characters, got 65");
}

TEST(JobValidation, AlarmEmailIsACommaSeparatedListOfAddresses) {
  expect_problem(create_problem_with("alarmEmail", "ops@example.com, not-an-address"), "alarmEmail",
                 "alarmEmail: 'not-an-address' is not an email address");
  expect_problem(create_problem_with("alarmEmail", "a@b@c"), "alarmEmail", "alarmEmail: 'a@b@c' is not an email address");
  EXPECT_EQ(create_problem_with("alarmEmail", "").status, 0);
  std::string many;
  for (int i = 0; i < 20; ++i) many += "someone" + std::to_string(i) + "@example.com,";
  expect_problem(create_problem_with("alarmEmail", many), "alarmEmail", "alarmEmail: at most 255 characters, got 429");
}

TEST(JobValidation, ScheduleIsCheckedWithItsZone) {
  auto body = valid_body();
  body["scheduleType"] = "CRON";
  body["scheduleConf"] = "0 60 * * * ?";
  expect_problem(create_problem(body), "scheduleConf", "scheduleConf: minutes: 60 is out of range 0-59");
  body["scheduleConf"] = "0 0 9 * * ?";
  body["timezone"] = "Mars/Base";
  expect_problem(create_problem(body), "timezone", "timezone: unknown time zone 'Mars/Base'");
  body["timezone"] = "America/New_York";
  EXPECT_EQ(create_problem(body).status, 0);

  expect_problem(create_problem_with("scheduleType", "HOURLY"), "scheduleType",
                 "scheduleType: unknown value 'HOURLY', expected one of NONE, CRON, FIX_RATE, FIX_DELAY");
  body = valid_body();
  body["scheduleType"] = "FIX_RATE";
  expect_problem(create_problem(body), "scheduleConf",
                 "scheduleConf: FIX_RATE needs a whole number of seconds from 1 to 315360000, got ''");
  body["scheduleConf"] = "0";
  expect_problem(create_problem(body), "scheduleConf",
                 "scheduleConf: FIX_RATE needs a whole number of seconds from 1 to 315360000, got '0'");
  body["scheduleType"] = "FIX_DELAY";
  body["scheduleConf"] = "315360001";
  expect_problem(create_problem(body), "scheduleConf",
                 "scheduleConf: FIX_DELAY needs a whole number of seconds from 1 to 315360000, got '315360001'");
  body["scheduleConf"] = "30";
  EXPECT_EQ(create_problem(body).status, 0);
}

TEST(JobValidation, TimezoneIsRequiredWhenGiven) {
  expect_problem(create_problem_with("timezone", " "), "timezone", "timezone: must not be empty");
  expect_problem(create_problem_with("timezone", std::string(65, 'a')), "timezone", "timezone: at most 64 characters, got 65");
}

TEST(JobValidation, EnumerationsListTheirChoices) {
  expect_problem(create_problem_with("misfireStrategy", "IGNORE"), "misfireStrategy",
                 "misfireStrategy: unknown value 'IGNORE', expected one of DO_NOTHING, FIRE_ONCE_NOW");
  expect_problem(create_problem_with("executorRouteStrategy", "first"), "executorRouteStrategy",
                 "executorRouteStrategy: unknown value 'first', expected one of FIRST, LAST, ROUND, RANDOM, "
                 "CONSISTENT_HASH, LEAST_FREQUENTLY_USED, LEAST_RECENTLY_USED, FAILOVER, BUSYOVER, SHARDING_BROADCAST");
  expect_problem(create_problem_with("executorBlockStrategy", "QUEUE"), "executorBlockStrategy",
                 "executorBlockStrategy: unknown value 'QUEUE', expected one of SERIAL_EXECUTION, DISCARD_LATER, "
                 "COVER_EARLY");
  expect_problem(create_problem_with("glueType", "GLUE_RUBY"), "glueType",
                 "glueType: unknown value 'GLUE_RUBY', expected one of BEAN, GLUE_GROOVY, GLUE_SHELL, GLUE_PYTHON, "
                 "GLUE_PHP, GLUE_NODEJS, GLUE_POWERSHELL");
}

TEST(JobValidation, BeanJobsNeedAHandler) {
  expect_problem(create_problem_with("executorHandler", "  "), "executorHandler",
                 "executorHandler: is required for glueType BEAN (the handler's registered name)");
  auto body = valid_body();
  body["executorHandler"] = "";
  body["glueType"] = "GLUE_PYTHON";
  EXPECT_EQ(create_problem(body).status, 0);
  expect_problem(create_problem_with("executorHandler", std::string(256, 'h')), "executorHandler",
                 "executorHandler: at most 255 characters, got 256");
}

TEST(JobValidation, NumbersAreRangeChecked) {
  expect_problem(create_problem_with("executorTimeout", -1), "executorTimeout",
                 "executorTimeout: -1 is out of range 0-2147483647");
  expect_problem(create_problem_with("executorTimeout", 4'000'000'000LL), "executorTimeout",
                 "executorTimeout: 4000000000 is out of range 0-2147483647");
  expect_problem(create_problem_with("executorFailRetryCount", 101), "executorFailRetryCount",
                 "executorFailRetryCount: 101 is out of range 0-100");
  expect_problem(create_problem_with("executorFailRetryCount", -1), "executorFailRetryCount",
                 "executorFailRetryCount: -1 is out of range 0-100");
  expect_problem(create_problem_with("retryInterval", -5), "retryInterval", "retryInterval: -5 is out of range 0-2592000");
}

TEST(JobValidation, ExecutorParamIsAtMost64KiB) {
  expect_problem(create_problem_with("executorParam", std::string(64 * 1024 + 1, 'p')), "executorParam",
                 "executorParam: at most 65536 bytes");
}

TEST(JobValidation, GlueRemarkIsAtMost128Characters) {
  expect_problem(create_problem_with("glueRemark", std::string(129, 'r')), "glueRemark",
                 "glueRemark: at most 128 characters, got 129");
}

TEST(JobValidation, ChildJobIdAcceptsXxlJobsCommaSeparatedString) {
  auto body = valid_body();
  body["childJobId"] = "3, 4,";
  EXPECT_EQ(read_job_body(body.dump(), Job{}, JobBodyKind::kCreate).child_job_ids, (std::vector<std::int64_t>{3, 4}));
  body["childJobId"] = "";
  EXPECT_TRUE(read_job_body(body.dump(), Job{}, JobBodyKind::kCreate).child_job_ids.empty());
  expect_problem(create_problem_with("childJobId", "3,x"), "childJobId",
                 "childJobId: expected job ids separated by commas, got 'x'");
  expect_problem(create_problem_with("childJobId", "1,,2"), "childJobId",
                 "childJobId: an empty item in '1,,2'; expected job ids separated by single commas");
  expect_problem(create_problem_with("childJobId", ",1"), "childJobId",
                 "childJobId: an empty item in ',1'; expected job ids separated by single commas");
  expect_problem(create_problem_with("childJobId", {0}), "childJobId", "childJobId: 0 is not a job id");
  expect_problem(create_problem_with("childJobId", {3, 3}), "childJobId", "childJobId: job 3 is listed twice");
}

TEST(JobValidation, ReadOnlyAndUnknownFieldsAreRefused) {
  expect_problem(create_problem_with("triggerStatus", 1), "triggerStatus",
                 "triggerStatus: is read-only; use POST jobs/{id}/start or /stop");
  expect_problem(create_problem_with("id", 9), "id", "id: is read-only");
  expect_problem(create_problem_with("glueUpdatedAt", 0), "glueUpdatedAt", "glueUpdatedAt: is read-only");
  expect_problem(create_problem_with("cronExpression", "0 0 * * * ?"), "cronExpression", "cronExpression: unknown field");
}

TEST(JobValidation, UpdateKeepsFieldsLeftOut) {
  Job stored = read_job_body(valid_body().dump(), Job{}, JobBodyKind::kCreate);
  stored.id = 7;
  stored.author = "ops";
  stored.schedule_type = ScheduleType::kCron;
  stored.schedule_conf = "0 0 3 * * ?";
  stored.trigger_status = 1;
  stored.trigger_next_time = 123;
  Job updated = read_job_body(R"({"jobDesc":"renamed"})", stored, JobBodyKind::kUpdate);
  EXPECT_EQ(updated.job_desc, "renamed");
  EXPECT_EQ(updated.author, "ops");
  EXPECT_EQ(updated.schedule_conf, "0 0 3 * * ?");
  EXPECT_EQ(updated.trigger_status, 1);
  EXPECT_EQ(updated.trigger_next_time, 123);
  EXPECT_EQ(updated.id, 7);
}

TEST(JobValidation, UpdateWithANewScheduleTypeNeedsItsConfiguration) {
  Job stored = read_job_body(valid_body().dump(), Job{}, JobBodyKind::kCreate);
  stored.schedule_type = ScheduleType::kCron;
  stored.schedule_conf = "0 0 3 * * ?";
  auto p = problem_of([&] { validate_job(read_job_body(R"({"scheduleType":"FIX_RATE"})", stored, JobBodyKind::kUpdate)); });
  expect_problem(p, "scheduleConf", "scheduleConf: FIX_RATE needs a whole number of seconds from 1 to 315360000, got ''");
  Job none = read_job_body(R"({"scheduleType":"NONE"})", stored, JobBodyKind::kUpdate);
  EXPECT_EQ(none.schedule_conf, "");
}

TEST(JobValidation, UpdateRefusesScriptSource) {
  Job stored;
  for (const char* field : {"glueSource", "glueRemark"}) {
    auto p = problem_of([&] { read_job_body(json{{field, "x"}}.dump(), stored, JobBodyKind::kUpdate); });
    expect_problem(p, field, std::string(field) + ": script source changes through POST jobs/{id}/script, which keeps its history");
  }
}

TEST(JobValidation, MalformedBodiesAreRefused) {
  auto p = problem_of([] { read_job_body("{\"jobDesc\":", Job{}, JobBodyKind::kCreate); });
  EXPECT_EQ(p.status, 400);
  EXPECT_NE(p.message.find("malformed JSON"), std::string::npos);
  p = problem_of([] { read_job_body("[]", Job{}, JobBodyKind::kCreate); });
  EXPECT_EQ(p.message, "the body must be a JSON object, got array");
}

class JobReferences : public ::testing::Test {
 protected:
  void SetUp() override {
    Actor system{std::nullopt, "system", ""};
    Group g;
    g.title = "t";
    g.app_name = "team-a";
    team_a_ = stores_.groups.create(g, system).id;
    g.app_name = "team-b";
    team_b_ = stores_.groups.create(g, system).id;
    Job j;
    j.job_desc = "a job";
    j.executor_handler = "h";
    j.job_group = team_a_;
    job_a_ = stores_.jobs.create(j, system).id;
    j.job_group = team_b_;
    job_b_ = stores_.jobs.create(j, system).id;
    admin_.user.role = "admin";
    alice_.user.role = "normal";
    alice_.user.groups = {team_a_};
  }

  Problem check(const Job& job, std::optional<std::int64_t> self, const Principal& who) {
    return problem_of([&] { check_job_references(job, self, stores_.groups, stores_.jobs, who); });
  }

  testing::FakeClock clock_;
  testing::FakeStores fake_{clock_};
  Stores stores_ = fake_.stores();
  std::int64_t team_a_ = 0, team_b_ = 0, job_a_ = 0, job_b_ = 0;
  Principal admin_, alice_;
};

TEST_F(JobReferences, GroupMustExistAndBeTheUsers) {
  Job job;
  job.job_group = 99;
  expect_problem(check(job, std::nullopt, admin_), "jobGroup", "jobGroup: group 99 does not exist");
  job.job_group = team_b_;
  EXPECT_EQ(check(job, std::nullopt, admin_).status, 0);
  // Another team's group looks exactly like a missing one.
  expect_problem(check(job, std::nullopt, alice_), "jobGroup", "jobGroup: group " + std::to_string(team_b_) + " does not exist");
  job.job_group = team_a_;
  EXPECT_EQ(check(job, std::nullopt, alice_).status, 0);
}

TEST_F(JobReferences, ChildJobsMustExistBeVisibleAndNotTheJobItself) {
  Job job;
  job.job_group = team_a_;
  job.child_job_ids = {job_a_, 99};
  expect_problem(check(job, std::nullopt, admin_), "childJobId", "childJobId: job 99 does not exist");
  job.child_job_ids = {job_a_};
  expect_problem(check(job, job_a_, admin_), "childJobId",
                 "childJobId: job " + std::to_string(job_a_) + " cannot be its own child");
  job.child_job_ids = {job_b_};
  EXPECT_EQ(check(job, std::nullopt, admin_).status, 0);
  expect_problem(check(job, std::nullopt, alice_), "childJobId",
                 "childJobId: job " + std::to_string(job_b_) + " does not exist");
  job.child_job_ids = {job_a_};
  EXPECT_EQ(check(job, std::nullopt, alice_).status, 0);
}

TEST_F(JobReferences, AChildJobCycleIsRefusedNamingIt) {
  const Actor system{std::nullopt, "system", ""};
  Job job = *stores_.jobs.get(job_a_);
  Job c = job;
  c.id = 0;
  c.name.clear();
  const auto job_c = stores_.jobs.create(c, system).id;
  // a → c already; giving c the child a closes a → c → a.
  job.child_job_ids = {job_c};
  stores_.jobs.update(job, system);
  Job edit = *stores_.jobs.get(job_c);
  edit.child_job_ids = {job_a_};
  expect_problem(check(edit, job_c, admin_), "childJobId",
                 "childJobId: would make a cycle of child jobs: " + std::to_string(job_c) + " \u2192 " +
                     std::to_string(job_a_) + " \u2192 " + std::to_string(job_c) +
                     " (each one's success would fire the next, forever)");
  // The same for a normal user who sees both jobs.
  EXPECT_EQ(check(edit, job_c, alice_).field, "childJobId");
  // A chain that does not come back is fine, and a new job closes no cycle.
  edit.child_job_ids = {};
  EXPECT_EQ(check(edit, job_c, admin_).status, 0);
  Job fresh = *stores_.jobs.get(job_c);
  fresh.child_job_ids = {job_a_};
  EXPECT_EQ(check(fresh, std::nullopt, admin_).status, 0);
}

TEST_F(JobReferences, ACycleThroughAnotherGroupsJobsIsRefusedWithoutNamingThem) {
  const Actor system{std::nullopt, "system", ""};
  // b (team b) → a (team a); alice gives a the child b? She cannot see b. Give a a child in her
  // group that leads to b instead: a → a2, with a2 → b → a stored by the admin.
  Job a2 = *stores_.jobs.get(job_a_);
  a2.id = 0;
  a2.name.clear();
  a2.child_job_ids = {job_b_};
  const auto job_a2 = stores_.jobs.create(a2, system).id;
  Job b = *stores_.jobs.get(job_b_);
  b.child_job_ids = {job_a_};
  stores_.jobs.update(b, system);
  Job edit = *stores_.jobs.get(job_a_);
  edit.child_job_ids = {job_a2};
  auto refused = check(edit, job_a_, alice_);
  expect_problem(refused, "childJobId",
                 "childJobId: would make a cycle of child jobs through jobs of other groups (each one's success "
                 "would fire the next, forever)");
}

}  // namespace
}  // namespace cronwheel::admin
