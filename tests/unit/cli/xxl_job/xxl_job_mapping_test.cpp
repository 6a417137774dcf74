#include "cli/xxl_job/xxl_job_mapping.h"
#include "common/jobs_file/jobs_file.h"

#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cronwheel::cli::xxl_job {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;
using Kind = Finding::Kind;

GroupRow group(std::int64_t id, std::string app_name, std::int64_t address_type = 0, std::string addresses = "") {
  GroupRow row;
  row.id = id;
  row.app_name = std::move(app_name);
  row.title = "Title " + std::to_string(id);
  row.address_type = address_type;
  row.address_list = std::move(addresses);
  return row;
}

// A BEAN job in group 1 as XXL-JOB's console saves one with its defaults.
JobRow job(std::int64_t id, std::string desc = "", std::int64_t group_id = 1) {
  JobRow row;
  row.id = id;
  row.job_group = group_id;
  row.job_desc = desc.empty() ? "Job " + std::to_string(id) : std::move(desc);
  row.schedule_type = "NONE";
  row.misfire_strategy = "DO_NOTHING";
  row.executor_route_strategy = "FIRST";
  row.executor_handler = "handler" + std::to_string(id);
  row.executor_block_strategy = "SERIAL_EXECUTION";
  row.glue_type = "BEAN";
  return row;
}

XxlJobTables one_group(std::vector<JobRow> jobs) {
  XxlJobTables tables;
  tables.groups.push_back(group(1, "billing-app"));
  tables.jobs = std::move(jobs);
  return tables;
}

MappingResult map(const XxlJobTables& tables, bool keep_running = false, std::string zone = "Asia/Shanghai") {
  return map_xxl_job(tables, MappingOptions{std::move(zone), keep_running});
}

// The one job of group `app` named `name`.
json job_json(const MappingResult& result, const std::string& app, const std::string& name) {
  for (const auto& g : result.document.at("groups")) {
    if (g.at("appName") == app) return g.at("jobs").at(name);
  }
  ADD_FAILURE() << "no group " << app;
  return {};
}

// The findings other than the closing notes about users, stopped jobs and tokens.
std::vector<std::string> findings_about(const MappingResult& result, const std::string& subject_part) {
  std::vector<std::string> out;
  for (const auto& f : result.findings) {
    if (f.subject.find(subject_part) != std::string::npos) out.push_back(to_string(f));
  }
  return out;
}

TEST(XxlJobMapping, CarriesEveryFieldOfACronJob) {
  JobRow row = job(1, "Nightly invoices");
  row.author = "alice";
  row.alarm_email = "billing@example.com,oncall@example.com";
  row.schedule_type = "CRON";
  row.schedule_conf = "0 0 2 * * ?";
  row.misfire_strategy = "FIRE_ONCE_NOW";
  row.executor_route_strategy = "ROUND";
  row.executor_handler = "invoiceJobHandler";
  row.executor_param = "--region=eu";
  row.executor_block_strategy = "COVER_EARLY";
  row.executor_timeout = 600;
  row.executor_fail_retry_count = 2;
  row.glue_remark = "GLUE代码初始化";
  row.trigger_status = 1;
  const auto result = map(one_group({row}), /*keep_running=*/true);
  EXPECT_EQ(job_json(result, "billing-app", "nightly-invoices-1"),
            json::parse(R"({
              "jobDesc": "Nightly invoices", "author": "alice",
              "alarmEmail": "billing@example.com,oncall@example.com",
              "scheduleType": "CRON", "scheduleConf": "0 0 2 * * ?", "timezone": "Asia/Shanghai",
              "misfireStrategy": "FIRE_ONCE_NOW", "executorRouteStrategy": "ROUND",
              "executorHandler": "invoiceJobHandler", "executorParam": "--region=eu",
              "executorBlockStrategy": "COVER_EARLY", "executorTimeout": 600, "executorFailRetryCount": 2,
              "glueType": "BEAN", "glueRemark": "GLUE代码初始化", "running": true})"));
  EXPECT_THAT(findings_about(result, "job"), ::testing::IsEmpty());
  EXPECT_EQ(result.document.at("apiVersion"), "cronwheel/v1");
}

