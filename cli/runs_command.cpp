// cronwheel runs list|get|logs|kill

#include <chrono>
#include <climits>
#include <memory>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/job_ref.h"
#include "cli/list_page.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr std::size_t kMessageWidth = 60;
constexpr std::size_t kExecutorWidth = 32;
// How often `runs logs -f` asks for new lines when the last answer had none.
constexpr auto kFollowInterval = 500ms;

std::int64_t run_id(const std::string& text) { return std::get<std::int64_t>(parse_id(text)); }

std::string first_line(const std::string& text) { return text.substr(0, text.find_first_of("\r\n")); }

// The last line of `text` with something on it: where XXL-JOB's trigger message, a report of
// several lines, says how the trigger ended.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  const std::size_t start = text.find_last_of("\r\n", end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

// What a run came to, in a few words: the handler's code and message once it ended, else how
// its trigger failed.
std::string result_of(const json& run) {
  const std::string state = text_of(run, "state");
  if (state == "succeeded" || state == "failed" || state == "lost") {
    const auto code = int_of(run, "handleCode");
    const std::string message = first_line(text_of(run, "handleMsg"));
    if (code != 0 || !message.empty()) return std::to_string(code) + (message.empty() ? "" : " " + message);
    return last_line(text_of(run, "triggerMsg"));
  }
  return {};
}

// "CODE MESSAGE", or "" when there is neither.
std::string code_and_message(const json& run, const char* code_key, const char* message_key) {
  const auto code = int_of(run, code_key);
  const std::string message = text_of(run, message_key);
  if (code == 0 && message.empty()) return {};
  return std::to_string(code) + (message.empty() ? "" : " " + message);
}

// ---- runs list

struct RunListOptions {
  std::string job;
  std::string group;
  std::string backfill;
  std::string state;
  int limit = kDefaultListLimit;
};

int list_runs(Context& ctx, const RunListOptions& options) {
  QueryParameters filters;
  if (!options.job.empty()) filters.push_back(job_filter(ctx, options.job));
  if (!options.group.empty()) filters.push_back(group_filter(ctx, options.group));
  if (!options.backfill.empty()) filters.emplace_back("backfillId", options.backfill);
  if (!options.state.empty()) filters.emplace_back("status", options.state);
  ListTable table;
  table.plural = "runs";
  table.headers = {"JOB ID", "STATE", "TRIGGER", "SCHEDULED", "EXECUTOR", "RESULT"};
  table.row = [](const json& run, const AppNames&) -> std::vector<std::string> {
    return {std::to_string(int_of(run, "jobId")),
            cell_text(text_of(run, "state")),
            cell_text(text_of(run, "triggerType")),
            local_time(int_of(run, "scheduledTime")),
            cell_text(text_of(run, "executorAddress"), kExecutorWidth),
            cell_text(result_of(run), kMessageWidth)};
  };
  return print_list_page(ctx, "logs", std::move(filters), options.limit, table);
}

// ---- runs get

int get_run(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    const json run = ctx.api().get("logs/" + std::to_string(run_id(text)));
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), run);
      return kExitOk;
    }
    print_fields(ctx.out(), {
                                {"ID", std::to_string(int_member(run, "id"))},
                                {"Job ID", text_of(run, "jobId")},
                                {"Group ID", text_of(run, "jobGroup")},
                                {"State", text_of(run, "state")},
                                {"Trigger", text_of(run, "triggerType")},
                                {"Scheduled", local_time(int_of(run, "scheduledTime"))},
                                {"Triggered", local_time(int_of(run, "triggerTime"))},
                                {"Executor", text_of(run, "executorAddress")},
                                {"Handler", text_of(run, "executorHandler")},
                                {"Parameters", text_of(run, "executorParam")},
                                {"Shard", text_of(run, "shardIndex") + " of " + text_of(run, "shardTotal")},
                                {"Trigger result", code_and_message(run, "triggerCode", "triggerMsg")},
                                {"Ended", local_time(int_of(run, "handleTime"))},
                                {"Result", code_and_message(run, "handleCode", "handleMsg")},
                                {"Parent run", text_of(run, "parentLogId")},
                            });
    return kExitOk;
  });
}

// ---- runs logs [-f]

// Whether a follower should wait for the run: it has not reached an executor yet, or (for an
// executor that does not answer) it still runs there. The state is read after the failed call:
// a 409 (the run was being sent, its executor had no log of it yet) followed by `triggered`
// means it reached the executor in between, so the next call finds its log.
bool worth_waiting(ApiClient& api, std::int64_t id, const ApiError& error) {
  if (error.http_status() != 409 && error.http_status() != 502) return false;
  const std::string state = string_member(api.get("logs/" + std::to_string(id)), "state");
  if (state == "pending" || state == "sending") return true;
  return state == "triggered";
}

