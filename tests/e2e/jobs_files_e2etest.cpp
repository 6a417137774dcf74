// Jobs as code end to end: the real `cronwheel` binary's export, apply and import xxl-job, each a
// process, against a real cronwheel-admin on a fresh PostgreSQL database and, for a workflow
// applied with its jobs and for the import, a real cronwheel-executor running them, and a
// MariaDB server holding an XXL-JOB 2.4 database (CRONWHEEL_TEST_MYSQL_URL, which
// scripts/test.sh sets; that test is skipped without it).

#include <gtest/gtest.h>
#include <mysql.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_database.h"

namespace cronwheel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::eventually;
using testing::Process;
using testing::TempDir;
using testing::TestDatabase;

// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
constexpr auto kBound = 60s;
constexpr const char* kExecutorToken = "jobs-files-e2e-executor-token";

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const Ran& r) {
  return os << "status " << r.status << "\n--- stdout\n" << r.out << "--- stderr\n" << r.err;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A billing group with a cron job, a script job whose script is a file, and a job that fires
// the script job as its child.
const char* const kBillingFile =
    "apiVersion: cronwheel/v1\n"
    "groups:\n"
    "  - appName: billing\n"
    "    title: Billing services\n"
    "    jobs:\n"
    "      nightly:\n"
    "        jobDesc: Send the nightly invoices\n"
    "        scheduleType: CRON\n"
    "        scheduleConf: \"0 0 2 * * ?\"\n"
    "        timezone: Europe/Berlin\n"
    "        executorHandler: invoiceJob\n"
    "        childJobs: [reconcile]\n"
    "        running: true\n"
    "      reconcile:\n"
    "        jobDesc: Reconcile the ledger\n"
    "        glueType: GLUE_SHELL\n"
    "        scriptFile: ../scripts/reconcile.sh\n"
    "        glueRemark: first version\n"
    "      old-report:\n"
    "        jobDesc: A report nobody reads\n"
    "        executorHandler: reportJob\n";

const char* const kReportsFile =
    "groups:\n"
    "  - appName: reports\n"
    "    addressType: manual\n"
    "    addressList: [\"http://127.0.0.1:9\"]\n"
    "    jobs:\n"
    "      weekly:\n"
    "        jobDesc: Weekly report\n"
    "        scheduleType: FIX_RATE\n"
    "        scheduleConf: \"604800\"\n"
    "        executorHandler: weeklyJob\n";

const char* const kReconcileScript = "#!/bin/sh\necho \"reconciled $1\"\n";

class JobsFilesE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing of the machine's own settings: no variables, no ~/.config/cronwheel/cli.toml.
    for (const char* name : {"CRONWHEEL_URL", "CRONWHEEL_TOKEN", "CRONWHEEL_TOKEN_FILE", "CRONWHEEL_MYSQL_PASSWORD"}) {
      ::unsetenv(name);
    }
    ::setenv("HOME", work_.path().c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (work_.path() / "config").c_str(), 1);

    AdminProcess::Options options;
    options.db_url = db_.url();
    options.args = {"--node-id", "jobs-files-e2e", "--access-token", kExecutorToken, "--registry-refresh-ms", "200"};
    options.require_answers = true;
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    url_ = "http://127.0.0.1:" + std::to_string(admin_->port());
    session_ = admin_->login();
    auto token = admin_->post("tokens", session_, {{"name", "jobs-files-e2e"}});
    ASSERT_EQ(token.status, 201) << token.text;
    token_ = token.body["token"].get<std::string>();
  }

  void TearDown() override {
    if (executor_) {
      executor_->signal(SIGTERM);
      executor_->wait_for_exit(kBound);
    }
    if (admin_) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().out() << admin_->process().err();
    }
  }

  // `cronwheel --url URL --token TOKEN ARGS`, with `env` added to the environment.
  Ran run(std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(), {std::string(CRONWHEEL_BIN_DIR) + "/cronwheel", "--url", url_, "--token", token_});
    Process process(args, env);
    Ran ran;
    ran.status = process.wait_for_exit(kBound);
    ran.out = process.out();
    ran.err = process.err();
    return ran;
  }

  fs::path write(const fs::path& relative, const std::string& text) {
    const fs::path path = work_.path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string at(const std::string& relative) const { return (work_.path() / relative).string(); }

  // jobs/billing/billing.yaml (its script in jobs/scripts/) and jobs/reports.yaml.
  void write_jobs_directory() {
    write("jobs/billing/billing.yaml", kBillingFile);
    write("jobs/scripts/reconcile.sh", kReconcileScript);
    write("jobs/reports.yaml", kReportsFile);
  }

  // The job APP/NAME as the API answers it; null when there is none.
  json job(const std::string& app, const std::string& name) {
    auto page = admin_->get("jobs?appName=" + app + "&name=" + name, session_);
    if (page.status != 200 || page.body["items"].empty()) return nullptr;
    return admin_->get("jobs/" + std::to_string(page.body["items"][0]["id"].get<std::int64_t>()), session_).body;
  }

  // The app names of every group, sorted.
  std::vector<std::string> app_names() {
    std::vector<std::string> names;
    const auto page = admin_->get("groups?limit=1000", session_);
    EXPECT_EQ(page.status, 200) << page.text;
    for (const json& group : page.body["items"]) {
      names.push_back(group["appName"].get<std::string>());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::int64_t job_count() { return admin_->get("jobs?limit=1000", session_).body["items"].size(); }

  // Starts cronwheel-executor in the group `app` and waits until the group lists it.
  void start_executor(const std::string& app) {
    executor_ = std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_->url(), "--app-name", app,
        "--listen", "127.0.0.1:0", "--access-token", kExecutorToken, "--log-dir", (work_.path() / "logs").string()});
    ASSERT_TRUE(eventually(
        [&] {
          const json groups = admin_->get("groups?limit=1000", session_).body["items"];
          for (const json& group : groups) {
            if (group["appName"] == app && !group.value("addressList", std::vector<std::string>{}).empty()) return true;
          }
          return !executor_->running();
        },
        kBound))
        << executor_->out() << executor_->err() << "\n--- the admin's log\n" << admin_->process().err()
        << "\n--- groups\n" << admin_->get("groups?limit=1000", session_).text;
    ASSERT_TRUE(executor_->running()) << executor_->out() << executor_->err();
  }

  TempDir work_{"cronwheel-jobs-files-e2e"};
  TestDatabase db_;
  std::unique_ptr<AdminProcess> admin_;
  std::unique_ptr<Process> executor_;
  std::string url_;
  ApiCredentials session_;
  std::string token_;
};