TEST(XxlJobMapping, NamesJobsBySlugOfDescriptionAndId) {
  struct Case {
    std::string desc;
    std::int64_t id;
    std::string name;
  };
  const Case cases[] = {
      {"Nightly invoices", 1, "nightly-invoices-1"},
      {"日终对账", 15, "job-15"},
      {"  --Hello__World!! ", 7, "hello-world-7"},
      {"ABC.def_ghi", 3, "abc-def-ghi-3"},
      {"导出 Report 2024", 9, "report-2024-9"},
      {"", 4, "job-4"},
      {std::string(200, 'a'), 123, std::string(96, 'a') + "-123"},
      {std::string(95, 'a') + " bbbb", 123, std::string(95, 'a') + "-123"},  // no '-' before the id
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.desc);
    const std::string name = job_name(c.desc, c.id);
    EXPECT_EQ(name, c.name);
    EXPECT_LE(name.size(), kMaxJobNameChars);
  }
}

TEST(XxlJobMapping, NamesStayUniqueWhenDescriptionsCollide) {
  const auto result = map(one_group({job(1, "Report"), job(2, "Report"), job(12, "Report 1"), job(21, "report")}));
  const auto& jobs = result.document.at("groups").at(0).at("jobs");
  std::vector<std::string> names;
  for (const auto& [name, unused] : jobs.items()) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("report-1", "report-1-12", "report-2", "report-21"));
}

TEST(XxlJobMapping, MapsScheduleTypesAndRefusesWhatCronwheelWouldNot) {
  struct Case {
    std::string type, conf;
    json expected;        // scheduleType, scheduleConf, timezone as mapped
    std::string finding;  // "" for none
  };
  const Case cases[] = {
      {"CRON", " 0 30 8 ? * MON ", {{"scheduleType", "CRON"}, {"scheduleConf", "0 30 8 ? * MON"}, {"timezone", "Asia/Shanghai"}}, ""},
      {"CRON", "0 0 0 * * ? *", {{"scheduleType", "CRON"}, {"scheduleConf", "0 0 0 * * ? *"}, {"timezone", "Asia/Shanghai"}}, ""},
      {"CRON", "0 60 * * * ?", {{"scheduleType", "NONE"}}, "review: job 1 (billing-app/job-1-1): cron '0 60 * * * ?' is refused ("},
      {"FIX_RATE", "30", {{"scheduleType", "FIX_RATE"}, {"scheduleConf", "30"}}, ""},
      {"FIX_DELAY", "10", {{"scheduleType", "FIX_DELAY"}, {"scheduleConf", "10"}}, ""},
      {"FIX_RATE", "0", {{"scheduleType", "NONE"}}, "review: job 1 (billing-app/job-1-1): FIX_RATE '0' is not a whole number of seconds from 1 to 315360000: imported with scheduleType NONE; imported stopped"},
      {"FIX_RATE", "1.5", {{"scheduleType", "NONE"}}, "FIX_RATE '1.5' is not a whole number"},
      {"FIX_RATE", "315360001", {{"scheduleType", "NONE"}}, "FIX_RATE '315360001' is not a whole number"},
      {"NONE", "leftover", {{"scheduleType", "NONE"}}, ""},
      {"WEEKLY", "MON", {{"scheduleType", "NONE"}}, "review: job 1 (billing-app/job-1-1): unknown schedule_type 'WEEKLY' (schedule_conf 'MON'): imported with scheduleType NONE; imported stopped"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type + " " + c.conf);
    JobRow row = job(1);
    row.schedule_type = c.type;
    row.schedule_conf = c.conf;
    row.trigger_status = 1;
    const auto result = map(one_group({row}), /*keep_running=*/true);
    const json mapped = job_json(result, "billing-app", "job-1-1");
    json schedule = json::object();
    for (const char* key : {"scheduleType", "scheduleConf", "timezone"}) {
      if (mapped.contains(key)) schedule[key] = mapped[key];
    }
    EXPECT_EQ(schedule, c.expected);
    const auto findings = findings_about(result, "job 1");
    if (c.finding.empty()) {
      EXPECT_THAT(findings, ::testing::IsEmpty());
      EXPECT_EQ(mapped.at("running"), true);
    } else {
      ASSERT_EQ(findings.size(), 1u);
      EXPECT_THAT(findings[0], HasSubstr(c.finding));
      EXPECT_EQ(mapped.at("running"), false);
    }
  }
}