// Prints the run's log from its first line. Without `follow`, what there is now; with it, every
// line up to the end of the run (the content's isEnd, which the admin says once the run has
// ended and no line is left), asking again every kFollowInterval while nothing new comes.
int print_log(Context& ctx, const std::string& text, bool follow) {
  return ctx.about(text, [&] {
    ApiClient& api = ctx.api();
    const auto id = run_id(text);
    std::int64_t from = 1;
    bool ends_in_newline = true;
    for (;;) {
      if (follow && !ctx.pause(0ms)) return static_cast<int>(kExitInterrupted);  // a log that never pauses
      json page;
      try {
        page = api.get("logs/" + std::to_string(id) + "/content?fromLine=" + std::to_string(from));
      } catch (const ApiError& e) {
        if (!follow || !worth_waiting(api, id, e)) throw;
        if (!ctx.pause(kFollowInterval)) return static_cast<int>(kExitInterrupted);
        continue;
      }
      const auto to = int_member(page, "toLine");
      const std::string content = string_member(page, "content");
      const bool end = bool_member(page, "isEnd");
      const bool new_lines = to >= from;
      if (new_lines) {
        ctx.out() << content;
        ctx.out().flush();
        if (!content.empty()) ends_in_newline = content.back() == '\n';
        if (to >= INT_MAX) break;  // fromLine cannot go further
        from = to + 1;
      } else if (end && from == 1 && !content.empty()) {
        // No line at all, and a message instead: XXL-JOB's "readLog fail, logFile not exists".
        throw operation_failed("the executor has no log of this run: " + one_line(content, 200));
      }
      if (end) break;
      if (new_lines) continue;  // more may be there already
      if (!follow) break;
      if (!ctx.pause(kFollowInterval)) return static_cast<int>(kExitInterrupted);
    }
    if (!ends_in_newline) ctx.out() << "\n";
    return static_cast<int>(kExitOk);
  });
}

// ---- runs kill

int kill_run(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    const auto id = run_id(text);
    ctx.api().post("logs/" + std::to_string(id) + "/kill");
    if (ctx.format() == OutputFormat::kTable) ctx.out() << "run " << id << " killed\n";
    else print_document(ctx.out(), ctx.format(), json{{"id", id}, {"killed", true}});
    return kExitOk;
  });
}

}  // namespace

void add_runs_commands(CommandLine& command_line) {
  CLI::App* runs = command_line.add_group("runs", "List runs, read and follow their logs, kill them");

  {
    auto options = std::make_shared<RunListOptions>();
    CLI::App* list = command_line.add_command(
        *runs, "list", "List runs, newest scheduled first",
        "Lists fires and runs: id, job id, state (pending, sending, triggered, succeeded, failed,\n"
        "lost, cancelled), trigger type, scheduled time (local time), executor and result.\n"
        "--state filters by outcome: success, failure (failed or lost), running (triggered),\n"
        "pending (not sent yet) or cancelled. -o json and -o yaml print the API's page.\n\n"
        "EXAMPLES\n"
        "  cronwheel runs list --job billing/nightly-invoices\n"
        "  cronwheel runs list --group billing --state failure --limit 100\n"
        "  cronwheel runs list --backfill 12 --state failure\n",
        [options](Context& ctx) { return list_runs(ctx, *options); });
    list->add_option("--job", options->job, "Only the runs of this job (id or APP/NAME)")
        ->type_name("JOB")
        ->check(job_ref_check());
    add_group_option(*list, options->group, "the runs");
    list->add_option("--backfill", options->backfill, "Only the runs of this backfill (and their retries), by its id")
        ->type_name("ID")
        ->check(id_check());
    list->add_option("--state", options->state, "Only runs that succeeded, failed, run, wait or were cancelled")
        ->type_name("STATE")
        ->check(CLI::IsMember({"success", "failure", "running", "pending", "cancelled"}));
    add_limit_option(*list, options->limit, "runs");
  }

  {
    auto id = std::make_shared<std::string>();
    CLI::App* get = command_line.add_command(
        *runs, "get", "Show one run",
        "Shows the run: its job, state, times, executor and the trigger's and handler's results.\n\n"
        "ARGUMENTS\n"
        "  ID  the run's id (cronwheel runs list shows them)\n\n"
        "EXAMPLES\n"
        "  cronwheel runs get 1234 -o json\n",
        [id](Context& ctx) { return get_run(ctx, *id); });
    get->add_option("ID", *id, "The run's id")->required()->check(id_check());
  }

  {
    auto id = std::make_shared<std::string>();
    auto follow = std::make_shared<bool>(false);
    CLI::App* logs = command_line.add_command(
        *runs, "logs", "Print a run's log; -f follows it to the run's end",
        "Prints the run's output as the executor that ran it has it. With -f, keeps printing new\n"
        "lines as they come (asking twice a second) until the run has ended and its last line is\n"
        "printed, as `kubectl logs -f` does; a run not yet at an executor is waited for. Ctrl-C\n"
        "stops following (exit status 130).\n\n"
        "ARGUMENTS\n"
        "  ID  the run's id (cronwheel jobs trigger prints it)\n\n"
        "EXAMPLES\n"
        "  cronwheel runs logs 1234\n"
        "  cronwheel runs logs -f $(cronwheel jobs trigger billing/reconcile -o json | jq .id)\n",
        [id, follow](Context& ctx) { return print_log(ctx, *id, *follow); });
    logs->add_option("ID", *id, "The run's id")->required()->check(id_check());
    logs->add_flag("-f,--follow", *follow, "Follow the log until the run ends");
  }

  {
    auto id = std::make_shared<std::string>();
    CLI::App* kill = command_line.add_command(
        *runs, "kill", "Kill a running run",
        "Asks the executor running the run to kill it; the run ends as failed. Only a run in state\n"
        "triggered can be killed (409 otherwise).\n\n"
        "ARGUMENTS\n"
        "  ID  the run's id\n\n"
        "EXAMPLES\n"
        "  cronwheel runs kill 1234\n",
        [id](Context& ctx) { return kill_run(ctx, *id); });
    kill->add_option("ID", *id, "The run's id")->required()->check(id_check());
  }
}

}  // namespace cronwheel::cli
