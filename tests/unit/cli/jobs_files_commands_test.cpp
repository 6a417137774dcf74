// `cronwheel export`, `apply` and `import xxl-job` against a scripted fake of the API: what they
// send, what they print, where errors point, and their exit statuses.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/cli/cli_harness.h"

namespace cronwheel::testing {

// How a result is shown when an expectation about it fails (found by argument-dependent lookup).
inline std::ostream& operator<<(std::ostream& os, const CliResult& r) {
  return os << "status " << r.status << "\n--- stdout\n" << r.out << "--- stderr\n" << r.err;
}

}  // namespace cronwheel::testing

namespace cronwheel::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliResult;
using testing::FakeApi;
using testing::FakeTransport;

constexpr const char* kApplyTarget = "POST api/v1/apply?dryRun=false&prune=false";
constexpr const char* kDryRunTarget = "POST api/v1/apply?dryRun=true&prune=false";

const char* const kBillingFile =
    "groups:\n"
    "  - appName: billing\n"
    "    title: Billing\n"
    "    jobs:\n"
    "      nightly:\n"
    "        jobDesc: Nightly invoices\n"
    "        scheduleType: CRON\n"
    "        scheduleConf: \"0 0 2 * * ?\"\n"
    "        executorHandler: invoiceJob\n"
    "      reconcile:\n"
    "        jobDesc: Reconcile\n"
    "        glueType: GLUE_SHELL\n"
    "        scriptFile: scripts/reconcile.sh\n";

json plan_answer(bool dry_run, bool changed) {
  return {{"dryRun", dry_run},
          {"changed", changed},
          {"groups", json::array({{{"appName", "billing"}, {"action", "unchanged"}, {"changes", json::array()}}})},
          {"jobs", json::array({{{"appName", "billing"},
                                 {"name", "nightly"},
                                 {"action", changed ? "update" : "unchanged"},
                                 {"changes", changed ? json::array({{{"field", "scheduleConf"},
                                                                     {"from", "0 0 1 * * ?"},
                                                                     {"to", "0 0 2 * * ?"}}})
                                                     : json::array()}},
                                {{"appName", "billing"}, {"name", "reconcile"}, {"action", "unchanged"}, {"changes", json::array()}}})},
          {"users", json::array()},
          {"summary", {{"create", 0}, {"update", changed ? 1 : 0}, {"unchanged", changed ? 2 : 3}, {"delete", 0}}}};
}

json api_error(const std::string& code, const std::string& message, const std::string& field) {
  json error{{"code", code}, {"message", message}};
  if (!field.empty()) error["field"] = field;
  return {{"error", error}};
}

class JobsFilesCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write("jobs/billing.yaml", kBillingFile);
    write("jobs/scripts/reconcile.sh", "#!/bin/sh\necho reconciled\n");
  }

  fs::path write(const fs::path& relative, const std::string& text) {
    const fs::path path = dir_.path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string at(const std::string& relative) const { return (dir_.path() / relative).string(); }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // The command line with every command, as main.cpp makes it, against the fake API.
  CliResult run(std::vector<std::string> args) {
    std::ostringstream out, err;
    CommandLine command_line(Io{out, err, [](const std::string&) { return std::optional<std::string>(); },
                                [this](const Settings&, std::chrono::milliseconds) -> std::unique_ptr<Transport> {
                                  return std::make_unique<FakeTransport>(api_);
                                },
                                [](std::chrono::milliseconds) { return true; }});
    add_jobs_commands(command_line);
    add_groups_commands(command_line);
    add_runs_commands(command_line);
    add_workflows_commands(command_line);
    add_workflow_runs_commands(command_line);
    add_export_command(command_line);
    add_apply_command(command_line);
    add_import_commands(command_line);
    add_version_command(command_line);
    CliResult result;
    result.status = command_line.run(std::move(args));
    result.out = out.str();
    result.err = err.str();
    return result;
  }

  FakeApi api_;
  testing::TempDir dir_{"cronwheel-jobs-files-commands"};
};

// ---- apply

