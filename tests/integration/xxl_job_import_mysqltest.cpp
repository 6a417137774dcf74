// `cronwheel import xxl-job` against a real MariaDB server: the one at CRONWHEEL_TEST_MYSQL_URL
// (scripts/test.sh starts it; its user may create databases). Each test loads XXL-JOB 2.4.1's
// tables (tests/fixtures/xxl_job/tables.sql) and the fixture into a database of its own, and
// drops it after.

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mysql.h>
#include <unistd.h>

#include "cli/xxl_job/mysql_url.h"
#include "cli/xxl_job/xxl_job_import.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::cli::xxl_job {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string fixture(const std::string& name) {
  return read_file(std::string(CRONWHEEL_SOURCE_DIR) + "/tests/fixtures/xxl_job/" + name);
}

struct MysqlCloser {
  void operator()(MYSQL* m) const noexcept { mysql_close(m); }
};

// A database of the test's own on the server at CRONWHEEL_TEST_MYSQL_URL.
class XxlJobImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* url = std::getenv("CRONWHEEL_TEST_MYSQL_URL");
    if (url == nullptr || *url == '\0') {
      GTEST_SKIP() << "CRONWHEEL_TEST_MYSQL_URL is not set: start a MariaDB server (scripts/lib/mariadb.sh, as "
                      "scripts/test.sh does) and set it to mysql://USER:PASSWORD@127.0.0.1:PORT/DB";
    }
    server_url_ = url;
    server_ = parse_mysql_url(server_url_);
    static std::atomic<int> counter{0};
    database_ = "xxl_import_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    admin_.reset(connect(""));
    run("DROP DATABASE IF EXISTS " + database_ + "; CREATE DATABASE " + database_ + " CHARACTER SET utf8mb4");
  }

  void TearDown() override {
    if (admin_) run("DROP DATABASE IF EXISTS " + database_);
  }

  // Connects as the test server's user, to `database` ("" for none), allowing several
  // statements in one query.
  MYSQL* connect(const std::string& database) {
    MYSQL* m = mysql_init(nullptr);
    const unsigned protocol = MYSQL_PROTOCOL_TCP;
    mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &protocol);
    mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (mysql_real_connect(m, server_.host.c_str(), server_.user.c_str(), server_.password.c_str(),
                           database.empty() ? nullptr : database.c_str(), static_cast<unsigned>(server_.port),
                           nullptr, CLIENT_MULTI_STATEMENTS) == nullptr) {
      const std::string error = mysql_error(m);
      mysql_close(m);
      throw std::runtime_error("test setup: cannot connect: " + error);
    }
    return m;
  }

  // Runs `sql` (one or more statements) in the test's database, or on the server when the
  // database is not chosen yet.
  void run(const std::string& sql, bool in_database = false) {
    std::unique_ptr<MYSQL, MysqlCloser> own;
    MYSQL* m = admin_.get();
    if (in_database) {
      own.reset(connect(database_));
      m = own.get();
    }
    if (mysql_real_query(m, sql.data(), sql.size()) != 0) {
      throw std::runtime_error(std::string("test setup: ") + mysql_error(m));
    }
    do {
      if (MYSQL_RES* result = mysql_store_result(m)) mysql_free_result(result);
      if (mysql_errno(m) != 0) throw std::runtime_error(std::string("test setup: ") + mysql_error(m));
    } while (mysql_next_result(m) == 0);
    if (mysql_errno(m) != 0) throw std::runtime_error(std::string("test setup: ") + mysql_error(m));
  }

  void load_fixture() {
    run(fixture("tables.sql"), true);
    run(fixture("fixture.sql"), true);
  }

  // The server's URL with the test's database.
  std::string url() const { return server_url_.substr(0, server_url_.rfind('/') + 1) + database_; }

  ImportResult import(bool keep_running = false, ReadOptions read = {}) {
    ImportOptions options;
    options.mysql_url = url();
    options.zone = "Asia/Shanghai";
    options.keep_running = keep_running;
    options.read = read;
    return import_xxl_job(options);
  }

  std::string import_error(const std::string& mysql_url, ReadOptions read = {}) {
    ImportOptions options;
    options.mysql_url = mysql_url;
    options.zone = "Asia/Shanghai";
    options.read = read;
    try {
      import_xxl_job(options);
    } catch (const XxlJobImportError& error) {
      return error.what();
    }
    ADD_FAILURE() << "imported";
    return "";
  }

  std::string server_url_;
  MysqlUrl server_;
  std::string database_;
  std::unique_ptr<MYSQL, MysqlCloser> admin_;
};

