#pragma once

// Drives the `cronwheel` command line in-process: a scripted fake of the admin's API in place of
// the network, an environment of the test's choosing, and waits that return at once, moving a
// fake clock on by what they were asked to wait. CliCommandTest is the commands' tests' fixture.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/api_client.h"
#include "cli/command_line.h"
#include "cli/commands.h"

namespace cronwheel::testing {

// The admin's API as a table of answers: "METHOD target" (target as sent, under api/v1/, with
// its query) to a queue of answers, the last of which repeats. Anything else is answered 404
// not_found. Every request is recorded.
class FakeApi {
 public:
  void answer(const std::string& method_and_target, int status, const nlohmann::json& body) {
    answers_[method_and_target].push_back({status, body.is_null() ? std::string() : body.dump(), "application/json"});
  }
  void answer_text(const std::string& method_and_target, int status, std::string body) {
    answers_[method_and_target].push_back({status, std::move(body), "text/plain"});
  }
  void error(const std::string& method_and_target, int status, const std::string& code, const std::string& message) {
    answer(method_and_target, status, {{"error", {{"code", code}, {"message", message}}}});
  }
  // No answer at all for every request: what the transport throws then.
  void unreachable(std::string message) { unreachable_ = std::move(message); }

  cli::ApiAnswer send(const cli::ApiRequest& request) {
    requests_.push_back(request);
    if (unreachable_) throw cli::CliError(cli::kExitFailed, *unreachable_, true);
    auto it = answers_.find(request.method + " " + request.target);
    if (it == answers_.end() || it->second.empty()) {
      return {404, R"({"error":{"code":"not_found","message":"no route in the fake: )" + request.method + " " +
                       request.target + R"("}})",
              "application/json"};
    }
    cli::ApiAnswer answer = it->second.front();
    if (it->second.size() > 1) it->second.pop_front();
    return answer;
  }

  const std::vector<cli::ApiRequest>& requests() const { return requests_; }
  // "METHOD target" of each request, in order.
  std::vector<std::string> calls() const {
    std::vector<std::string> calls;
    for (const auto& r : requests_) calls.push_back(r.method + " " + r.target);
    return calls;
  }

 private:
  std::map<std::string, std::deque<cli::ApiAnswer>> answers_;
  std::vector<cli::ApiRequest> requests_;
  std::optional<std::string> unreachable_;
};

class FakeTransport : public cli::Transport {
 public:
  explicit FakeTransport(FakeApi& api) : api_(api) {}
  cli::ApiAnswer send(const cli::ApiRequest& request) override { return api_.send(request); }

 private:
  FakeApi& api_;
};

struct CliResult {
  int status = -1;
  std::string out;
  std::string err;
};

class CliHarness {
 public:
  FakeApi api;
  std::map<std::string, std::string> environment;
  // The settings the transport was made for (the last run's).
  std::optional<cli::Settings> settings;
  // The waits asked for (zero ones, which only ask whether Ctrl-C came, left out).
  std::vector<std::chrono::milliseconds> pauses;
  // Waits (zero ones too) answered before Ctrl-C comes, after which every wait says
  // "interrupted"; -1: never.
  int pauses_before_interrupt = -1;
  int waits = 0;
  // The commands' steady clock: moved on by each wait answered, and by `clock_step` at each
  // reading (the time requests take).
  std::chrono::steady_clock::time_point clock{};
  std::chrono::milliseconds clock_step{0};
  // Commands added after cronwheel's own, for tests of the pieces commands are made of.
  std::vector<std::function<void(cli::CommandLine&)>> more_commands;

  CliResult run(std::vector<std::string> args) {
    std::ostringstream out, err;
    cli::Io io{out, err,
               [this](const std::string& name) -> std::optional<std::string> {
                 auto it = environment.find(name);
                 if (it == environment.end()) return std::nullopt;
                 return it->second;
               },
               [this](const cli::Settings& s, std::chrono::milliseconds) -> std::unique_ptr<cli::Transport> {
                 settings = s;
                 return std::make_unique<FakeTransport>(api);
               },
               [this](std::chrono::milliseconds d) {
                 if (pauses_before_interrupt >= 0 && waits++ >= pauses_before_interrupt) return false;
                 if (d.count() > 0) pauses.push_back(d);
                 clock += d;
                 return true;
               },
               [this] { return clock += clock_step; }};
    cli::CommandLine command_line(std::move(io));
    cli::add_jobs_commands(command_line);
    cli::add_groups_commands(command_line);
    cli::add_runs_commands(command_line);
    cli::add_backfills_commands(command_line);
    cli::add_workflows_commands(command_line);
    cli::add_workflow_runs_commands(command_line);
    cli::add_calendars_commands(command_line);
    cli::add_version_command(command_line);
    for (const auto& add : more_commands) add(command_line);
    CliResult result;
    result.status = command_line.run(std::move(args));
    result.out = out.str();
    result.err = err.str();
    return result;
  }
};

// The commands' tests: times printed in UTC, a harness to run them, and the check of a usage
// error.
class CliCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }

  // A usage error: status 2, one line on stderr, nothing on stdout, nothing sent. Run on a harness
  // of its own with cli_'s commands.
  void expect_usage_error(std::vector<std::string> args, const std::string& line) {
    CliHarness cli;
    cli.more_commands = cli_.more_commands;
    const CliResult r = cli.run(std::move(args));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err, line + "\n");
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(cli.api.calls().empty());
  }

  CliHarness cli_;
};

// A job as the API answers it.
inline nlohmann::json job_json(std::int64_t id, std::int64_t group, const std::string& name, int trigger_status = 0) {
  return {{"id", id},
          {"jobGroup", group},
          {"name", name},
          {"jobDesc", "Job " + name},
          {"author", "ops"},
          {"scheduleType", "CRON"},
          {"scheduleConf", "0 0 2 * * ?"},
          {"timezone", "UTC"},
          {"glueType", "BEAN"},
          {"executorHandler", "demo"},
          {"triggerStatus", trigger_status},
          {"triggerNextTime", trigger_status == 1 ? 1767225600000 : 0},
          {"pausedWithGroup", false}};
}

inline nlohmann::json page_of(const nlohmann::json& items) {
  return {{"items", items},
          {"total", items.size()},
          {"totalExact", true},
          {"nextCursor", nullptr},
          {"prevCursor", nullptr}};
}

}  // namespace cronwheel::testing