TEST_F(JobsFilesCommandsTest, ApplySendsTheFilesAsOneJsonDocumentWithTheirScripts) {
  write("jobs/reports/reports.yaml", "groups:\n  - appName: reports\n");
  api_.answer(kApplyTarget, 200, plan_answer(false, true));
  const CliResult r = run({"apply", "-f", at("jobs")});
  ASSERT_EQ(r.status, 0) << r;
  ASSERT_EQ(api_.requests().size(), 1u);
  const auto& request = api_.requests()[0];
  EXPECT_EQ(request.content_type, "application/json");
  const json sent = json::parse(request.body.value());
  ASSERT_EQ(sent["groups"].size(), 2u) << sent.dump();
  EXPECT_EQ(sent["groups"][0]["jobs"]["reconcile"]["glueSource"], "#!/bin/sh\necho reconciled\n");
  EXPECT_EQ(sent["groups"][1]["appName"], "reports");
  EXPECT_EQ(r.out,
            "update job billing/nightly\n"
            "    scheduleConf: \"0 0 1 * * ?\" \u2192 \"0 0 2 * * ?\"\n"
            "applied: 0 created, 1 updated, 2 unchanged, 0 deleted\n");
}

TEST_F(JobsFilesCommandsTest, ApplyDryRunExitsThreeOnlyWhenThereAreChanges) {
  api_.answer(kDryRunTarget, 200, plan_answer(true, true));  // the fake answers these in turn
  api_.answer(kDryRunTarget, 200, plan_answer(true, false));
  CliResult r = run({"apply", "-f", at("jobs/billing.yaml"), "--dry-run"});
  EXPECT_EQ(r.status, kExitChanges) << r;
  EXPECT_NE(r.out.find("0 to create, 1 to update, 2 unchanged, 0 to delete (dry run: nothing changed)\n"),
            std::string::npos)
      << r;

  r = run({"apply", "-f", at("jobs/billing.yaml"), "--dry-run"});
  EXPECT_EQ(r.status, kExitOk) << r;
  EXPECT_EQ(r.out, "nothing to change: 3 unchanged\n");
}

TEST_F(JobsFilesCommandsTest, ApplyPruneAsksTheServerToDelete) {
  api_.answer("POST api/v1/apply?dryRun=true&prune=true", 200, plan_answer(true, false));
  const CliResult r = run({"apply", "--prune", "--dry-run", "-f", at("jobs")});
  EXPECT_EQ(r.status, 0) << r;
}

TEST_F(JobsFilesCommandsTest, ApplyWithOutputJsonOrYamlPrintsThePlanObject) {
  api_.answer(kDryRunTarget, 200, plan_answer(true, true));
  CliResult r = run({"apply", "-f", at("jobs"), "--dry-run", "-o", "json"});
  EXPECT_EQ(r.status, kExitChanges) << r;
  EXPECT_EQ(json::parse(r.out), plan_answer(true, true));
  r = run({"-o", "yaml", "apply", "-f", at("jobs"), "--dry-run"});
  EXPECT_EQ(r.status, kExitChanges) << r;
  EXPECT_NE(r.out.find("summary:\n"), std::string::npos) << r;
}

TEST_F(JobsFilesCommandsTest, ALocalProblemIsPrintedWithItsPlaceAndNothingIsSent) {
  write("jobs/zz.yaml", "groups:\n  - appName: reports\n    jobs:\n      x:\n        jobDesc: X\n        scheduleTyp: CRON\n");
  const CliResult r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_EQ(r.err.rfind(at("jobs/zz.yaml") + ":6:9: groups[reports].jobs[x].scheduleTyp: ", 0), 0u) << r;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r;
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(JobsFilesCommandsTest, AMissingScriptFileIsNamedWithItsPlace) {
  write("jobs/scripts/reconcile.sh", "");
  fs::remove(at("jobs/scripts/reconcile.sh"));
  const CliResult r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_EQ(r.err.rfind(at("jobs/billing.yaml") + ":13:", 0), 0u) << r;
  EXPECT_NE(r.err.find("scripts/reconcile.sh"), std::string::npos) << r;
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(JobsFilesCommandsTest, AServerRefusalIsPointedAtTheLineOfTheFieldItNames) {
  const std::string message = "groups[billing].jobs[nightly].scheduleConf: not a cron expression: '0 0 2 * * ?'";
  api_.answer(kApplyTarget, 400, api_error("invalid", message, "groups[billing].jobs[nightly].scheduleConf"));
  // A script's problem points at its scriptFile line.
  api_.answer(kApplyTarget, 400, api_error("invalid", "groups[billing].jobs[reconcile].glueSource: too long",
                                           "groups[billing].jobs[reconcile].glueSource"));
  CliResult r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_EQ(r.err, at("jobs/billing.yaml") + ":8: " + message + "\n");
  EXPECT_EQ(r.out, "");

  r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.err, at("jobs/billing.yaml") + ":13: groups[billing].jobs[reconcile].glueSource: too long\n") << r;
}

TEST_F(JobsFilesCommandsTest, ARefusalOfTheCalendarsIsPointedAtTheirLineInTheFile) {
  write("jobs/calendars.yaml",
        "groups: []\ncalendars:\n  - name: cn-holidays\n    excludedDates:\n      - {date: 2026-02-30}\n");
  api_.answer(kApplyTarget, 400, api_error("invalid", "calendars: not applied here", "calendars"));
  api_.answer(kApplyTarget, 400,
              api_error("invalid", "calendars[cn-holidays].excludedDates[0]: 2026-02-30 does not exist",
                        "calendars[cn-holidays].excludedDates[0]"));
  CliResult r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_EQ(r.err, at("jobs/calendars.yaml") + ":2: calendars: not applied here\n");
  r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.err, at("jobs/calendars.yaml") + ":5: calendars[cn-holidays].excludedDates[0]: 2026-02-30 does not exist\n");

  // Files without calendars hold no line for them.
  fs::remove(at("jobs/calendars.yaml"));
  r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.err, "cronwheel: apply: calendars[cn-holidays].excludedDates[0]: 2026-02-30 does not exist (HTTP 400)\n");
}

