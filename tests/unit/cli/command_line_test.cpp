// The `cronwheel` commands against a scripted API: what they send, what they print, the one-line
// errors and the exit statuses (0 success, 1 failed operation, 2 bad usage, 130 Ctrl-C).

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/cli/cli_harness.h"

namespace cronwheel::cli {
namespace {

using nlohmann::json;
using testing::CliHarness;
using testing::CliResult;
using testing::job_json;
using testing::page_of;

// The number of lines of `text` (each ending in '\n').
std::size_t lines(const std::string& text) {
  std::size_t count = 0;
  for (char c : text) count += c == '\n';
  return count;
}

using CommandLineTest = testing::CliCommandTest;

// ---- usage

TEST_F(CommandLineTest, UnknownOptionIsBadUsage) {
  expect_usage_error({"jobs", "list", "--bogus"}, "cronwheel: jobs list: The following argument was not expected: --bogus");
}

TEST_F(CommandLineTest, MissingArgumentIsBadUsage) {
  expect_usage_error({"jobs", "get"}, "cronwheel: jobs get: JOB is required");
  expect_usage_error({"runs", "kill"}, "cronwheel: runs kill: ID is required");
}

TEST_F(CommandLineTest, BadValuesAreBadUsageBeforeAnythingIsSent) {
  expect_usage_error({"jobs", "list", "--limit", "0"}, "cronwheel: jobs list: --limit: Value 0 not in range 1 to 1000");
  expect_usage_error({"jobs", "list", "--status", "paused"},
                     "cronwheel: jobs list: --status: paused not in {running,stopped}");
  expect_usage_error({"jobs", "get", "nightly"},
                     "cronwheel: jobs get: JOB: 'nightly': a job is its numeric id or APP/NAME (the group's app name "
                     "and the job's name)");
  expect_usage_error({"jobs", "start", "7", "billing/Bad"},
                     "cronwheel: jobs start: JOB: 'billing/Bad': a job name has only a-z, 0-9, '.', '_' and '-', and "
                     "starts with a letter or digit");
  expect_usage_error({"runs", "logs", "abc"}, "cronwheel: runs logs: ID: 'abc': an id is a positive whole number");
  expect_usage_error({"runs", "list", "--state", "done"},
                     "cronwheel: runs list: --state: done not in {success,failure,running,pending,cancelled}");
  expect_usage_error({"groups", "pause", "bad app"},
                     "cronwheel: groups pause: APP: 'bad app': an app name has only letters, digits, '.', '_' and '-', "
                     "and starts with a letter or digit");
  expect_usage_error({"jobs", "list", "-o", "xml"}, "cronwheel: jobs list: --output: xml not in {table,json,yaml}");
  expect_usage_error({"jobs", "list", "--timeout", "0"},
                     "cronwheel: jobs list: --timeout: Value 0 not in range 1 to 3600");
}

TEST_F(CommandLineTest, HugeArgumentsAreRefused) {
  CliHarness cli;
  const CliResult r = cli.run({"jobs", "trigger", "7", "--param", std::string(70'000, 'x')});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("longer than 65536 bytes"), std::string::npos) << r.err.substr(0, 200);
  EXPECT_EQ(lines(r.err), 1u);
  EXPECT_LT(r.err.size(), 1000u);  // the value is not echoed whole
  EXPECT_TRUE(cli.api.calls().empty());
}

TEST_F(CommandLineTest, AGroupOfCommandsAloneNamesItsCommands) {
  expect_usage_error({"jobs"},
                     "cronwheel: jobs: a command is required: list, get, start, stop, delete, trigger, backfill (see "
                     "cronwheel jobs --help)");
  expect_usage_error({}, "cronwheel: a command is required: jobs, groups, runs, backfills, workflows, workflow-runs, calendars, "
                         "version (see cronwheel --help)");
}

TEST_F(CommandLineTest, TokenAndTokenFileTogetherAreBadUsage) {
  CliHarness cli;
  const CliResult r = cli.run({"--token", "a", "--token-file", "/dev/null", "jobs", "list"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--token"), std::string::npos) << r.err;
  EXPECT_TRUE(cli.api.calls().empty());
}

TEST_F(CommandLineTest, BadSettingsAreBadUsageNamingTheSource) {
  cli_.environment["CRONWHEEL_URL"] = "localhost:8080";
  const CliResult r = cli_.run({"jobs", "list"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("cronwheel: CRONWHEEL_URL: 'localhost:8080' is not an http(s) URL", 0), 0u) << r.err;
  EXPECT_EQ(lines(r.err), 1u);
  EXPECT_TRUE(cli_.api.calls().empty());
}

TEST_F(CommandLineTest, EveryCommandHasAManPageLikeHelp) {
  const std::vector<std::vector<std::string>> commands = {
      {"jobs", "list"},    {"jobs", "get"},   {"jobs", "start"},  {"jobs", "stop"},   {"jobs", "delete"},
      {"jobs", "trigger"}, {"groups", "list"}, {"groups", "pause"}, {"groups", "resume"}, {"runs", "list"},
      {"runs", "get"},     {"runs", "logs"},  {"runs", "kill"},   {"version"},
      {"workflows", "list"}, {"workflows", "get"}, {"workflows", "start"}, {"workflows", "stop"},
      {"workflows", "delete"}, {"workflows", "trigger"}, {"workflows", "check"}, {"workflow-runs", "list"},
      {"workflow-runs", "get"}, {"workflow-runs", "cancel"}, {"workflow-runs", "rerun"},
      {"calendars", "list"}, {"calendars", "get"}, {"calendars", "create"}, {"calendars", "apply"},
      {"calendars", "delete"}, {"calendars", "import"}, {"calendars", "export"}, {"calendars", "days"}};
  for (auto args : commands) {
    args.push_back("--help");
    CliHarness cli;
    const CliResult r = cli.run(args);
    const std::string name = args[0] + (args.size() > 2 ? " " + args[1] : "");
    EXPECT_EQ(r.status, 0) << name;
    EXPECT_NE(r.out.find("Usage: cronwheel " + name), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("EXAMPLES\n  cronwheel " + name), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("EXIT STATUS"), std::string::npos) << name;
    EXPECT_NE(r.out.find("GLOBAL OPTIONS"), std::string::npos) << name;
    EXPECT_EQ(r.err, "") << name;
  }
}

TEST_F(CommandLineTest, VersionPrintsTheClientsVersionWithoutSettings) {
  cli_.environment["CRONWHEEL_URL"] = "not a url";  // not read
  CliResult r = cli_.run({"version"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, std::string("cronwheel ") + CRONWHEEL_VERSION + "\n");
  r = cli_.run({"version", "-o", "json"});
  EXPECT_EQ(json::parse(r.out), (json{{"client", CRONWHEEL_VERSION}}));
}

TEST_F(CommandLineTest, ACommandAddedLikeTheOthersMayTakeItsOwnDashOAndExitStatus) {
  // What `export -o FILE` and `apply --dry-run` (exit status 3) will do.
  std::ostringstream out, err;
  testing::FakeApi fake;
  fake.answer_text("GET api/v1/export?appName=a%2Cb", 200, "groups: []\n");
  CommandLine command_line(Io{out, err, [](const std::string&) { return std::optional<std::string>(); },
                              [&fake](const Settings&, std::chrono::milliseconds) -> std::unique_ptr<Transport> {
                                return std::make_unique<testing::FakeTransport>(fake);
                              },
                              [](std::chrono::milliseconds) { return true; }});
  add_jobs_commands(command_line);
  auto file = std::make_shared<std::string>();
  CLI::App* command = command_line.add_command(command_line.app(), "export", "Export", "", [file](Context& ctx) {
    ApiRequest request;
    request.target = "export" + query_string({{"appName", "a,b"}});
    request.accept = "application/yaml";
    ctx.out() << *file << ": " << ctx.api().request(request).body;
    return static_cast<int>(kExitChanges);
  });
  command->add_option("-o,--output", *file, "File to write");
  EXPECT_EQ(command_line.run({"export", "-o", "jobs.yaml"}), 3) << err.str();
  EXPECT_EQ(out.str(), "jobs.yaml: groups: []\n");
  EXPECT_EQ(fake.requests().at(0).accept, "application/yaml");
}

// ---- settings reach the transport

TEST_F(CommandLineTest, GlobalOptionsWorkBeforeAndAfterTheCommand) {
  cli_.api.answer("GET api/v1/jobs?limit=20", 200, page_of(json::array()));
  cli_.environment["CRONWHEEL_URL"] = "http://env.example:1";
  EXPECT_EQ(cli_.run({"jobs", "list"}).status, 0);
  EXPECT_EQ(cli_.settings->url, "http://env.example:1");
  EXPECT_EQ(cli_.run({"--url", "http://before.example:2", "jobs", "list"}).status, 0);
  EXPECT_EQ(cli_.settings->url, "http://before.example:2");
  EXPECT_EQ(cli_.run({"jobs", "list", "--url", "http://after.example:3", "--token", "t0k"}).status, 0);
  EXPECT_EQ(cli_.settings->url, "http://after.example:3");
  EXPECT_EQ(cli_.settings->token, "t0k");
}

// ---- error lines

TEST_F(CommandLineTest, NoSuchJobByNameSaysSoInOneLine) {
  cli_.api.answer("GET api/v1/jobs?appName=billing&name=nightly&limit=2", 200, page_of(json::array()));
  const CliResult r = cli_.run({"jobs", "get", "billing/nightly"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: jobs get billing/nightly: no such job\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(CommandLineTest, ApiErrorsCarryTheApisMessageAndTheStatus) {
  cli_.api.error("GET api/v1/jobs/42", 404, "not_found", "no such job: 42");
  const CliResult r = cli_.run({"jobs", "get", "42"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: jobs get 42: no such job: 42 (HTTP 404)\n");
}

TEST_F(CommandLineTest, AServerMessageOverSeveralLinesIsSaidOnOne) {
  cli_.api.error("POST api/v1/jobs/42/start", 400, "invalid", "scheduleConf: bad\nsecond line\x1b[2J");
  const CliResult r = cli_.run({"jobs", "start", "42"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: jobs start 42: scheduleConf: bad second line [2J (HTTP 400)\n");
}

TEST_F(CommandLineTest, NoAnswerNamesTheUrlAlone) {
  cli_.api.unreachable("cannot reach http://127.0.0.1:8080: connection refused");
  const CliResult r = cli_.run({"jobs", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: cannot reach http://127.0.0.1:8080: connection refused\n");
}

TEST_F(CommandLineTest, UnauthorizedWithoutATokenSaysHowToGiveOne) {
  cli_.api.error("GET api/v1/jobs?limit=20", 401, "unauthorized", "no valid session or token");
  CliResult r = cli_.run({"jobs", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "cronwheel: jobs list: no valid session or token; give an API token with --token, CRONWHEEL_TOKEN or the "
            "settings file (HTTP 401)\n");
  r = cli_.run({"jobs", "list", "--token", "wrong"});
  EXPECT_EQ(r.err, "cronwheel: jobs list: no valid session or token (HTTP 401)\n");
}

TEST_F(CommandLineTest, AnAnswerThatIsNotTheApisIsUnexpected) {
  cli_.api.answer_text("GET api/v1/jobs?limit=20", 200, "<html>proxy login</html>");
  CliResult r = cli_.run({"jobs", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: jobs list: unexpected answer from the server: not JSON\n");

  CliHarness other;
  other.api.answer("GET api/v1/jobs?limit=20", 200, {{"items", "none"}});
  r = other.run({"jobs", "list"});
  EXPECT_EQ(r.err, "cronwheel: jobs list: unexpected answer from the server: 'items' is not a list\n");

  CliHarness deep;
  deep.api.answer_text("GET api/v1/jobs?limit=20", 200, std::string(100'000, '[') + std::string(100'000, ']'));
  r = deep.run({"jobs", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: jobs list: unexpected answer from the server: JSON nested too deeply\n");
}

TEST_F(CommandLineTest, AnErrorAnswerThatIsNotTheApisShowsItsStart) {
  cli_.api.answer_text("GET api/v1/jobs?limit=20", 502, "Bad Gateway\n<html>...");
  const CliResult r = cli_.run({"jobs", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: jobs list: the server answered: Bad Gateway <html>... (HTTP 502)\n");
}

// ---- jobs

TEST_F(CommandLineTest, JobsListPrintsATableWithAppNames) {
  cli_.api.answer("GET api/v1/jobs?limit=20", 200,
                  page_of(json::array({job_json(8, 2, "reconcile", 1), job_json(7, 1, "nightly-invoices")})));
  cli_.api.answer("GET api/v1/groups?limit=1000", 200,
                  page_of(json::array({{{"id", 1}, {"appName", "billing"}}, {{"id", 2}, {"appName", "ledger"}}})));
  const CliResult r = cli_.run({"jobs", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  JOB                       STATUS   SCHEDULE     NEXT FIRE                  DESCRIPTION\n"
            "8   ledger/reconcile          running  0 0 2 * * ?  2026-01-01T00:00:00+00:00  Job reconcile\n"
            "7   billing/nightly-invoices  stopped  0 0 2 * * ?  -                          Job nightly-invoices\n");
}

TEST_F(CommandLineTest, JobsListFiltersGoIntoTheQuery) {
  cli_.api.answer("GET api/v1/jobs?appName=billing&triggerStatus=1&text=in%20voice&limit=5", 200,
                  page_of(json::array({job_json(7, 1, "nightly", 1)})));
  const CliResult r =
      cli_.run({"jobs", "list", "--group", "billing", "--status", "running", "--search", "in voice", "--limit", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("billing/nightly"), std::string::npos) << r.out;
  EXPECT_EQ(cli_.api.calls().size(), 1u);  // the app name is known: no group lookup
}

TEST_F(CommandLineTest, JobsListSaysWhenThePageIsPartial) {
  json page = page_of(json::array({job_json(7, 1, "a")}));
  page["total"] = 57;
  cli_.api.answer("GET api/v1/jobs?appName=billing&limit=1", 200, page);
  const CliResult r = cli_.run({"jobs", "list", "--group", "billing", "--limit", "1"});
  EXPECT_EQ(r.err, "(1 of 57 jobs shown; --limit shows up to 1000)\n");
}

TEST_F(CommandLineTest, JobsListAsJsonAndYamlIsThePageAsAnswered) {
  const json page = page_of(json::array({job_json(7, 1, "nightly")}));
  cli_.api.answer("GET api/v1/jobs?limit=20", 200, page);
  CliResult r = cli_.run({"jobs", "list", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), page);
  r = cli_.run({"-o", "yaml", "jobs", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("items:\n  - ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n    id: 7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scheduleConf: \"0 0 2 * * ?\""), std::string::npos) << r.out;
}

TEST_F(CommandLineTest, JobsGetPrintsTheJobsFields) {
  cli_.api.answer("GET api/v1/jobs?appName=billing&name=nightly&limit=2", 200, page_of(json::array({job_json(7, 1, "nightly")})));
  cli_.api.answer("GET api/v1/jobs/7", 200, job_json(7, 1, "nightly", 1));
  cli_.api.answer("GET api/v1/groups?limit=1000", 200, page_of(json::array({{{"id", 1}, {"appName", "billing"}}})));
  const CliResult r = cli_.run({"jobs", "get", "billing/nightly"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("ID:            7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Job:           billing/nightly\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Status:        running\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Next fire:     2026-01-01T00:00:00+00:00\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Handler:       demo\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Retries:       0, 0 s apart\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Concurrency:   no limit\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Priority:      0\n"), std::string::npos) << r.out;
}

TEST_F(CommandLineTest, JobsGetSaysHowRetriesWaitAndTheJobsLimitAndPriority) {
  json job = job_json(7, 1, "nightly");
  job.update({{"executorFailRetryCount", 3}, {"retryInterval", 30}, {"retryBackoff", "EXPONENTIAL"},
              {"retryMultiplier", 1.5}, {"retryMaxInterval", 600}, {"retryJitter", 10}, {"maxConcurrent", 2},
              {"priority", -5}});
  cli_.api.answer("GET api/v1/jobs/7", 200, job);
  cli_.api.answer("GET api/v1/groups?limit=1000", 200, page_of(json::array({{{"id", 1}, {"appName", "billing"}}})));
  CliResult r = cli_.run({"jobs", "get", "7"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Retries:       3, 30 s then 1.5 times longer each, at most 600 s, up to 10% sooner\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Concurrency:   at most 2 at once\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Priority:      -5\n"), std::string::npos) << r.out;

  job.update({{"retryMultiplier", 2.0}, {"retryMaxInterval", 0}, {"retryJitter", 0}});
  cli_.api.answer("GET api/v1/jobs/8", 200, job);
  r = cli_.run({"jobs", "get", "8"});
  EXPECT_NE(r.out.find("Retries:       3, 30 s then 2 times longer each\n"), std::string::npos) << r.out;
}

TEST_F(CommandLineTest, JobsStartTriesEveryJobAndFailsIfAnyFailed) {
  cli_.api.answer("POST api/v1/jobs/1/start", 200, job_json(1, 1, "a", 1));
  cli_.api.answer("GET api/v1/jobs?appName=billing&name=gone&limit=2", 200, page_of(json::array()));
  cli_.api.error("POST api/v1/jobs/2/start", 400, "invalid", "scheduleType: a job without a schedule cannot start");
  cli_.api.answer("GET api/v1/jobs?appName=billing&name=c&limit=2", 200, page_of(json::array({job_json(3, 1, "c")})));
  cli_.api.answer("POST api/v1/jobs/3/start", 200, job_json(3, 1, "c", 1));
  const CliResult r = cli_.run({"jobs", "start", "1", "billing/gone", "2", "billing/c"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "job 1 started, next fire 2026-01-01T00:00:00+00:00\n"
            "job billing/c (3) started, next fire 2026-01-01T00:00:00+00:00\n");
  EXPECT_EQ(r.err,
            "cronwheel: jobs start billing/gone: no such job\n"
            "cronwheel: jobs start 2: scheduleType: a job without a schedule cannot start (HTTP 400)\n");
  // The body of a start is an empty object (the API allows no other).
  for (const auto& request : cli_.api.requests()) {
    if (request.method == "POST") {
      EXPECT_EQ(request.body.value_or(""), "{}");
    }
  }
}

TEST_F(CommandLineTest, JobsStopGoesNoFurtherWhenTheServerCannotBeReached) {
  cli_.api.unreachable("cannot reach http://127.0.0.1:8080: connection refused");
  const CliResult r = cli_.run({"jobs", "stop", "1", "2", "3"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: cannot reach http://127.0.0.1:8080: connection refused\n");
  EXPECT_EQ(cli_.api.calls().size(), 1u);
}

TEST_F(CommandLineTest, JobsDeleteDeletesEachJobAndPrintsALineForEach) {
  cli_.api.answer("DELETE api/v1/jobs/4", 204, nullptr);
  cli_.api.answer("DELETE api/v1/jobs/5", 204, nullptr);
  CliResult r = cli_.run({"jobs", "delete", "4", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "job 4 deleted\njob 5 deleted\n");
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{"DELETE api/v1/jobs/4", "DELETE api/v1/jobs/5"}));
  r = cli_.run({"jobs", "delete", "4", "-o", "json"});
  EXPECT_EQ(json::parse(r.out), json::parse(R"([{"id":4}])"));
}

TEST_F(CommandLineTest, JobsStopAsJsonIsTheListOfJobsAsAnswered) {
  cli_.api.answer("POST api/v1/jobs/1/stop", 200, job_json(1, 1, "a"));
  const CliResult r = cli_.run({"jobs", "stop", "1", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), json::array({job_json(1, 1, "a")}));
}

TEST_F(CommandLineTest, JobsTriggerSendsTheParameterOnlyWhenGiven) {
  cli_.api.answer("POST api/v1/jobs/7/trigger", 201, {{"id", 900}, {"state", "pending"}});
  CliResult r = cli_.run({"jobs", "trigger", "7"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "job 7 triggered: run 900\n");
  EXPECT_EQ(cli_.api.requests().back().body, "{}");

  r = cli_.run({"jobs", "trigger", "7", "--param", "region=eu"});
  EXPECT_EQ(json::parse(*cli_.api.requests().back().body), (json{{"executorParam", "region=eu"}}));
  r = cli_.run({"jobs", "trigger", "7", "--param", ""});
  EXPECT_EQ(json::parse(*cli_.api.requests().back().body), (json{{"executorParam", ""}}));
  r = cli_.run({"jobs", "trigger", "7", "-o", "json"});
  EXPECT_EQ(json::parse(r.out)["id"], 900);
}

// ---- groups

TEST_F(CommandLineTest, GroupsListShowsLimitsAndAddresses) {
  cli_.api.answer("GET api/v1/groups?limit=100", 200,
                  page_of(json::array({{{"id", 1}, {"appName", "billing"}, {"title", "Billing"}, {"addressType", 0},
                                        {"addressList", {"http://10.0.0.5:9999/"}}, {"maxRunning", 10}},
                                       {{"id", 2}, {"appName", "ledger"}, {"title", "Ledger"}, {"addressType", 1},
                                        {"addressList", json::array()}}})));
  const CliResult r = cli_.run({"groups", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  APP      TITLE    LIMIT       ADDRESSES\n"
            "1   billing  Billing  10 at once  automatic: http://10.0.0.5:9999/\n"
            "2   ledger   Ledger   none        manual: none\n");
}

TEST_F(CommandLineTest, GroupsPauseAndResumeByAppName) {
  cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200,
                  page_of(json::array({{{"id", 4}, {"appName", "billing-eu"}}, {{"id", 3}, {"appName", "billing"}}})));
  cli_.api.answer("POST api/v1/groups/3/pause", 200, {{"paused", {7, 8}}});
  cli_.api.answer("POST api/v1/groups/3/resume", 200,
                  {{"resumed", {7}}, {"notResumed", {{{"id", 8}, {"name", "once"}, {"reason", "no fire time left"}}}}});
  CliResult r = cli_.run({"groups", "pause", "billing"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "group billing paused: 2 jobs stopped (ids 7, 8)\n");
  r = cli_.run({"groups", "resume", "billing"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "group billing resumed: 1 job started (ids 7)\n"
            "job billing/once (8) stays stopped: no fire time left\n");
}

TEST_F(CommandLineTest, GroupsPauseOfAnUnknownGroupFails) {
  cli_.api.answer("GET api/v1/groups?text=nope&offset=0&limit=1000", 200, page_of(json::array()));
  const CliResult r = cli_.run({"groups", "pause", "nope"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: groups pause nope: no such group\n");
}

// ---- runs

TEST_F(CommandLineTest, RunsListResolvesTheJobAndFiltersByState) {
  cli_.api.answer("GET api/v1/jobs?appName=billing&name=nightly&limit=2", 200, page_of(json::array({job_json(7, 1, "nightly")})));
  cli_.api.answer("GET api/v1/logs?jobId=7&status=failure&limit=20", 200,
                  page_of(json::array({{{"id", 900},
                                        {"jobId", 7},
                                        {"state", "failed"},
                                        {"triggerType", "SCHEDULE"},
                                        {"scheduledTime", 1767225600000},
                                        {"executorAddress", "http://10.0.0.5:9999/"},
                                        {"handleCode", 500},
                                        {"handleMsg", "exit code 4\nstack..."}}})));
  const CliResult r = cli_.run({"runs", "list", "--job", "billing/nightly", "--state", "failure"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID   JOB ID  STATE   TRIGGER   SCHEDULED                  EXECUTOR               RESULT\n"
            "900  7       failed  SCHEDULE  2026-01-01T00:00:00+00:00  http://10.0.0.5:9999/  500 exit code 4\n");
}

TEST_F(CommandLineTest, RunsListShowsHowAFailedTriggerEnded) {
  cli_.api.answer("GET api/v1/logs?limit=20", 200,
                  page_of(json::array({{{"id", 901},
                                        {"jobId", 7},
                                        {"state", "failed"},
                                        {"triggerType", "MANUAL"},
                                        {"triggerCode", 500},
                                        {"triggerMsg", "Trigger type: MANUAL<br>Route strategy: FIRST\n"
                                                       ">>>>>>>>>>> Trigger <<<<<<<<<<<\nFailed: no executor address\n"},
                                        {"handleCode", 0},
                                        {"handleMsg", ""}}})));
  const CliResult r = cli_.run({"runs", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  Failed: no executor address\n"), std::string::npos) << r.out;
}

TEST_F(CommandLineTest, RunsListOfAnUnknownJobNamesTheOption) {
  cli_.api.answer("GET api/v1/jobs?appName=billing&name=gone&limit=2", 200, page_of(json::array()));
  const CliResult r = cli_.run({"runs", "list", "--job", "billing/gone"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: runs list --job billing/gone: no such job\n");
}

json content(int from, int to, const std::string& text, bool end) {
  return {{"fromLine", from}, {"toLine", to}, {"content", text}, {"isEnd", end}};
}

TEST_F(CommandLineTest, RunsLogsPrintsWhatThereIsNow) {
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=1", 200, content(1, 2, "one\ntwo\n", false));
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=3", 200, content(3, 2, "", false));
  const CliResult r = cli_.run({"runs", "logs", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "one\ntwo\n");
  EXPECT_TRUE(cli_.pauses.empty());
}

TEST_F(CommandLineTest, RunsLogsFollowWaitsForAPendingRunAndStopsAtTheEnd) {
  cli_.api.error("GET api/v1/logs/5/content?fromLine=1", 409, "conflict", "run 5 has no executor yet (state pending)");
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=1", 200, content(1, 1, "starting\n", false));
  cli_.api.answer("GET api/v1/logs/5", 200, {{"id", 5}, {"state", "pending"}});
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=2", 200, content(2, 1, "", false));
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=2", 200, content(2, 3, "working\ndone", false));
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=4", 200, content(4, 3, "", true));
  const CliResult r = cli_.run({"runs", "logs", "-f", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "starting\nworking\ndone\n");  // a newline after an unterminated last line
  EXPECT_EQ(cli_.pauses.size(), 2u);  // after the 409, after the answer with no new line
  for (auto pause : cli_.pauses) EXPECT_EQ(pause, std::chrono::milliseconds(500));
}

// The run was being sent when its log was asked for (409) and had reached its executor by the
// time its state was read: the follower asks again rather than giving up.
TEST_F(CommandLineTest, RunsLogsFollowWaitsForARunThatReachedItsExecutorMeanwhile) {
  cli_.api.error("GET api/v1/logs/5/content?fromLine=1", 409, "conflict",
                 "run 5 is being sent to executor http://127.0.0.1:9999/, which has no log of it yet");
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=1", 200, content(1, 1, "done\n", true));
  cli_.api.answer("GET api/v1/logs/5", 200, {{"id", 5}, {"state", "triggered"}});
  const CliResult r = cli_.run({"runs", "logs", "-f", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(cli_.pauses.size(), 1u);
}

TEST_F(CommandLineTest, RunsLogsFollowEndsOnCtrlC) {
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=1", 200, content(1, 1, "line\n", false));
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=2", 200, content(2, 1, "", false));
  cli_.pauses_before_interrupt = 3;
  const CliResult r = cli_.run({"runs", "logs", "5", "--follow"});
  EXPECT_EQ(r.status, 130);
  EXPECT_EQ(r.out, "line\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CommandLineTest, RunsLogsFollowEndsOnCtrlCWhileLinesKeepComing) {
  for (int from = 1; from <= 200; ++from) {
    cli_.api.answer("GET api/v1/logs/5/content?fromLine=" + std::to_string(from), 200,
                    content(from, from, "line " + std::to_string(from) + "\n", false));
  }
  cli_.pauses_before_interrupt = 3;  // Ctrl-C after the third page, which had new lines
  const CliResult r = cli_.run({"runs", "logs", "-f", "5"});
  EXPECT_EQ(r.status, 130);
  EXPECT_EQ(r.out, "line 1\nline 2\nline 3\n");
  EXPECT_EQ(cli_.api.calls().size(), 3u);
}

TEST_F(CommandLineTest, RunsLogsOfARunWithoutExecutorFailsUnlessItWillHaveOne) {
  cli_.api.error("GET api/v1/logs/5/content?fromLine=1", 409, "conflict", "run 5 has no executor yet (state cancelled)");
  cli_.api.answer("GET api/v1/logs/5", 200, {{"id", 5}, {"state", "cancelled"}});
  CliResult r = cli_.run({"runs", "logs", "-f", "5"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: runs logs 5: run 5 has no executor yet (state cancelled) (HTTP 409)\n");
  EXPECT_TRUE(cli_.pauses.empty());
}

TEST_F(CommandLineTest, RunsLogsSaysWhenTheExecutorHasNoLog) {
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=1", 200, content(1, 0, "readLog fail, logFile not exists", true));
  const CliResult r = cli_.run({"runs", "logs", "5"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: runs logs 5: the executor has no log of this run: readLog fail, logFile not exists\n");
}

TEST_F(CommandLineTest, RunsLogsRefusesAMalformedPage) {
  cli_.api.answer("GET api/v1/logs/5/content?fromLine=1", 200, {{"fromLine", 1}, {"toLine", "2"}});
  const CliResult r = cli_.run({"runs", "logs", "5"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: runs logs 5: unexpected answer from the server: 'toLine' is not an integer\n");
}

TEST_F(CommandLineTest, RunsKillAsksTheApi) {
  cli_.api.answer("POST api/v1/logs/5/kill", 204, nullptr);
  CliResult r = cli_.run({"runs", "kill", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "run 5 killed\n");
  cli_.api.error("POST api/v1/logs/6/kill", 409, "conflict", "run 6 is not running (state succeeded)");
  r = cli_.run({"runs", "kill", "6"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: runs kill 6: run 6 is not running (state succeeded) (HTTP 409)\n");
}

TEST_F(CommandLineTest, RunsGetPrintsTheRun) {
  cli_.api.answer("GET api/v1/logs/5", 200,
                  {{"id", 5}, {"jobId", 7}, {"state", "succeeded"}, {"handleCode", 200}, {"handleMsg", "ok"}});
  const CliResult r = cli_.run({"runs", "get", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("State:           succeeded\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Result:          200 ok\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cronwheel::cli