TEST(XxlJobMapping, CarriesEveryKnownStrategyAsItIs) {
  const std::vector<std::string> routes = {"FIRST", "LAST", "ROUND", "RANDOM", "CONSISTENT_HASH",
                                           "LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED", "FAILOVER",
                                           "BUSYOVER", "SHARDING_BROADCAST"};
  const std::vector<std::string> blocks = {"SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"};
  const std::vector<std::string> misfires = {"DO_NOTHING", "FIRE_ONCE_NOW"};
  const std::vector<std::string> glues = {"BEAN", "GLUE_SHELL", "GLUE_PYTHON", "GLUE_NODEJS", "GLUE_PHP",
                                          "GLUE_POWERSHELL"};
  std::vector<JobRow> rows;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    JobRow row = job(static_cast<std::int64_t>(i + 1));
    row.executor_route_strategy = routes[i];
    row.executor_block_strategy = blocks[i % blocks.size()];
    row.misfire_strategy = misfires[i % misfires.size()];
    row.glue_type = glues[i % glues.size()];
    rows.push_back(row);
  }
  const auto result = map(one_group(rows));
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const auto id = std::to_string(i + 1);
    const json mapped = job_json(result, "billing-app", "job-" + id + "-" + id);
    EXPECT_EQ(mapped.at("executorRouteStrategy"), routes[i]);
    EXPECT_EQ(mapped.at("executorBlockStrategy"), blocks[i % blocks.size()]);
    EXPECT_EQ(mapped.at("misfireStrategy"), misfires[i % misfires.size()]);
    EXPECT_EQ(mapped.at("glueType"), glues[i % glues.size()]);
  }
  EXPECT_THAT(findings_about(result, "job "), ::testing::IsEmpty());
}