TEST_F(JobsFilesCommandsTest, AServerRefusalWithoutAPlaceInTheFilesIsSaidAsAnyError) {
  api_.answer(kApplyTarget, 403, api_error("forbidden", "you may not act on group ops", ""));
  api_.answer(kApplyTarget, 400, api_error("invalid", "users: not here", "users"));
  CliResult r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_EQ(r.err, "cronwheel: apply: you may not act on group ops (HTTP 403)\n");

  // A field the files do not hold is not pointed at some line of them.
  r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.err, "cronwheel: apply: users: not here (HTTP 400)\n");
}

TEST_F(JobsFilesCommandsTest, AnAnswerThatIsNoPlanIsAnUnexpectedAnswer) {
  api_.answer_text(kApplyTarget, 200, "<html>login</html>");
  api_.answer(kApplyTarget, 200, json{{"changed", true}});
  CliResult r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, kExitFailed);
  EXPECT_EQ(r.err, "cronwheel: apply: unexpected answer from the server: not JSON\n");
  r = run({"apply", "-f", at("jobs")});
  EXPECT_EQ(r.status, kExitFailed);
  EXPECT_NE(r.err.find("unexpected answer from the server"), std::string::npos) << r;
  EXPECT_EQ(r.out, "");
}

TEST_F(JobsFilesCommandsTest, ApplyWithoutFilesIsBadUsage) {
  const CliResult r = run({"apply", "--dry-run"});
  EXPECT_EQ(r.status, kExitUsage) << r;
  EXPECT_TRUE(api_.requests().empty());
  const CliResult missing = run({"apply", "-f", at("nothing-here")});
  EXPECT_EQ(missing.status, kExitFailed);
  EXPECT_EQ(missing.err, "cronwheel: apply: " + at("nothing-here") + ": no such file or directory\n");
}

// ---- export

TEST_F(JobsFilesCommandsTest, ExportWritesTheServersYamlToStdout) {
  const std::string yaml = "groups:\n  - appName: billing\n    jobs:\n      run:\n        jobDesc: Run\n"
                           "        glueType: GLUE_SHELL\n        glueSource: |\n          #!/bin/sh\n          echo\n";
  api_.answer_text("GET api/v1/export", 200, yaml);
  const CliResult r = run({"export"});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, yaml);
  EXPECT_EQ(api_.requests().at(0).accept, "application/yaml");
}

TEST_F(JobsFilesCommandsTest, ExportOfNamedGroupsToAFileReplacesIt) {
  const std::string yaml = "groups:\n  - appName: billing\n    jobs:\n      a:\n        jobDesc: A\n      b:\n        jobDesc: B\n";
  api_.answer_text("GET api/v1/export?appName=billing%2Creports", 200, yaml);
  write("out/jobs.yaml", "old\n");
  const CliResult r = run({"export", "--group", "billing", "--group", "reports", "-o", at("out/jobs.yaml")});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "exported 1 group, 2 jobs to " + at("out/jobs.yaml") + "\n");
  EXPECT_EQ(read(at("out/jobs.yaml")), yaml);
}