TEST_F(JobsFilesE2e, ApplyingADirectoryCreatesItsGroupsAndJobsWithTheirScripts) {
  write_jobs_directory();

  Ran r = run({"apply", "-f", at("jobs"), "--dry-run"});
  ASSERT_EQ(r.status, 3) << r;
  EXPECT_NE(r.out.find("create group billing\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("create job billing/reconcile\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("create job reports/weekly\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("(dry run: nothing changed)\n"), std::string::npos) << r;
  EXPECT_EQ(app_names(), std::vector<std::string>{}) << "a dry run created something";

  r = run({"apply", "-f", at("jobs")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("applied: 6 created, 0 updated, 0 unchanged, 0 deleted\n"), std::string::npos) << r;
  EXPECT_EQ(app_names(), (std::vector<std::string>{"billing", "reports"}));

  const json reconcile = job("billing", "reconcile");
  ASSERT_TRUE(reconcile.is_object());
  EXPECT_EQ(reconcile["glueType"], "GLUE_SHELL");
  EXPECT_EQ(reconcile["glueSource"], kReconcileScript);
  EXPECT_EQ(reconcile["glueRemark"], "first version");
  const json nightly = job("billing", "nightly");
  ASSERT_TRUE(nightly.is_object());
  EXPECT_EQ(nightly["triggerStatus"], 1);
  EXPECT_EQ(nightly["timezone"], "Europe/Berlin");
  EXPECT_EQ(nightly["childJobId"], json::array({reconcile["id"]})) << nightly.dump();

  // Applied twice: nothing to do.
  r = run({"apply", "-f", at("jobs")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "nothing to change: 6 unchanged\n") << r;
}

TEST_F(JobsFilesE2e, ApplyingWhatExportWroteChangesNothing) {
  write_jobs_directory();
  ASSERT_EQ(run({"apply", "-f", at("jobs")}).status, 0);
  // A job made in the console (the API) comes along too.
  const auto billing = admin_->get("groups?limit=1000", session_).body["items"];
  std::int64_t billing_id = 0;
  for (const json& group : billing) {
    if (group["appName"] == "billing") billing_id = group["id"].get<std::int64_t>();
  }
  auto made = admin_->post("jobs", session_,
                           {{"jobGroup", billing_id}, {"name", "from-console"}, {"jobDesc", "Made by hand"},
                            {"scheduleType", "CRON"}, {"scheduleConf", "0 15 10 ? * MON-FRI"}, {"executorHandler", "x"},
                            {"executorTimeout", 30}, {"alarmEmail", "ops@example.com"}, {"retryBackoff", "EXPONENTIAL"},
                            {"retryMultiplier", 1.5}, {"retryMaxInterval", 300}, {"retryJitter", 20}, {"maxConcurrent", 2},
                            {"priority", -7}});
  ASSERT_EQ(made.status, 201) << made.text;
  // And a group's limit set there.
  const auto limited = admin_->put("groups/" + std::to_string(billing_id), session_, {{"maxRunning", 25}});
  ASSERT_EQ(limited.status, 200) << limited.text;

  fs::create_directories(at("export"));
  Ran r = run({"export", "-o", at("export/all.yaml")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.err, "exported 2 groups, 5 jobs to " + at("export/all.yaml") + "\n");
  const std::string exported = read_text(at("export/all.yaml"));
  EXPECT_NE(exported.find("from-console:"), std::string::npos) << exported;
  EXPECT_NE(exported.find("    maxRunning: 25\n"), std::string::npos) << exported;
  EXPECT_NE(exported.find("        retryBackoff: exponential\n        retryMultiplier: 1.5\n        retryMaxInterval: 300\n"
                          "        retryJitter: 20\n        maxConcurrent: 2\n        priority: -7\n"),
            std::string::npos)
      << exported;
  EXPECT_NE(exported.find("echo \"reconciled $1\""), std::string::npos) << "the script inline: " << exported;
  r = run({"export"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, exported);

  r = run({"apply", "-f", at("export/all.yaml"), "--dry-run"});
  EXPECT_EQ(r.status, 0) << r << "\n--- the export\n" << exported;
  EXPECT_EQ(r.out, "nothing to change: 7 unchanged\n") << r;

  // One group alone.
  r = run({"export", "--group", "reports"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out.find("billing"), std::string::npos) << r;
  EXPECT_NE(r.out.find("weekly:"), std::string::npos) << r;
}

TEST_F(JobsFilesE2e, AChangedFieldIsDriftWhoseDiffIsPrintedThenApplied) {
  write_jobs_directory();
  ASSERT_EQ(run({"apply", "-f", at("jobs")}).status, 0);
  ASSERT_EQ(run({"export", "--group", "billing", "-o", at("billing.yaml")}).status, 0);
  std::string text = read_text(at("billing.yaml"));
  const auto conf = text.find("0 0 2 * * ?");
  ASSERT_NE(conf, std::string::npos) << text;
  text.replace(conf, std::string("0 0 2 * * ?").size(), "0 30 2 * * ?");
  write("billing.yaml", text);

  Ran r = run({"apply", "-f", at("billing.yaml"), "--dry-run"});
  ASSERT_EQ(r.status, 3) << r;
  EXPECT_EQ(r.out,
            "update job billing/nightly\n"
            "    scheduleConf: \"0 0 2 * * ?\" \u2192 \"0 30 2 * * ?\"\n"
            "0 to create, 1 to update, 3 unchanged, 0 to delete (dry run: nothing changed)\n")
      << r;
  EXPECT_EQ(job("billing", "nightly")["scheduleConf"], "0 0 2 * * ?");

  r = run({"apply", "-f", at("billing.yaml")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("applied: 0 created, 1 updated, 3 unchanged, 0 deleted\n"), std::string::npos) << r;
  EXPECT_EQ(job("billing", "nightly")["scheduleConf"], "0 30 2 * * ?");
  EXPECT_EQ(run({"apply", "-f", at("billing.yaml"), "--dry-run"}).status, 0);

  // -o json: the plan as the API answers it.
  r = run({"apply", "-f", at("jobs"), "--dry-run", "-o", "json"});
  ASSERT_EQ(r.status, 3) << r;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan["summary"]["update"], 1) << plan.dump();
  EXPECT_TRUE(plan["dryRun"].get<bool>());
}

TEST_F(JobsFilesE2e, AnErrorInOneJobChangesNothingAndIsPointedAtByFileAndLine) {
  write_jobs_directory();
  ASSERT_EQ(run({"apply", "-f", at("jobs")}).status, 0);
  // Several changes, one of them a cron expression the server refuses (hour 25), on line 9.
  std::string text = kBillingFile;
  text.replace(text.find("Send the nightly invoices"), std::string("Send the nightly invoices").size(), "Changed");
  text.replace(text.find("0 0 2 * * ?"), std::string("0 0 2 * * ?").size(), "0 0 25 * * ?");
  text += "      added:\n        jobDesc: A new job\n        executorHandler: addedJob\n";
  write("jobs/billing/billing.yaml", text);
  write("jobs/reports.yaml", std::string(kReportsFile) + "      monthly:\n        jobDesc: Monthly\n");

  const Ran r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err.rfind(at("jobs/billing/billing.yaml") + ":9: groups[billing].jobs[nightly].scheduleConf", 0), 0u) << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(job("billing", "nightly")["jobDesc"], "Send the nightly invoices");
  EXPECT_TRUE(job("billing", "added").is_null());
  EXPECT_TRUE(job("reports", "monthly").is_null());

  // A problem the command finds itself names the column and the key too, and nothing is sent.
  write("jobs/billing/billing.yaml", std::string(kBillingFile) + "        retries: 3\n");
  const Ran local = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(local.status, 1) << local;
  EXPECT_EQ(local.err.rfind(at("jobs/billing/billing.yaml") + ":22:9: groups[billing].jobs[old-report].retries: ", 0), 0u)
      << local;
}

// The UTC date of `epoch_ms`, as calendars write dates: "2026-10-01".
std::string utc_date(std::int64_t epoch_ms) {
  const std::chrono::year_month_day day{
      std::chrono::floor<std::chrono::days>(std::chrono::sys_time<std::chrono::milliseconds>{std::chrono::milliseconds{epoch_ms}})};
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(day.year()), static_cast<unsigned>(day.month()),
                static_cast<unsigned>(day.day()));
  return text;
}

// A calendar in a file of its own and a job naming it: applied together, the job's next fires
// pass over the holiday; applied again, or exported and applied back, nothing changes.
TEST_F(JobsFilesE2e, ACalendarAppliedWithAJobNamingItSkipsTheHolidayAndExportsBackAsNoChange) {
  write_jobs_directory();
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Two days on, in UTC: nightly fires at 02:00 in Berlin, which is that same day in UTC.
  const std::string holiday = utc_date(now_ms + 2 * 86'400'000LL);
  write("jobs/calendars.yaml", "calendars:\n  - name: holidays\n    description: Company holidays\n    excludedDates:\n"
                               "      - {date: \"" + holiday + "\", name: Founders Day}\n"
                               "    excludedTimes:\n      - {start: \"12:00\", end: \"13:00\"}\ngroups: []\n");
  std::string text = kBillingFile;
  text.insert(text.find("        executorHandler: invoiceJob"), "        calendar: holidays\n");
  write("jobs/billing/billing.yaml", text);

  Ran r = run({"apply", "-f", at("jobs")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out.find("create calendar holidays\n"), 0u) << "calendars first, as they are written first: " << r;
  EXPECT_NE(r.out.find("applied: 7 created, 0 updated, 0 unchanged, 0 deleted\n"), std::string::npos)
      << "the calendar, two groups, four jobs: " << r;
  const auto calendars = admin_->get("calendars?name=holidays", session_);
  ASSERT_EQ(calendars.status, 200) << calendars.text;
  ASSERT_EQ(calendars.body["items"].size(), 1u) << calendars.text;
  const json& calendar = calendars.body["items"][0];
  EXPECT_EQ(calendar["excludedDates"][0]["date"], holiday);
  const json nightly = job("billing", "nightly");
  ASSERT_TRUE(nightly.is_object());
  EXPECT_EQ(nightly["calendarId"], calendar["id"]);

  // Its next fires pass over the holiday, which the preview names.
  const auto preview = admin_->get("jobs/" + std::to_string(nightly["id"].get<std::int64_t>()) + "/next-fires?count=5", session_);
  ASSERT_EQ(preview.status, 200) << preview.text;
  ASSERT_EQ(preview.body["times"].size(), 5u) << preview.text;
  for (const auto& time : preview.body["times"]) EXPECT_NE(utc_date(time.get<std::int64_t>()), holiday) << preview.text;
  ASSERT_EQ(preview.body["skipped"].size(), 1u) << preview.text;
  EXPECT_EQ(preview.body["skipped"][0]["reason"], "excluded by calendar holidays: " + holiday + " Founders Day");

  r = run({"apply", "-f", at("jobs")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "nothing to change: 7 unchanged\n") << r;

  fs::create_directories(at("export"));
  r = run({"export", "-o", at("export/all.yaml")});
  ASSERT_EQ(r.status, 0) << r;
  const std::string exported = read_text(at("export/all.yaml"));
  EXPECT_NE(exported.find("calendars:\n  - name: holidays\n"), std::string::npos) << exported;
  EXPECT_NE(exported.find("        calendar: holidays\n"), std::string::npos) << exported;
  r = run({"apply", "-f", at("export/all.yaml"), "--dry-run"});
  EXPECT_EQ(r.status, 0) << r << "\n--- the export\n" << exported;
  EXPECT_EQ(r.out, "nothing to change: 7 unchanged\n") << r;
  r = run({"apply", "-f", at("export/all.yaml"), "--prune"});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "nothing to change: 7 unchanged\n") << r;
}

// A calendar a job names that neither the files nor the server have is refused at the job's
// line, and a calendarMode without its calendar by the command itself; nothing is applied.
TEST_F(JobsFilesE2e, ACalendarThatDoesNotExistIsRefusedAtItsLineAndChangesNothing) {
  write_jobs_directory();
  std::string text = kBillingFile;
  text.insert(text.find("        executorHandler: invoiceJob"), "        calendar: nope\n        calendarMode: only\n");
  write("jobs/billing/billing.yaml", text);
  Ran r = run({"apply", "-f", at("jobs"), "--dry-run"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err.rfind(at("jobs/billing/billing.yaml") + ":11: groups[billing].jobs[nightly].calendar: no calendar is named 'nope'", 0),
            0u)
      << r;

  text = kBillingFile;
  text.insert(text.find("        executorHandler: invoiceJob"), "        calendarMode: only\n");
  write("jobs/billing/billing.yaml", text);
  r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err.rfind(at("jobs/billing/billing.yaml") + ":11:9: groups[billing].jobs[nightly].calendarMode: goes with "
                                                          "calendar",
                        0),
            0u)
      << r;
  EXPECT_TRUE(app_names().empty());
}

TEST_F(JobsFilesE2e, PruneDeletesTheJobsTheFilesLeaveOut) {
  write_jobs_directory();
  ASSERT_EQ(run({"apply", "-f", at("jobs")}).status, 0);
  std::string text = kBillingFile;
  text.erase(text.find("      old-report:"));
  write("jobs/billing/billing.yaml", text);

  Ran r = run({"apply", "-f", at("jobs")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "nothing to change: 5 unchanged\n") << "without --prune a job left out stays";
  EXPECT_TRUE(job("billing", "old-report").is_object());

  r = run({"apply", "-f", at("jobs"), "--prune", "--dry-run"});
  ASSERT_EQ(r.status, 3) << r;
  EXPECT_EQ(r.out, "delete job billing/old-report\n0 to create, 0 to update, 5 unchanged, 1 to delete (dry run: nothing changed)\n");
  r = run({"apply", "-f", at("jobs"), "--prune"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("applied: 0 created, 0 updated, 5 unchanged, 1 deleted\n"), std::string::npos) << r;
  EXPECT_TRUE(job("billing", "old-report").is_null());
  EXPECT_TRUE(job("billing", "nightly").is_object());
  EXPECT_TRUE(job("reports", "weekly").is_object()) << "a group of the files, its job named";
}

TEST_F(JobsFilesE2e, ACycleOfChildJobsIsRefusedNamingIt) {
  write("cycle.yaml",
        "groups:\n"
        "  - appName: billing\n"
        "    jobs:\n"
        "      first:\n"
        "        jobDesc: First\n"
        "        executorHandler: a\n"
        "        childJobs: [second]\n"
        "      second:\n"
        "        jobDesc: Second\n"
        "        executorHandler: b\n"
        "        childJobs: [first]\n");
  const Ran r = run({"apply", "-f", at("cycle.yaml")});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err.rfind(at("cycle.yaml") + ":", 0), 0u) << r;
  EXPECT_NE(r.err.find("cycle"), std::string::npos) << r;
  EXPECT_NE(r.err.find("first"), std::string::npos) << r;
  EXPECT_NE(r.err.find("second"), std::string::npos) << r;
  EXPECT_EQ(app_names(), std::vector<std::string>{});
  EXPECT_EQ(job_count(), 0);
}

// ---- workflows

// Two jobs on the executor's echo handler and a workflow running one after the other, the
// second with what the first answered. The workflow's nodes name the jobs the file creates.
const char* const kWorkflowFile =
    "groups:\n"
    "  - appName: wf-e2e\n"
    "    jobs:\n"
    "      greet:\n"
    "        jobDesc: Say hello\n"
    "        executorHandler: echo\n"
    "      repeat:\n"
    "        jobDesc: Say it again\n"
    "        executorHandler: echo\n"
    "    workflows:\n"
    "      hello:\n"
    "        description: Greet, then repeat what the greeting answered\n"
    "        params: [{name: who, default: world}]\n"
    "        nodes:\n"
    "          greet:\n"
    "            job: greet\n"
    "            params: \"hello ${params.who}\"\n"
    "          repeat:\n"
    "            job: repeat\n"
    "            after: [greet]\n"
    "            params: \"again: ${nodes.greet.output}\"\n";

TEST_F(JobsFilesE2e, AWorkflowAppliedWithItsJobsRunsOnTheExecutor) {
  write("wf.yaml", kWorkflowFile);
  Ran r = run({"apply", "-f", at("wf.yaml")});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("applied: 4 created, 0 updated, 0 unchanged, 0 deleted\n"), std::string::npos)
      << "the group, its two jobs and the workflow: " << r;
  r = run({"apply", "-f", at("wf.yaml"), "--dry-run"});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "nothing to change: 4 unchanged\n") << r;
  r = run({"export", "--group", "wf-e2e"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("        nodes:\n          greet:\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("            after: [greet]\n"), std::string::npos) << r;

  const auto listed = admin_->get("workflows?name=hello", session_);
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.body["items"].size(), 1u) << listed.text;
  const auto workflow_id = listed.body["items"][0]["id"].get<std::int64_t>();
  EXPECT_EQ(listed.body["items"][0]["nodes"][1]["jobId"], job("wf-e2e", "repeat")["id"]);

  start_executor("wf-e2e");
  const auto triggered = admin_->post("workflows/" + std::to_string(workflow_id) + "/trigger", session_,
                                      {{"params", {{"who", "files"}}}});
  ASSERT_EQ(triggered.status, 201) << triggered.text;
  const auto run_path = "workflow-runs/" + std::to_string(triggered.body["id"].get<std::int64_t>());
  json detail;
  ASSERT_TRUE(eventually(
      [&] {
        detail = admin_->get(run_path, session_).body;
        const auto state = detail.value("state", std::string());
        return state != "waiting" && state != "running";
      },
      kBound))
      << detail.dump(2);
  ASSERT_EQ(detail["state"], "succeeded") << detail.dump(2) << "\n--- the executor\n" << executor_->err();
  ASSERT_EQ(detail["nodes"].size(), 2u);
  EXPECT_EQ(detail["nodes"][0]["param"], "hello files");
  EXPECT_EQ(detail["nodes"][1]["param"], "again: hello files") << "the second node read the first's output";
}

TEST_F(JobsFilesE2e, AWorkflowsCycleIsPointedAtByFileAndLineAndChangesNothing) {
  std::string text = kWorkflowFile;
  text.replace(text.find("            job: greet\n"), 23, "            job: greet\n            after: [repeat]\n");
  write("wf.yaml", text);
  const Ran r = run({"apply", "-f", at("wf.yaml")});
  EXPECT_EQ(r.status, 1) << r;
  // At the first edge of the cycle: repeat's `after: [greet]`.
  EXPECT_EQ(r.err.rfind(at("wf.yaml") + ":21: groups[wf-e2e].workflows[hello].nodes[repeat].after[0]: ", 0), 0u) << r;
  EXPECT_NE(r.err.find("form a cycle: greet \u2192 repeat \u2192 greet: repeat after greet, greet after repeat"),
            std::string::npos)
      << r;
  EXPECT_EQ(app_names(), std::vector<std::string>{});

  // Uploaded as YAML (the console's Import): the admin has the lines, and tells each edge's.
  httplib::Client client("127.0.0.1", admin_->port());
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  const auto uploaded = client.Post("/api/v1/apply", session_.headers(true), text, "application/yaml");
  ASSERT_TRUE(uploaded);
  EXPECT_EQ(uploaded->status, 400) << uploaded->body;
  const json error = json::parse(uploaded->body, nullptr, false);
  ASSERT_TRUE(error.is_object()) << uploaded->body;
  EXPECT_EQ(error["error"]["field"], "groups[wf-e2e].workflows[hello].nodes[repeat].after[0]") << uploaded->body;
  EXPECT_EQ(error["error"]["message"],
            "line 21: groups[wf-e2e].workflows[hello].nodes[repeat].after[0]: the nodes' after lists form a cycle: "
            "greet \u2192 repeat \u2192 greet: repeat after greet (line 21), greet after repeat (line 17)")
      << uploaded->body;
  EXPECT_EQ(app_names(), std::vector<std::string>{});
}

// ---- import xxl-job

struct MysqlCloser {
  void operator()(MYSQL* m) const noexcept { mysql_close(m); }
};

// A database of its own on the server at CRONWHEEL_TEST_MYSQL_URL, loaded with XXL-JOB 2.4.1's
// tables and the fixture (tests/fixtures/xxl_job/), dropped after.
class XxlJobDatabase {
 public:
  // Parts of mysql://USER:PASSWORD@HOST:PORT/DB as scripts/test.sh writes it (no escapes).
  explicit XxlJobDatabase(const std::string& server_url) {
    const std::string rest = server_url.substr(std::string("mysql://").size());
    const auto at = rest.rfind('@');
    const std::string credentials = rest.substr(0, at);
    const std::string address = rest.substr(at + 1, rest.find('/', at) - at - 1);
    user_ = credentials.substr(0, credentials.find(':'));
    password_ = credentials.find(':') == std::string::npos ? "" : credentials.substr(credentials.find(':') + 1);
    host_ = address.substr(0, address.rfind(':'));
    port_ = std::stoi(address.substr(address.rfind(':') + 1));
    static std::atomic<int> counter{0};
    name_ = "xxl_e2e_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    server_.reset(connect(""));
    run(server_.get(), "DROP DATABASE IF EXISTS " + name_ + "; CREATE DATABASE " + name_ + " CHARACTER SET utf8mb4");
    std::unique_ptr<MYSQL, MysqlCloser> database(connect(name_));
    for (const char* file : {"tables.sql", "fixture.sql"}) {
      run(database.get(), read_text(std::string(CRONWHEEL_SOURCE_DIR) + "/tests/fixtures/xxl_job/" + file));
    }
  }

  ~XxlJobDatabase() {
    try {
      run(server_.get(), "DROP DATABASE IF EXISTS " + name_);
    } catch (const std::exception&) {
      // Left for the throwaway server to take with it.
    }
  }

  // The URL without the password (given through CRONWHEEL_MYSQL_PASSWORD instead).
  std::string url_without_password() const {
    return "mysql://" + user_ + "@" + host_ + ":" + std::to_string(port_) + "/" + name_;
  }
  const std::string& password() const { return password_; }

 private:
  MYSQL* connect(const std::string& database) {
    MYSQL* m = mysql_init(nullptr);
    const unsigned protocol = MYSQL_PROTOCOL_TCP;
    mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &protocol);
    mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (mysql_real_connect(m, host_.c_str(), user_.c_str(), password_.c_str(),
                           database.empty() ? nullptr : database.c_str(), static_cast<unsigned>(port_), nullptr,
                           CLIENT_MULTI_STATEMENTS) == nullptr) {
      const std::string error = mysql_error(m);
      mysql_close(m);
      throw std::runtime_error("test setup: cannot connect to MariaDB: " + error);
    }
    return m;
  }

  static void run(MYSQL* m, const std::string& sql) {
    if (mysql_real_query(m, sql.data(), sql.size()) != 0) throw std::runtime_error(std::string("test setup: ") + mysql_error(m));
    do {
      if (MYSQL_RES* result = mysql_store_result(m)) mysql_free_result(result);
      if (mysql_errno(m) != 0) throw std::runtime_error(std::string("test setup: ") + mysql_error(m));
    } while (mysql_next_result(m) == 0);
    if (mysql_errno(m) != 0) throw std::runtime_error(std::string("test setup: ") + mysql_error(m));
  }

  std::string user_, password_, host_, name_;
  int port_ = 3306;
  std::unique_ptr<MYSQL, MysqlCloser> server_;
};

TEST_F(JobsFilesE2e, AnXxlJobDatabaseMovesWithOneCommandAndItsJobsFireOnTheExecutor) {
  const char* server = std::getenv("CRONWHEEL_TEST_MYSQL_URL");
  if (server == nullptr || *server == '\0') {
    GTEST_SKIP() << "CRONWHEEL_TEST_MYSQL_URL is not set: start a MariaDB server (scripts/lib/mariadb.sh, as "
                    "scripts/test.sh does) and set it to mysql://USER:PASSWORD@127.0.0.1:PORT/DB";
  }
  XxlJobDatabase xxl(server);
  const std::vector<std::string> password{"CRONWHEEL_MYSQL_PASSWORD=" + xxl.password()};
  const std::vector<std::string> import{"import", "xxl-job", "--mysql", xxl.url_without_password(), "--zone",
                                        "Asia/Shanghai"};

  // The file first: nothing applied.
  std::vector<std::string> args = import;
  args.insert(args.end(), {"-o", at("xxl-jobs.yaml")});
  Ran r = run(args, password);
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.err.find("not imported: group 3 'ops'"), std::string::npos) << "the findings, one a line: " << r;
  EXPECT_NE(r.err.find("wrote 3 groups, "), std::string::npos) << r;
  EXPECT_NE(read_text(at("xxl-jobs.yaml")).find("echo-every-three-seconds-13:"), std::string::npos);
  EXPECT_EQ(job_count(), 0);
  if (!xxl.password().empty()) {
    EXPECT_EQ(r.err.find(xxl.password()), std::string::npos) << "the password shown";
  }

  // Then straight into the server.
  r = run(import, password);
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("create group e2e-shell\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("create job e2e-shell/echo-every-three-seconds-13\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("applied: "), std::string::npos) << r;
  EXPECT_EQ(app_names(), (std::vector<std::string>{"billing-app", "e2e-shell", "reports.java"}));
  const json jobs = admin_->get("jobs?limit=1000", session_).body["items"];
  EXPECT_GE(jobs.size(), 10u);
  for (const json& j : jobs) EXPECT_EQ(j["triggerStatus"], 0) << "imported running: " << j.dump();
  const json echo = job("e2e-shell", "echo-every-three-seconds-13");
  ASSERT_TRUE(echo.is_object());
  EXPECT_EQ(echo["scheduleConf"], "*/3 * * * * ?");
  EXPECT_EQ(echo["timezone"], "Asia/Shanghai");
  EXPECT_EQ(echo["glueType"], "GLUE_SHELL");

  // Importing again would change nothing.
  args = import;
  args.push_back("--dry-run");
  r = run(args, password);
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out.rfind("nothing to change: ", 0), 0u) << r;

  // Its executor registers, the job is started, and it fires every three seconds on time.
  start_executor("e2e-shell");
  r = run({"jobs", "start", "e2e-shell/echo-every-three-seconds-13"});
  ASSERT_EQ(r.status, 0) << r;
  const auto id = std::to_string(echo["id"].get<std::int64_t>());
  json runs;
  ASSERT_TRUE(eventually(
      [&] {
        runs = admin_->get("logs?jobId=" + id + "&status=success&limit=10", session_).body["items"];
        return runs.size() >= 2;
      },
      kBound, 200ms))
      << admin_->get("logs?jobId=" + id, session_).text << executor_->err();
  ASSERT_EQ(run({"jobs", "stop", "e2e-shell/echo-every-three-seconds-13"}).status, 0);
  std::vector<std::int64_t> scheduled;
  for (const json& run_record : runs) {
    scheduled.push_back(run_record["scheduledTime"].get<std::int64_t>());
    EXPECT_EQ(scheduled.back() % 3000, 0) << "not on a multiple of three seconds: " << run_record.dump();
    EXPECT_EQ(run_record["triggerType"], "SCHEDULE") << run_record.dump();
    const auto log = admin_->get("logs/" + std::to_string(run_record["id"].get<std::int64_t>()) + "/content", session_);
    EXPECT_NE(log.body.value("content", "").find("cronwheel import e2e: cron three"), std::string::npos) << log.text;
  }
  std::sort(scheduled.begin(), scheduled.end());
  EXPECT_EQ(scheduled[1] - scheduled[0], 3000) << "two fires three seconds apart";
}

}  // namespace
}  // namespace cronwheel