TEST(XxlJobMapping, UnknownValuesTakeTheDefaultAndStopTheJob) {
  struct Case {
    std::function<void(JobRow&)> change;
    std::string key;
    json value;
    std::string finding;  // "" when the value is XXL-JOB's own default and needs no review
  };
  const Case cases[] = {
      {[](JobRow& r) { r.executor_route_strategy = "WEIGHTED_ROUND"; }, "executorRouteStrategy", "FIRST",
       "review: job 1 (billing-app/job-1-1): unknown executor_route_strategy 'WEIGHTED_ROUND': imported as FIRST; imported stopped"},
      {[](JobRow& r) { r.executor_route_strategy = ""; }, "executorRouteStrategy", "FIRST",
       "unknown executor_route_strategy '': imported as FIRST"},
      {[](JobRow& r) { r.executor_route_strategy = "first"; }, "executorRouteStrategy", "FIRST",
       "unknown executor_route_strategy 'first'"},
      {[](JobRow& r) { r.executor_block_strategy = "QUEUE"; }, "executorBlockStrategy", "SERIAL_EXECUTION",
       "unknown executor_block_strategy 'QUEUE': imported as SERIAL_EXECUTION"},
      {[](JobRow& r) { r.executor_block_strategy = ""; }, "executorBlockStrategy", "SERIAL_EXECUTION", ""},
      {[](JobRow& r) { r.misfire_strategy = "FIRE_ALL"; }, "misfireStrategy", "DO_NOTHING",
       "unknown misfire_strategy 'FIRE_ALL': imported as DO_NOTHING"},
      {[](JobRow& r) { r.glue_type = "GLUE_RUBY"; }, "glueType", "BEAN", "unknown glue_type 'GLUE_RUBY': imported as BEAN"},
      {[](JobRow& r) { r.executor_timeout = -5; }, "executorTimeout", 0,
       "executor_timeout -5 is out of cronwheel's range 0-2147483647: imported as 0"},
      {[](JobRow& r) { r.executor_timeout = 3'000'000'000; }, "executorTimeout", 2147483647,
       "executor_timeout 3000000000 is out of cronwheel's range"},
      {[](JobRow& r) { r.executor_fail_retry_count = 150; }, "executorFailRetryCount", 100,
       "executor_fail_retry_count 150 is out of cronwheel's range 0-100: imported as 100"},
      {[](JobRow& r) { r.executor_fail_retry_count = -1; }, "executorFailRetryCount", 0,
       "executor_fail_retry_count -1 is out of cronwheel's range 0-100: imported as 0"},
      {[](JobRow& r) { r.job_desc = "  "; }, "jobDesc", "XXL-JOB job 1",
       "empty job_desc: described as 'XXL-JOB job 1'"},
  };
  for (const auto& c : cases) {
    JobRow row = job(1);
    c.change(row);
    row.trigger_status = 1;
    SCOPED_TRACE(c.finding);
    const auto result = map(one_group({row}), /*keep_running=*/true);
    const json mapped = job_json(result, "billing-app", job_name(row.job_desc, 1));
    EXPECT_EQ(mapped.at(c.key), c.value);
    const auto findings = findings_about(result, "job 1");
    if (c.finding.empty()) {
      EXPECT_THAT(findings, ::testing::IsEmpty());
      EXPECT_EQ(mapped.at("running"), true);
    } else {
      ASSERT_EQ(findings.size(), 1u);
      EXPECT_THAT(findings[0], HasSubstr(c.finding));
      EXPECT_EQ(mapped.at("running"), false);
    }
  }
}

TEST(XxlJobMapping, RunningOnlyWithKeepRunning) {
  JobRow running = job(1);
  running.trigger_status = 1;
  JobRow stopped = job(2);
  const auto tables = one_group({running, stopped});

  const auto kept = map(tables, /*keep_running=*/true);
  EXPECT_EQ(job_json(kept, "billing-app", "job-1-1").at("running"), true);
  EXPECT_EQ(job_json(kept, "billing-app", "job-2-2").at("running"), false);
  EXPECT_THAT(findings_about(kept, "jobs"), ::testing::IsEmpty());

  const auto safe = map(tables, /*keep_running=*/false);
  EXPECT_EQ(job_json(safe, "billing-app", "job-1-1").at("running"), false);
  EXPECT_EQ(job_json(safe, "billing-app", "job-2-2").at("running"), false);
  EXPECT_THAT(findings_about(safe, "jobs"), ElementsAre(HasSubstr("note: jobs: 1 jobs running in XXL-JOB are imported stopped")));
}

TEST(XxlJobMapping, GroovyJobsAreImportedStoppedForReview) {
  JobRow row = job(7, "Groovy task");
  row.glue_type = "GLUE_GROOVY";
  row.glue_source = "class Handler {}";
  row.trigger_status = 1;
  const auto result = map(one_group({row}), /*keep_running=*/true);
  const json mapped = job_json(result, "billing-app", "groovy-task-7");
  EXPECT_EQ(mapped.at("glueType"), "GLUE_GROOVY");
  EXPECT_EQ(mapped.at("glueSource"), "class Handler {}");
  EXPECT_EQ(mapped.at("running"), false);
  EXPECT_THAT(findings_about(result, "job 7"),
              ElementsAre(HasSubstr("review: job 7 (billing-app/groovy-task-7): GLUE_GROOVY runs on Java executors")));
}

TEST(XxlJobMapping, LeavesOutJobsTooLargeForCronwheel) {
  JobRow script = job(1);
  script.glue_type = "GLUE_SHELL";
  script.glue_source = std::string(1024 * 1024 + 1, 'x');
  JobRow param = job(2);
  param.executor_param = std::string(64 * 1024 + 1, 'p');
  JobRow fits = job(3);
  fits.glue_type = "GLUE_SHELL";
  fits.glue_source = std::string(1024 * 1024, 'x');
  fits.executor_param = std::string(64 * 1024, 'p');
  const auto result = map(one_group({script, param, fits}));
  EXPECT_EQ(result.document.at("groups").at(0).at("jobs").size(), 1u);
  EXPECT_TRUE(result.document.at("groups").at(0).at("jobs").contains("job-3-3"));
  EXPECT_THAT(findings_about(result, "job "),
              ElementsAre("not imported: job 1 (billing-app/job-1-1): its script is 1048577 bytes; cronwheel takes at most 1 MiB",
                          "not imported: job 2 (billing-app/job-2-2): its executor_param is 65537 bytes; cronwheel takes at most 64 KiB"));
}

GlueVersionRow version(std::int64_t id, std::int64_t job_id, std::string type, std::string source, std::string remark,
                       std::string add_time) {
  return GlueVersionRow{id, job_id, std::move(type), std::move(source), std::move(remark), std::move(add_time)};
}

TEST(XxlJobMapping, ScriptHistoryOldestFirstWithoutTheCurrentVersion) {
  JobRow row = job(4, "Weekly report");
  row.glue_type = "GLUE_SHELL";
  row.glue_source = "echo v3";
  row.glue_remark = "third";
  auto tables = one_group({row});
  tables.glue_versions = {
      version(5, 4, "GLUE_SHELL", "echo v3", "third", "2024-03-12 11:45:00"),
      version(3, 4, "GLUE_SHELL", "echo v2", "second ", "2024-02-11 10:30:00"),
      version(1, 4, "GLUE_SHELL", "echo v1", "first", "2024-01-10 09:00:00"),
      version(2, 4, "GLUE_PYTHON", "print(1)", "python", "2024-01-20 14:00:00"),
      version(6, 99, "GLUE_SHELL", "echo other", "another job's", "2024-01-01 00:00:00"),
  };
  const auto result = map(tables);
  // Asia/Shanghai is UTC+8 all year: 2024-01-10 09:00:00 there is 01:00:00 UTC.
  EXPECT_EQ(job_json(result, "billing-app", "weekly-report-4").at("glueHistory"), json::parse(R"([
      {"glueSource": "echo v1", "glueRemark": "first", "createdAt": 1704848400000},
      {"glueSource": "echo v2", "glueRemark": "second", "createdAt": 1707618600000}])"));
  EXPECT_THAT(findings_about(result, "job 4"),
              ElementsAre("not imported: job 4 (billing-app/weekly-report-4) script version 2: saved as 'GLUE_PYTHON' "
                          "while the job is GLUE_SHELL: the history keeps versions of the job's current type only"));
}

TEST(XxlJobMapping, ScriptHistoryKeepsTheNewestWhenItIsNotTheCurrentVersion) {
  JobRow row = job(4);
  row.glue_type = "GLUE_PYTHON";
  row.glue_source = "print(3)";
  auto tables = one_group({row});
  tables.glue_versions = {version(1, 4, "GLUE_PYTHON", "print(2)", "two", "2024-01-10 09:00:00")};
  const auto result = map(tables);
  EXPECT_EQ(job_json(result, "billing-app", "job-4-4").at("glueHistory").size(), 1u);
}

TEST(XxlJobMapping, ScriptVersionTimesAreReadInTheAdminsZone) {
  struct Case {
    std::string add_time;
    std::int64_t created_at;
    bool noted;
  };
  const Case cases[] = {
      {"2024-07-01 12:00:00", 1719849600000, false},  // EDT, UTC-4
      {"2024-11-03 01:30:00", 1730611800000, false},  // twice that night: the first, EDT
      {"2024-03-10 02:30:00", 1710054000000, false},  // in the gap: moved to 03:00 EDT
      {"0000-00-00 00:00:00", 0, true},               // MySQL's zero date
      {"", 0, true},
      {"2024-02-30 10:00:00", 0, true},
      {"2024-01-01 24:00:00", 0, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.add_time);
    JobRow row = job(4);
    row.glue_type = "GLUE_SHELL";
    row.glue_source = "current";
    auto tables = one_group({row});
    tables.glue_versions = {version(1, 4, "GLUE_SHELL", "old", "old", c.add_time)};
    const auto result = map(tables, false, "America/New_York");
    EXPECT_EQ(job_json(result, "billing-app", "job-4-4").at("glueHistory").at(0).at("createdAt"), c.created_at);
    EXPECT_EQ(findings_about(result, "script version 1").size(), c.noted ? 1u : 0u);
  }
}

TEST(XxlJobMapping, ChildJobsByNameInTheirGroupOrWithTheirAppName) {
  XxlJobTables tables;
  tables.groups = {group(1, "billing-app"), group(2, "reports.java"), group(3, "ops")};
  JobRow parent = job(1, "Parent");
  parent.child_jobid = " 2, 3 ,2,x,999,,4";
  parent.trigger_status = 1;
  tables.jobs = {parent, job(2, "Same group"), job(3, "Other group", 2), job(4, "In ops", 3)};
  const auto result = map(tables, /*keep_running=*/true);
  const json mapped = job_json(result, "billing-app", "parent-1");
  EXPECT_EQ(mapped.at("childJobs"), json::parse(R"(["same-group-2", "reports.java/other-group-3"])"));
  EXPECT_EQ(mapped.at("running"), false);  // a child is missing now: reviewed
  EXPECT_THAT(findings_about(result, "job 1"),
              ElementsAre("note: job 1 (billing-app/parent-1): child_jobid item 'x' is not a job id: left out",
                          "note: job 1 (billing-app/parent-1): child job 999 does not exist: left out",
                          "review: job 1 (billing-app/parent-1): child job 4 is not imported: left out of childJobs; "
                          "imported stopped"));
}

TEST(XxlJobMapping, DropsTheEdgeThatClosesAChildJobCycle) {
  JobRow a = job(1, "A");
  a.child_jobid = "2";
  JobRow b = job(2, "B");
  b.child_jobid = "3";
  JobRow c = job(3, "C");
  c.child_jobid = "1,4";
  JobRow d = job(4, "D");
  d.child_jobid = "4";
  const auto result = map(one_group({a, b, c, d}));
  EXPECT_EQ(job_json(result, "billing-app", "a-1").at("childJobs"), json::parse(R"(["b-2"])"));
  EXPECT_EQ(job_json(result, "billing-app", "b-2").at("childJobs"), json::parse(R"(["c-3"])"));
  EXPECT_EQ(job_json(result, "billing-app", "c-3").at("childJobs"), json::parse(R"(["d-4"])"));
  EXPECT_FALSE(job_json(result, "billing-app", "d-4").contains("childJobs"));
  EXPECT_THAT(findings_about(result, "job "),
              ElementsAre("review: job 3 (billing-app/c-3): child job 1 closes a cycle (a-1 -> b-2 -> c-3 -> a-1), "
                          "which cronwheel refuses: left out of childJobs; imported stopped",
                          "review: job 4 (billing-app/d-4): child job 4 closes a cycle (d-4 -> d-4), which cronwheel "
                          "refuses: left out of childJobs; imported stopped"));
}

TEST(XxlJobMapping, FollowsLongChildChainsWithoutRecursion) {
  std::vector<JobRow> rows;
  constexpr int kJobs = 20'000;
  for (int i = 1; i <= kJobs; ++i) {
    JobRow row = job(i, "J");
    row.child_jobid = std::to_string(i % kJobs + 1);  // the last closes a ring back to the first
    rows.push_back(row);
  }
  const auto result = map(one_group(rows));
  EXPECT_THAT(findings_about(result, "job "), ElementsAre(HasSubstr("review: job 20000 (billing-app/j-20000): child job 1 closes a cycle (j-1 -> j-2")));
}

TEST(XxlJobMapping, GroupsWithTheirAddressesAndTheAppNamesCronwheelRefuses) {
  XxlJobTables tables;
  tables.groups = {group(4, "reports.java", 1, " http://127.0.0.1:19999/, ,http://127.0.0.1:19998/"),
                   group(1, "billing-app", 0, "http://10.1.2.3:9999/"),
                   group(3, "ops"),
                   group(5, "-bad-start"),
                   group(6, "billing-app", 1, "http://10.0.0.9:9999/"),
                   group(7, "manual-empty", 1, "")};
  tables.groups[1].title = "";
  tables.jobs = {job(1, "In billing", 1), job(2, "In ops", 3), job(3, "In the second billing", 6), job(4, "Nowhere", 42)};
  const auto result = map(tables);
  EXPECT_EQ(result.document.at("groups"), json::parse(R"([
      {"appName": "billing-app", "addressType": "automatic",
       "jobs": {"in-billing-1": {"jobDesc": "In billing", "scheduleType": "NONE", "misfireStrategy": "DO_NOTHING",
                                 "executorRouteStrategy": "FIRST", "executorHandler": "handler1",
                                 "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": 0,
                                 "executorFailRetryCount": 0, "glueType": "BEAN", "running": false},
                "in-the-second-billing-3": {"jobDesc": "In the second billing", "scheduleType": "NONE",
                                 "misfireStrategy": "DO_NOTHING", "executorRouteStrategy": "FIRST",
                                 "executorHandler": "handler3", "executorBlockStrategy": "SERIAL_EXECUTION",
                                 "executorTimeout": 0, "executorFailRetryCount": 0, "glueType": "BEAN",
                                 "running": false}}},
      {"appName": "reports.java", "title": "Title 4", "addressType": "manual",
       "addressList": ["http://127.0.0.1:19999/", "http://127.0.0.1:19998/"], "jobs": {}},
      {"appName": "manual-empty", "title": "Title 7", "addressType": "manual", "addressList": [], "jobs": {}}])"));
  EXPECT_THAT(findings_about(result, "group "),
              ElementsAre(HasSubstr("not imported: group 3 'ops': cronwheel app names are 4-64 letters"),
                          HasSubstr("not imported: group 5 '-bad-start': cronwheel app names"),
                          "note: group 6 'billing-app': shares its app name with group 1: their jobs are imported "
                          "into one group, with that group's title and addresses",
                          "note: group 7 'manual-empty': a manual group with no address: no run can start"));
  EXPECT_THAT(findings_about(result, "job "),
              ElementsAre("not imported: job 2 'In ops': its group 3 is not imported",
                          "not imported: job 4 'Nowhere': its group 42 does not exist"));
}

TEST(XxlJobMapping, UsersWithRolesAndGroupsButNoPasswords) {
  XxlJobTables tables;
  tables.groups = {group(1, "billing-app"), group(2, "reports.java"), group(3, "ops")};
  tables.users = {UserRow{1, "admin", 1, ""},
                  UserRow{2, "carol", 0, "1,2,1"},
                  UserRow{3, "dave", 0, "2, 3,42,x"},
                  UserRow{4, "erin", 1, "1"},
                  UserRow{5, "bad name", 0, ""},
                  UserRow{6, "frank", 7, "2"}};
  const auto result = map(tables);
  EXPECT_EQ(result.document.at("users"), json::parse(R"([
      {"username": "admin", "role": "admin"},
      {"username": "carol", "role": "normal", "groups": ["billing-app", "reports.java"]},
      {"username": "dave", "role": "normal", "groups": ["reports.java"]},
      {"username": "erin", "role": "admin"},
      {"username": "frank", "role": "normal", "groups": ["reports.java"]}])"));
  EXPECT_THAT(findings_about(result, "user"),
              ElementsAre("review: user 3 'dave': permission '3' names a group that is not imported: left out of its groups",
                          "review: user 3 'dave': permission '42' is no group: left out of its groups",
                          "review: user 3 'dave': permission 'x' is no group: left out of its groups",
                          "not imported: user 5 'bad name': cronwheel user names are 1-64 letters, digits, '.', '_', '@' or '-'",
                          "review: user 6 'frank': unknown role 7: imported as a normal user",
                          HasSubstr("note: users: 5 users are created without passwords")));
}

TEST(XxlJobMapping, NoUsersKeyWithoutUsers) {
  const auto result = map(one_group({}));
  EXPECT_FALSE(result.document.contains("users"));
  EXPECT_THAT(findings_about(result, "users"), ::testing::IsEmpty());
}

TEST(XxlJobMapping, FindingsQuoteValuesOnOneLine) {
  XxlJobTables tables;
  tables.groups = {group(1, "a\nb")};
  const auto result = map(tables);
  ASSERT_FALSE(result.findings.empty());
  EXPECT_EQ(result.findings[0].subject, "group 1 'a?b'");
}

TEST(XxlJobMapping, WhatItMapsIsAValidJobsFileEvenFromBadRows) {
  XxlJobTables tables;
  tables.groups = {group(1, "billing-app", 0, "http://10.1.2.3:9999/"), group(2, "reports.java", 1, ""),
                   group(3, "ops"), group(4, "billing-app", 1, "http://x:1/")};
  tables.groups[0].title = "";
  std::vector<JobRow> rows;
  auto add = [&](std::function<void(JobRow&)> change) {
    JobRow row = job(static_cast<std::int64_t>(rows.size() + 1), "", rows.size() % 2 == 0 ? 1 : 2);
    change(row);
    rows.push_back(row);
  };
  add([](JobRow& r) { r.schedule_type = "CRON"; r.schedule_conf = "bad"; });
  add([](JobRow& r) { r.schedule_type = "FIX_RATE"; r.schedule_conf = "-3"; });
  add([](JobRow& r) { r.executor_route_strategy = "?"; r.executor_block_strategy = "?"; r.misfire_strategy = "?"; });
  add([](JobRow& r) { r.glue_type = "GLUE_GROOVY"; r.trigger_status = 1; });
  add([](JobRow& r) { r.glue_type = "?"; r.executor_timeout = -1; r.executor_fail_retry_count = 1000; });
  add([](JobRow& r) { r.job_desc = " "; r.child_jobid = "1,2,3,5,6,77,x"; });
  add([](JobRow& r) { r.child_jobid = "6"; r.author = " "; r.alarm_email = " "; });
  add([](JobRow& r) { r.job_group = 3; });
  add([](JobRow& r) { r.job_group = 4; r.glue_type = "GLUE_SHELL"; r.glue_source = "echo"; });
  tables.jobs = rows;
  tables.glue_versions = {version(1, 9, "GLUE_SHELL", "echo 0", "", "bad"),
                          version(2, 9, "GLUE_PYTHON", "print()", "x", "2024-01-01 00:00:00")};
  tables.users = {UserRow{1, "admin", 1, "1,2,3"}, UserRow{2, "u", 9, "3,4,x"}, UserRow{3, "bad name", 0, ""}};
  for (bool keep_running : {false, true}) {
    const auto result = map(tables, keep_running);
    try {
      common::jobs_file::check_json(result.document);
    } catch (const common::jobs_file::JobsFileError& error) {
      ADD_FAILURE() << to_string(error.problem()) << "\n" << result.document.dump(2);
    }
  }
}

TEST(XxlJobMapping, RefusesAnUnknownZone) {
  EXPECT_THROW(map(one_group({}), false, "Mars/Base"), std::invalid_argument);
  EXPECT_THROW(map(one_group({}), false, ""), std::invalid_argument);
}

}  // namespace
}  // namespace cronwheel::cli::xxl_job