TEST_F(JobsFilesCommandsTest, ExportOfSomethingThatIsNoJobsFileWritesNothing) {
  api_.answer_text("GET api/v1/export", 200, "<html>\n<body>sign in</body>\n");
  write("out/jobs.yaml", "old\n");
  const CliResult r = run({"export", "-o", at("out/jobs.yaml")});
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_NE(r.err.find("unexpected answer from the server: not a jobs file"), std::string::npos) << r;
  EXPECT_EQ(read(at("out/jobs.yaml")), "old\n");
}

TEST_F(JobsFilesCommandsTest, ExportOfAGroupNameThatIsNoAppNameIsBadUsage) {
  // A comma would split one name into two in the query.
  const CliResult r = run({"export", "--group", "billing,ops"});
  EXPECT_EQ(r.status, kExitUsage) << r;
  EXPECT_NE(r.err.find("--group"), std::string::npos) << r;
  EXPECT_TRUE(api_.requests().empty());
}

// ---- import xxl-job (without a database: the arguments, and the password kept out of sight)

TEST_F(JobsFilesCommandsTest, ImportChecksItsArgumentsBeforeConnecting) {
  CliResult r = run({"import", "xxl-job", "--mysql", "mysql://xxl:hunter2@db:0/xxl_job", "--zone", "UTC"});
  EXPECT_EQ(r.status, kExitUsage) << r;
  EXPECT_EQ(r.err, "cronwheel: import xxl-job: --mysql: mysql URL: the port must be 1-65535, got '0'\n");
  r = run({"import", "xxl-job", "--mysql", "mysql://xxl@db/xxl_job", "--zone", "Mars/Base"});
  EXPECT_EQ(r.status, kExitUsage) << r;
  EXPECT_NE(r.err.find("--zone: unknown time zone 'Mars/Base'"), std::string::npos) << r;
  r = run({"import", "xxl-job", "--mysql", "mysql://xxl@db/xxl_job", "--zone", "UTC", "--dry-run", "-o", at("x.yaml")});
  EXPECT_EQ(r.status, kExitUsage) << r;
  r = run({"import", "xxl-job", "--zone", "UTC"});
  EXPECT_EQ(r.status, kExitUsage) << r;
  r = run({"import"});
  EXPECT_EQ(r.status, kExitUsage) << r;
  EXPECT_NE(r.err.find("xxl-job"), std::string::npos) << r;
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(JobsFilesCommandsTest, ImportFromAnUnreachableDatabaseNeverShowsThePassword) {
  ::setenv("CRONWHEEL_MYSQL_PASSWORD", "hunter2-from-env", 1);
  // Port 1 on the loopback: nothing listens, the connection is refused at once.
  CliResult r = run({"import", "xxl-job", "--mysql", "mysql://xxl@127.0.0.1:1/xxl_job", "--zone", "UTC", "-o", at("x.yaml")});
  ::unsetenv("CRONWHEEL_MYSQL_PASSWORD");
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_EQ(r.err.rfind("cronwheel: import xxl-job: cannot connect to mysql://xxl@127.0.0.1:1/xxl_job", 0), 0u) << r;
  EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r;
  r = run({"import", "xxl-job", "--mysql", "mysql://xxl:hunter2@127.0.0.1:1/xxl_job", "--zone", "UTC", "--dry-run"});
  EXPECT_EQ(r.status, kExitFailed) << r;
  EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(at("x.yaml")));
  EXPECT_TRUE(api_.requests().empty());
}

// ---- help

TEST_F(JobsFilesCommandsTest, EachCommandHasAManualPage) {
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"export"}, {"apply"}, {"import", "xxl-job"}}) {
    std::vector<std::string> args = command;
    args.push_back("--help");
    const CliResult r = run(args);
    EXPECT_EQ(r.status, 0) << r;
    for (const char* section : {"EXAMPLES\n", "EXIT STATUS\n", "GLOBAL OPTIONS"}) {
      EXPECT_NE(r.out.find(section), std::string::npos) << command[0] << " lacks " << section;
    }
  }
  EXPECT_NE(run({"--help"}).out.find("apply"), std::string::npos);
}

}  // namespace
}  // namespace cronwheel::cli