const json& group_of(const ImportResult& result, const std::string& app) {
  for (const auto& group : result.document.at("groups")) {
    if (group.at("appName") == app) return group;
  }
  throw std::runtime_error("no group " + app);
}

std::vector<std::string> lines(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& finding : findings) out.push_back(to_string(finding));
  return out;
}

TEST_F(XxlJobImportTest, ImportsTheFixtureFieldByField) {
  load_fixture();
  const ImportResult result = import();
  const json& doc = result.document;
  EXPECT_EQ(doc.at("apiVersion"), "cronwheel/v1");

  std::vector<std::string> apps;
  for (const auto& group : doc.at("groups")) apps.push_back(group.at("appName"));
  EXPECT_THAT(apps, ElementsAre("billing-app", "reports.java", "e2e-shell"));  // 'ops' is too short

  const json& billing = group_of(result, "billing-app");
  EXPECT_EQ(billing.at("title"), "Billing");
  EXPECT_EQ(billing.at("addressType"), "automatic");
  EXPECT_FALSE(billing.contains("addressList"));
  const json& reports = group_of(result, "reports.java");
  EXPECT_EQ(reports.at("addressType"), "manual");
  EXPECT_EQ(reports.at("addressList"), json::parse(R"(["http://127.0.0.1:19999/", "http://127.0.0.1:19998/"])"));

  std::vector<std::string> billing_jobs;
  for (const auto& [name, unused] : billing.at("jobs").items()) billing_jobs.push_back(name);
  EXPECT_THAT(billing_jobs, ElementsAre("job-15", "nightly-invoices-1", "rate-poller-3", "reconcile-ledger-2",
                                        "weighted-route-11"));

  EXPECT_EQ(billing.at("jobs").at("nightly-invoices-1"), json::parse(R"({
      "jobDesc": "Nightly invoices", "author": "alice",
      "alarmEmail": "billing@example.com,oncall@example.com",
      "scheduleType": "CRON", "scheduleConf": "0 0 2 * * ?", "timezone": "Asia/Shanghai",
      "misfireStrategy": "DO_NOTHING", "executorRouteStrategy": "FIRST",
      "executorHandler": "invoiceJobHandler", "executorParam": "--region=eu",
      "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": 600, "executorFailRetryCount": 2,
      "glueType": "BEAN", "glueRemark": "GLUE代码初始化",
      "childJobs": ["reconcile-ledger-2", "reports.java/export-to-warehouse-5"], "running": false})"));
  EXPECT_EQ(billing.at("jobs").at("rate-poller-3"), json::parse(R"({
      "jobDesc": "Rate poller", "author": "bob", "scheduleType": "FIX_RATE", "scheduleConf": "30",
      "misfireStrategy": "FIRE_ONCE_NOW", "executorRouteStrategy": "ROUND", "executorHandler": "ratePollHandler",
      "executorParam": "EUR,USD", "executorBlockStrategy": "COVER_EARLY", "executorTimeout": 25,
      "executorFailRetryCount": 1, "glueType": "BEAN", "glueRemark": "GLUE代码初始化", "running": false})"));
  EXPECT_EQ(billing.at("jobs").at("job-15"), json::parse(R"({
      "jobDesc": "日终对账", "scheduleType": "NONE", "misfireStrategy": "DO_NOTHING",
      "executorRouteStrategy": "FIRST", "executorHandler": "dayEndHandler",
      "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": 0, "executorFailRetryCount": 0,
      "glueType": "BEAN", "running": false})"));
  EXPECT_EQ(billing.at("jobs").at("reconcile-ledger-2").at("executorRouteStrategy"), "LAST");
  EXPECT_EQ(billing.at("jobs").at("reconcile-ledger-2").at("executorBlockStrategy"), "DISCARD_LATER");
  EXPECT_FALSE(billing.at("jobs").at("reconcile-ledger-2").contains("childJobs"));  // 12 is in 'ops'
  EXPECT_EQ(billing.at("jobs").at("weighted-route-11").at("executorRouteStrategy"), "FIRST");

  EXPECT_EQ(reports.at("jobs").at("weekly-report-4"), json::parse(R"({
      "jobDesc": "Weekly report", "author": "carol", "alarmEmail": "reports@example.com",
      "scheduleType": "CRON", "scheduleConf": "0 30 8 ? * MON", "timezone": "Asia/Shanghai",
      "misfireStrategy": "DO_NOTHING", "executorRouteStrategy": "RANDOM", "executorParam": "weekly",
      "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": 120, "executorFailRetryCount": 0,
      "glueType": "GLUE_SHELL", "glueSource": "#!/bin/bash\necho \"weekly report for $1\"\n",
      "glueRemark": "third version",
      "glueHistory": [
        {"glueSource": "#!/bin/bash\necho \"report\"\n", "glueRemark": "first version", "createdAt": 1704848400000},
        {"glueSource": "#!/bin/bash\necho \"weekly report\"\n", "glueRemark": "second version",
         "createdAt": 1707618600000}],
      "running": false})"));
  const json& export_job = reports.at("jobs").at("export-to-warehouse-5");
  EXPECT_EQ(export_job.at("glueType"), "GLUE_PYTHON");
  EXPECT_EQ(export_job.at("executorRouteStrategy"), "CONSISTENT_HASH");
  EXPECT_EQ(export_job.at("executorFailRetryCount"), 3);
  // 2024-03-01 08:00:00 in Shanghai.
  EXPECT_EQ(export_job.at("glueHistory"), json::parse(R"([
      {"glueSource": "print(\"exported\")\n", "glueRemark": "initial export", "createdAt": 1709251200000}])"));
  EXPECT_EQ(export_job.at("childJobs"), json::parse(R"(["cleanup-6"])"));
  EXPECT_FALSE(reports.at("jobs").at("cleanup-6").contains("childJobs"));  // 5 closes a cycle, 999 is none
  EXPECT_EQ(reports.at("jobs").at("groovy-task-7").at("glueType"), "GLUE_GROOVY");
  EXPECT_EQ(reports.at("jobs").at("failover-handler-8").at("executorRouteStrategy"), "FAILOVER");
  EXPECT_EQ(reports.at("jobs").at("busy-handler-9").at("executorRouteStrategy"), "BUSYOVER");
  EXPECT_EQ(reports.at("jobs").at("broadcast-refresh-10").at("executorRouteStrategy"), "SHARDING_BROADCAST");
  EXPECT_EQ(reports.at("jobs").at("groovy-task-7").at("executorRouteStrategy"), "LEAST_RECENTLY_USED");
  EXPECT_EQ(reports.at("jobs").at("cleanup-6").at("executorRouteStrategy"), "LEAST_FREQUENTLY_USED");

  const json& e2e = group_of(result, "e2e-shell");
  EXPECT_EQ(e2e.at("jobs").at("echo-every-three-seconds-13"), json::parse(R"({
      "jobDesc": "Echo every three seconds", "author": "e2e", "scheduleType": "CRON",
      "scheduleConf": "*/3 * * * * ?", "timezone": "Asia/Shanghai", "misfireStrategy": "DO_NOTHING",
      "executorRouteStrategy": "FIRST", "executorParam": "three", "executorBlockStrategy": "SERIAL_EXECUTION",
      "executorTimeout": 10, "executorFailRetryCount": 0, "glueType": "GLUE_SHELL",
      "glueSource": "#!/bin/sh\necho \"cronwheel import e2e: cron $1\"\n", "glueRemark": "echo a line",
      "running": false})"));
  EXPECT_EQ(e2e.at("jobs").at("echo-at-a-fixed-rate-14").at("scheduleConf"), "5");

  EXPECT_EQ(doc.at("users"), json::parse(R"([
      {"username": "admin", "role": "admin"},
      {"username": "carol", "role": "normal", "groups": ["billing-app", "reports.java"]},
      {"username": "dave", "role": "normal", "groups": ["reports.java"]},
      {"username": "erin", "role": "admin"}])"));

  // In the order of the rows they are about: groups, jobs (by id, their children after them all),
  // users, then the notes. Job 12 runs in XXL-JOB but is not imported: 7 running jobs are stopped.
  EXPECT_THAT(lines(result.findings), ElementsAre(
      StartsWith("not imported: group 3 'ops': cronwheel app names are 4-64 letters"),
      "not imported: job 4 (reports.java/weekly-report-4) script version 2: saved as 'GLUE_PYTHON' while the job is "
      "GLUE_SHELL: the history keeps versions of the job's current type only",
      "review: job 7 (reports.java/groovy-task-7): GLUE_GROOVY runs on Java executors (xxl-job-core) only; "
      "cronwheel's executor refuses it: start it only where its group's executors are Java ones; imported stopped",
      "review: job 11 (billing-app/weighted-route-11): unknown executor_route_strategy 'WEIGHTED_ROUND': imported "
      "as FIRST; imported stopped",
      "not imported: job 12 'Disk check': its group 3 is not imported",
      "review: job 2 (billing-app/reconcile-ledger-2): child job 12 is not imported: left out of childJobs; "
      "imported stopped",
      "note: job 6 (reports.java/cleanup-6): child job 999 does not exist: left out",
      "review: job 6 (reports.java/cleanup-6): child job 5 closes a cycle (export-to-warehouse-5 -> cleanup-6 -> "
      "export-to-warehouse-5), which cronwheel refuses: left out of childJobs; imported stopped",
      "review: user 3 'dave': permission '3' names a group that is not imported: left out of its groups",
      "review: user 3 'dave': permission '42' is no group: left out of its groups",
      HasSubstr("note: users: 4 users are created without passwords"),
      HasSubstr("note: jobs: 7 jobs running in XXL-JOB are imported stopped"),
      HasSubstr("note: groups: executor access tokens are not in the document")));
}

TEST_F(XxlJobImportTest, DocumentIsAValidJobsFileThatSurvivesYaml) {
  load_fixture();
  for (bool keep_running : {false, true}) {
    const ImportResult result = import(keep_running);
    try {
      common::jobs_file::check_json(result.document);
      // What `import -o FILE` writes reads back as the same document.
      const std::string yaml = common::jobs_file::to_yaml(result.document);
      EXPECT_EQ(common::jobs_file::parse_yaml(yaml, "xxl-jobs.yaml", {}).document, result.document) << yaml;
    } catch (const common::jobs_file::JobsFileError& error) {
      ADD_FAILURE() << to_string(error.problem());
    }
  }
}

TEST_F(XxlJobImportTest, KeepRunningStartsOnlyJobsRunningInXxlJobThatNeedNoReview) {
  load_fixture();
  const ImportResult result = import(/*keep_running=*/true);
  std::set<std::string> running;
  for (const auto& group : result.document.at("groups")) {
    for (const auto& [name, job] : group.at("jobs").items()) {
      if (job.at("running") == true) running.insert(group.at("appName").get<std::string>() + "/" + name);
    }
  }
  // Running in XXL-JOB: 1, 3, 4, 7 (Groovy: reviewed), 11 (unknown route: reviewed), 12 (not
  // imported), 13, 14.
  EXPECT_EQ(running, (std::set<std::string>{"billing-app/nightly-invoices-1", "billing-app/rate-poller-3",
                                            "reports.java/weekly-report-4", "e2e-shell/echo-every-three-seconds-13",
                                            "e2e-shell/echo-at-a-fixed-rate-14"}));
  for (const auto& line : lines(result.findings)) EXPECT_THAT(line, ::testing::Not(HasSubstr("imported stopped, so")));
}

TEST_F(XxlJobImportTest, RefusesADatabaseWithoutXxlJobTables) {
  EXPECT_EQ(import_error(url()), "not an XXL-JOB 2.4 database: table xxl_job_group missing");
  run("CREATE TABLE xxl_job_group (id INT PRIMARY KEY, app_name VARCHAR(64), title VARCHAR(12), "
      "address_type TINYINT, address_list TEXT)",
      true);
  EXPECT_EQ(import_error(url()), "not an XXL-JOB 2.4 database: table xxl_job_info missing");
}

TEST_F(XxlJobImportTest, RefusesAnOlderXxlJobSchema) {
  load_fixture();
  // XXL-JOB before 2.3 had job_cron instead of schedule_type and schedule_conf.
  run("ALTER TABLE xxl_job_info DROP COLUMN schedule_type", true);
  EXPECT_THAT(import_error(url()), StartsWith("not an XXL-JOB 2.4 database: xxl_job_info lacks a column ("));
}

TEST_F(XxlJobImportTest, WrongPasswordIsAccessDeniedWithoutThePassword) {
  const std::string bad = "mysql://" + server_.user + ":not-the-password-42@" + server_.host + ":" +
                          std::to_string(server_.port) + "/" + database_;
  const std::string error = import_error(bad);
  EXPECT_THAT(error, StartsWith("access denied at mysql://" + server_.user + "@" + server_.host + ":" +
                                std::to_string(server_.port) + "/" + database_ + " (wrong user or password)"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("not-the-password-42")));
}

TEST_F(XxlJobImportTest, NamesAMissingDatabase) {
  const std::string missing = server_url_.substr(0, server_url_.rfind('/') + 1) + "no_such_database_xyz";
  EXPECT_THAT(import_error(missing), StartsWith("no database 'no_such_database_xyz' at mysql://"));
}

TEST_F(XxlJobImportTest, NamesAServerThatDoesNotAnswer) {
  // Port 1 (tcpmux): nothing listens there on a test machine, and only root could.
  ReadOptions quick;
  quick.connect_timeout_seconds = 2;
  const std::string closed = "mysql://u:p@127.0.0.1:1/xxl_job";
  EXPECT_THAT(import_error(closed, quick), StartsWith("cannot connect to mysql://u@127.0.0.1:1/xxl_job: "));
}

TEST_F(XxlJobImportTest, RefusesMoreRowsThanTheLimit) {
  load_fixture();
  ReadOptions small;
  small.max_jobs = 14;  // the fixture has 15
  EXPECT_EQ(import_error(url(), small), "xxl_job_info has more than 14 rows, more than one import takes");
  small.max_jobs = 15;
  EXPECT_NO_THROW(import(false, small));
}

TEST_F(XxlJobImportTest, RefusesMoreBytesThanTheLimit) {
  load_fixture();
  ReadOptions small;
  small.max_total_bytes = 1000;
  EXPECT_THAT(import_error(url(), small), StartsWith("the database holds more than 1000 bytes"));
}

TEST_F(XxlJobImportTest, RefusesTextThatIsNotUtf8) {
  load_fixture();
  run("ALTER TABLE xxl_job_group MODIFY app_name VARBINARY(64) NOT NULL; "
      "UPDATE xxl_job_group SET app_name = X'6170FF70' WHERE id = 2",
      true);
  EXPECT_EQ(import_error(url()), "xxl_job_group row 2: column app_name is not UTF-8");
}

TEST_F(XxlJobImportTest, RefusesABadUrlOrZoneBeforeConnecting) {
  EXPECT_EQ(import_error("mysql://u@h:0/d"), "mysql URL: the port must be 1-65535, got '0'");
  ImportOptions options;
  options.mysql_url = url();
  options.zone = "Mars/Base";
  try {
    import_xxl_job(options);
    ADD_FAILURE() << "imported";
  } catch (const XxlJobImportError& error) {
    EXPECT_EQ(std::string(error.what()),
              "--zone: unknown time zone 'Mars/Base' (the XXL-JOB admin's, an IANA name such as Asia/Shanghai)");
  }
}

}  // namespace
}  // namespace cronwheel::cli::xxl_job
