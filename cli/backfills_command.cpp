// cronwheel jobs backfill, cronwheel workflows backfill, and cronwheel backfills list|get|cancel
// (docs/cli.md, "Backfills"; the API: POST jobs/{id}/backfill, POST workflows/{id}/backfill,
// GET backfills, GET backfills/{id}, POST backfills/{id}/cancel).

#include <algorithm>
#include <chrono>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/bulk_commands.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/instant.h"
#include "cli/job_ref.h"
#include "cli/list_page.h"
#include "cli/output.h"
#include "cli/workflow_inputs.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// How often `jobs backfill --wait` asks for the backfill.
constexpr auto kBackfillPollInterval = 1000ms;
// The longest --wait-timeout: 30 days (a backfill holds at most 10,000 instants, but each may run long).
constexpr int kMaxBackfillWaitSeconds = 30 * 24 * 3600;
// The API's bound on a backfill's runs unfinished at once (openapi.yaml, POST jobs/{id}/backfill).
constexpr int kMaxBackfillConcurrent = 100;
constexpr std::size_t kReasonWidth = 60;
constexpr std::size_t kReasonBytes = 300;

std::int64_t instant_of(const std::string& text) { return std::get<std::int64_t>(parse_instant(text)); }

// The backfill's state, checked to be one the API defines: a follower never waits on a state it
// cannot know the end of.
std::string backfill_state(const json& backfill) {
  const std::string state = string_member(backfill, "state");
  if (state != "running" && state != "done" && state != "cancelled") {
    throw unexpected_answer("the backfill's state '" + one_line(state, 40) + "' is none the API defines");
  }
  return state;
}

// Its runs by state (BackfillRuns), each a count.
struct RunCounts {
  std::int64_t pending = 0, running = 0, succeeded = 0, failed = 0, cancelled = 0;
};

RunCounts run_counts(const json& backfill) {
  const json& runs = member(backfill, "runs");
  return {int_member(runs, "pending"), int_member(runs, "running"), int_member(runs, "succeeded"),
          int_member(runs, "failed"), int_member(runs, "cancelled")};
}

std::string runs_text(const RunCounts& runs) {
  return std::to_string(runs.pending) + " pending, " + std::to_string(runs.running) + " running, " +
         std::to_string(runs.succeeded) + " succeeded, " + std::to_string(runs.failed) + " failed, " +
         std::to_string(runs.cancelled) + " cancelled";
}

// "1 run", "2 runs".
std::string counted(std::int64_t n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// "60 instants: 58 runs written, 2 skipped": where a backfill has got to.
std::string progress_text(const json& backfill) {
  return counted(int_member(backfill, "total"), "instant") + ": " + counted(int_member(backfill, "written"), "run") +
         " written, " + std::to_string(int_member(backfill, "skipped")) + " skipped";
}

// One line saying where the backfill (as GET backfills/{id} answers it) is:
// "backfill 12 running, 60 instants: 10 runs written, 2 skipped; runs 3 pending, ...", the state
// with its reason when it was cancelled.
std::string progress_line(const json& backfill) {
  const std::string state = backfill_state(backfill);
  std::string line = "backfill " + std::to_string(int_member(backfill, "id")) + " " + state;
  const std::string reason = text_of(backfill, "reason");
  if (state == "cancelled" && !reason.empty()) line += " (" + one_line(reason, kReasonBytes) + ")";
  return line + ", " + progress_text(backfill) + "; runs " + runs_text(run_counts(backfill));
}

// "job 7", "workflow nightly-etl (12)": what a backfill (as the API answers it) runs.
std::string backfill_of(const json& backfill) {
  if (text_of(backfill, "kind") == "workflow") {
    const std::string name = text_of(backfill, "workflowName");
    const std::string id = text_of(backfill, "workflowId");
    return "workflow " + (name.empty() ? id : cell_text(name, 64) + " (" + id + ")");
  }
  return "job " + text_of(backfill, "jobId");
}

// Whether a backfill that ended ran every instant it wrote to success: done, and as many runs
// succeeded as it wrote. A run that failed and whose retry succeeded counts once, as succeeded (a
// run is retried only after a failure, so each run written has at most one success among it and
// its retries).
bool all_succeeded(const json& backfill) {
  return backfill_state(backfill) == "done" && run_counts(backfill).succeeded >= int_member(backfill, "written");
}

// ---- jobs backfill, workflows backfill

// What a backfill command runs: a job or a workflow.
struct BackfillKind {
  const char* noun;      // "job", "workflow"
  const char* resource;  // "jobs", "workflows": POST RESOURCE/{id}/backfill
  bool workflow;
};
constexpr BackfillKind kJobBackfill{"job", "jobs", false};
constexpr BackfillKind kWorkflowBackfill{"workflow", "workflows", true};

struct BackfillOptions {
  std::string target;  // the job or workflow: its id or APP/NAME
  std::vector<std::string> params;  // a workflow's: its runs' inputs, NAME=VALUE
  std::string from;
  std::string to;
  std::string on_existing;  // "skip", "rerun"; empty: the server's default (skip)
  int max_concurrent = 0;   // 0: the server's default (1)
  bool dry_run = false;
  bool wait = false;
  int timeout_seconds = 0;  // 0: no limit
};

// A dry run's answer for people: each instant, whether it ran already and what the backfill would
// do there, then a line of counts.
int print_dry_run(Context& ctx, const BackfillKind& kind, const JobRef& ref, std::int64_t id, const json& plan) {
  if (ctx.format() != OutputFormat::kTable) {
    print_document(ctx.out(), ctx.format(), plan);
    return kExitOk;
  }
  const bool rerun = string_member(plan, "onExisting") == "RERUN";
  std::set<std::int64_t> existing;
  for (const json& instant : array_member(plan, "existing")) {
    if (!instant.is_number_integer()) throw unexpected_answer("existing: an instant that is not epoch ms");
    existing.insert(instant.get<std::int64_t>());
  }
  const json& instants = array_member(plan, "instants");
  Table table({"INSTANT", "RAN BEFORE", "BACKFILL"});
  for (const json& instant : instants) {
    if (!instant.is_number_integer()) throw unexpected_answer("instants: an instant that is not epoch ms");
    const bool ran = existing.contains(instant.get<std::int64_t>());
    table.add_row({local_time(instant.get<std::int64_t>()), ran ? "yes" : "no", !ran ? "runs" : rerun ? "runs again" : "skips"});
  }
  const auto total = int_member(plan, "total");
  const auto to_run = int_member(plan, "toRun");
  const std::string range = "from " + local_time(int_member(plan, "from")) + " to " + local_time(int_member(plan, "to"));
  if (table.rows() == 0) {
    ctx.out() << kind.noun << " " << named(ref, id) << ": no instant of its schedule " << range
              << " (dry run: nothing written)\n";
    return kExitOk;
  }
  table.print(ctx.out());
  ctx.out() << kind.noun << " " << named(ref, id) << ": " << counted(total, "instant") << " " << range << ", "
            << to_run << " to run, " << existing.size() << " of them ran already"
            << (existing.empty() ? "" : rerun ? " (run again: --on-existing rerun)" : " (skipped)")
            << " (dry run: nothing written)\n";
  return kExitOk;
}

// Follows backfill `backfill` (as created) until it ends, `timeout` passes (zero: never) or Ctrl-C,
// saying on `progress` each change of where it is; answers the exit status: 0 when it is done and
// every run it wrote succeeded, 1 otherwise.
int follow_backfill(Context& ctx, json backfill, std::chrono::seconds timeout, std::ostream& progress) {
  ApiClient& api = ctx.api();
  const std::int64_t id = int_member(backfill, "id");
  const auto deadline = ctx.now() + timeout;
  std::string said;
  for (;;) {
    const std::string line = progress_line(backfill);
    if (line != said) {
      progress << line << "\n";
      progress.flush();
      said = line;
    }
    if (backfill_state(backfill) != "running") {
      print_document(ctx.out(), ctx.format(), backfill);
      return all_succeeded(backfill) ? kExitOk : kExitFailed;
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kBackfillPollInterval);
    if (timeout.count() > 0) {
      const auto now = ctx.now();
      if (now >= deadline) {
        throw operation_failed("backfill " + std::to_string(id) + " is still running after " + std::to_string(timeout.count()) +
                               " s; it goes on (cronwheel backfills cancel " + std::to_string(id) + " ends it)");
      }
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(deadline - now));
    }
    if (!ctx.pause(wait)) return kExitInterrupted;
    backfill = api.get("backfills/" + std::to_string(id));
  }
}

int start_backfill(Context& ctx, const BackfillKind& kind, const BackfillOptions& options) {
  json body{{"from", instant_of(options.from)}, {"to", instant_of(options.to)}};
  if (!options.on_existing.empty()) body["onExisting"] = options.on_existing == "rerun" ? "RERUN" : "SKIP";
  if (options.max_concurrent > 0) body["maxConcurrent"] = options.max_concurrent;
  if (options.dry_run) body["dryRun"] = true;
  // A usage error before anything is sent; none given: every input its default.
  if (kind.workflow && !options.params.empty()) body["inputs"] = trigger_params(options.params);
  return ctx.about(options.target, [&] {
    ApiClient& api = ctx.api();
    const JobRef ref = kind.workflow ? std::get<WorkflowRef>(parse_workflow_ref(options.target))
                                     : std::get<JobRef>(parse_job_ref(options.target));
    const auto id = kind.workflow ? resolve_workflow(api, ref) : resolve_job(api, ref);
    const json answer = api.post(std::string(kind.resource) + "/" + std::to_string(id) + "/backfill", body);
    if (options.dry_run) return print_dry_run(ctx, kind, ref, id, answer);
    const std::string state = backfill_state(answer);
    // Table: everything on stdout. JSON and YAML: the backfill alone on stdout, the progress on stderr.
    std::ostream& progress = ctx.format() == OutputFormat::kTable ? ctx.out() : ctx.err();
    if (ctx.format() == OutputFormat::kTable || options.wait) {
      const auto backfill = int_member(answer, "id");
      progress << kind.noun << " " << named(ref, id) << ": backfill " << backfill << " " << state << ", "
               << counted(int_member(answer, "total"), "instant") << " from " << local_time(int_member(answer, "from"))
               << " to " << local_time(int_member(answer, "to"));
      if (!options.wait) progress << " (cronwheel backfills get " << backfill << ")";
      progress << "\n";
    }
    if (!options.wait) {
      print_document(ctx.out(), ctx.format(), answer);
      return static_cast<int>(kExitOk);
    }
    return follow_backfill(ctx, answer, std::chrono::seconds(options.timeout_seconds), progress);
  });
}

// ---- backfills list

struct BackfillListOptions {
  std::string job;
  std::string workflow;
  std::string state;
  int limit = kDefaultListLimit;
};

int list_backfills(Context& ctx, const BackfillListOptions& options) {
  QueryParameters filters;
  if (!options.job.empty()) filters.push_back(job_filter(ctx, options.job));
  if (!options.workflow.empty()) filters.push_back(workflow_filter(ctx, options.workflow));
  if (!options.state.empty()) filters.emplace_back("state", options.state);
  ListTable table;
  table.plural = "backfills";
  table.headers = {"OF", "STATE", "FROM", "TO", "WRITTEN", "SKIPPED", "TOTAL", "ON EXISTING", "BY", "REASON"};
  table.row = [](const json& b, const AppNames&) -> std::vector<std::string> {
    return {cell_text(backfill_of(b)),
            cell_text(text_of(b, "state")),
            local_time(int_of(b, "from")),
            local_time(int_of(b, "to")),
            text_of(b, "written"),
            text_of(b, "skipped"),
            text_of(b, "total"),
            cell_text(text_of(b, "onExisting")),
            cell_text(text_of(b, "createdBy"), 32),
            cell_text(text_of(b, "reason"), kReasonWidth)};
  };
  return print_list_page(ctx, "backfills", std::move(filters), options.limit, table);
}

// ---- backfills get, cancel

void print_backfill(Context& ctx, const json& b) {
  const json cursor = b.is_object() && b.contains("cursor") ? b["cursor"] : json();
  std::vector<std::pair<std::string, std::string>> fields = {
      {"ID", std::to_string(int_member(b, "id"))},
      {"Of", backfill_of(b)},
  };
  if (text_of(b, "kind") == "workflow") {
    const auto inputs = b.find("inputs");
    fields.emplace_back("Inputs", inputs != b.end() && inputs->is_object() ? one_line(inputs->dump(), kReasonBytes) : "-");
  }
  const std::vector<std::pair<std::string, std::string>> rest = {
                              {"State", backfill_state(b)},
                              {"From", local_time(int_member(b, "from"))},
                              {"To", local_time(int_member(b, "to"))},
                              {"On existing", text_of(b, "onExisting")},
                              {"Max concurrent", text_of(b, "maxConcurrent")},
                              {"Progress", progress_text(b)},
                              {"Last instant", cursor.is_number_integer() ? local_time(cursor.get<std::int64_t>()) : "-"},
                              {"Runs", runs_text(run_counts(b))},
                              {"Created by", text_of(b, "createdBy")},
                              {"Created", local_time(int_of(b, "createdAt"))},
                              {"Ended", local_time(int_of(b, "endedAt"))},
                              {"Reason", text_of(b, "reason")},
                          };
  fields.insert(fields.end(), rest.begin(), rest.end());
  print_fields(ctx.out(), fields);
}

int get_backfill(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    const json b = ctx.api().get("backfills/" + std::to_string(std::get<std::int64_t>(parse_id(text))));
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), b);
      return kExitOk;
    }
    print_backfill(ctx, b);
    return kExitOk;
  });
}

int cancel_backfill(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    const auto id = std::get<std::int64_t>(parse_id(text));
    const json b = ctx.api().post("backfills/" + std::to_string(id) + "/cancel");
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), b);
      return kExitOk;
    }
    ctx.out() << "backfill " << id << " cancelled, " << progress_text(b) << "; runs " << runs_text(run_counts(b))
              << (text_of(b, "kind") == "workflow" ? " (its workflow runs go on)" : " (runs already sent go on)") << "\n";
    return kExitOk;
  });
}

}  // namespace

namespace {

// The options both backfill commands take after their JOB or WF.
void add_backfill_options(CLI::App& backfill, BackfillOptions& options) {
  backfill.add_option("--from", options.from, "The first instant it may run (ISO-8601 with offset, or epoch ms)")
      ->type_name("TIME")
      ->required()
      ->check(instant_check());
  backfill.add_option("--to", options.to, "The end of the range, not included (ISO-8601 with offset, or epoch ms)")
      ->type_name("TIME")
      ->required()
      ->check(instant_check());
  backfill.add_option("--on-existing", options.on_existing, "At an instant that ran already: skip it (default) or rerun it")
      ->type_name("skip|rerun")
      ->check(CLI::IsMember({"skip", "rerun"}));
  backfill.add_option("--max-concurrent", options.max_concurrent, "Runs unfinished at once (default 1)")
      ->type_name("N")
      ->check(CLI::Range(1, kMaxBackfillConcurrent));
  auto* dry_run = backfill.add_flag("--dry-run", options.dry_run, "Print the instants and what it would do; write nothing");
  auto* wait = backfill.add_flag("--wait", options.wait, "Follow it until it ends; exit 0 only if every run succeeded");
  wait->excludes(dry_run);
  backfill.add_option("--wait-timeout", options.timeout_seconds, "With --wait: give up waiting after this many seconds")
      ->type_name("SECONDS")
      ->check(CLI::Range(1, kMaxBackfillWaitSeconds))
      ->needs(wait);
}

// What --dry-run, --wait and the times do, the same for both backfill commands.
constexpr const char* kBackfillFollowHelp =
    "--dry-run writes nothing and prints the instants, which of them ran already and what the\n"
    "backfill would do there. Without --wait the backfill's id is printed and it goes on in\n"
    "the admin (cronwheel backfills get ID). With --wait, follows it (asking once a second),\n"
    "printing a line each time its progress changes, until it ends: the exit status is then 0\n"
    "when it is done and every run it wrote succeeded (a run whose retry succeeded counts as\n"
    "succeeded), 1 when a run failed or was cancelled, or the backfill was cancelled.\n"
    "--wait-timeout bounds the wait: past it the command fails (status 1) and the backfill\n"
    "goes on. Ctrl-C stops following (status 130). With -o json or -o yaml the backfill (or\n"
    "the dry run's answer) is printed on stdout, the progress on stderr.\n\n"
    "TIMES\n"
    "  ISO-8601 with the UTC offset (2026-05-01T00:00:00+02:00, 2026-05-01T00:00Z; seconds and\n"
    "  milliseconds optional), or epoch milliseconds (1777586400000).\n\n";

}  // namespace

void add_jobs_backfill_command(CommandLine& command_line, CLI::App& jobs) {
  auto options = std::make_shared<BackfillOptions>();
  CLI::App* backfill = command_line.add_command(
      jobs, "backfill", "Run a job for every instant its schedule had in a past range",
      std::string("Asks for a run of the job at each instant its schedule (CRON or FIX_RATE, in its zone,\n"
                  "with its DST policy and calendar; a FIX_RATE job's grid starting at --from) had from\n"
                  "--from up to --to (not included), as if each had fired on time: its executor gets the\n"
                  "historical instant as the run's time (logDateTime), its retries too. The admin writes the\n"
                  "runs oldest first, at most --max-concurrent unfinished at once (default 1, at most 100).\n"
                  "An instant that has a run already is skipped, or run again with --on-existing rerun. A\n"
                  "range of more than 10,000 instants is refused: backfill it in parts.\n\n") +
          kBackfillFollowHelp +
          "ARGUMENTS\n"
          "  JOB  the job's numeric id, or APP/NAME\n\n"
          "EXAMPLES\n"
          "  cronwheel jobs backfill billing/nightly-invoices --from 2026-04-01T00:00:00+02:00 \\\n"
          "      --to 2026-05-01T00:00:00+02:00 --dry-run\n"
          "  cronwheel jobs backfill 42 --from 2026-04-01T00:00Z --to 2026-04-02T00:00Z --max-concurrent 4 --wait\n"
          "  cronwheel jobs backfill 42 --from 1775001600000 --to 1775088000000 --on-existing rerun -o json | jq .id\n",
      [options](Context& ctx) { return start_backfill(ctx, kJobBackfill, *options); });
  backfill->add_option("JOB", options->target, "The job: its id or APP/NAME")->required()->check(job_ref_check());
  add_backfill_options(*backfill, *options);
}

void add_workflows_backfill_command(CommandLine& command_line, CLI::App& workflows) {
  auto options = std::make_shared<BackfillOptions>();
  CLI::App* backfill = command_line.add_command(
      workflows, "backfill", "Run a workflow for every instant its schedule had in a past range",
      std::string("Asks for a run of the workflow at each instant its schedule (CRON or FIX_RATE, in its\n"
                  "zone, with its calendar; a FIX_RATE workflow's grid starting at --from) had from --from\n"
                  "up to --to (not included), as if each had fired on time, with the inputs given (-p\n"
                  "NAME=VALUE, once per input; a declared input left out takes its default). Every node\n"
                  "run of such a run, and every retry, is sent with the historical instant as its time\n"
                  "(logDateTime). The admin starts the runs oldest first, at most --max-concurrent of them\n"
                  "unfinished at once (default 1, at most 100), outside the workflow's overlap policy: they\n"
                  "neither wait for its scheduled runs nor hold them. An instant that has a run of the\n"
                  "schedule or of a backfill already is skipped, or run again with --on-existing rerun. A\n"
                  "range of more than 10,000 instants is refused: backfill it in parts.\n\n") +
          kBackfillFollowHelp +
          "ARGUMENTS\n"
          "  WF  the workflow's numeric id, or APP/NAME\n\n"
          "EXAMPLES\n"
          "  cronwheel workflows backfill billing/nightly-etl --from 2026-04-01T00:00:00+02:00 \\\n"
          "      --to 2026-04-08T00:00:00+02:00 --dry-run\n"
          "  cronwheel workflows backfill 12 --from 2026-04-01T00:00Z --to 2026-04-02T00:00Z -p region=eu \\\n"
          "      --max-concurrent 2 --wait\n",
      [options](Context& ctx) { return start_backfill(ctx, kWorkflowBackfill, *options); });
  backfill->add_option("WF", options->target, "The workflow: its id or APP/NAME")->required()->check(workflow_ref_check());
  backfill->add_option("-p,--param", options->params, "An input of its runs, NAME=VALUE (repeat for more)")
      ->type_name("NAME=VALUE")
      ->check(param_assignment_check())
      ->allow_extra_args(false);
  add_backfill_options(*backfill, *options);
}

void add_backfills_commands(CommandLine& command_line) {
  CLI::App* backfills = command_line.add_group(
      "backfills", "List, inspect and cancel backfills (cronwheel jobs backfill and workflows backfill make them)");

  {
    auto options = std::make_shared<BackfillListOptions>();
    CLI::App* list = command_line.add_command(
        *backfills, "list", "List backfills, newest first",
        "Lists the backfills of the jobs and workflows you may see: id, what it runs (job ID, or\n"
        "workflow NAME (ID)), state (running, done, cancelled), the range (local time), its\n"
        "instants, the runs written and the instants skipped, what it does at an instant that ran\n"
        "already (SKIP or RERUN), who asked for it and why it ended. -o json and -o yaml print\n"
        "the API's page as answered.\n\n"
        "EXAMPLES\n"
        "  cronwheel backfills list\n"
        "  cronwheel backfills list --job billing/nightly-invoices --state running\n"
        "  cronwheel backfills list --workflow billing/nightly-etl\n",
        [options](Context& ctx) { return list_backfills(ctx, *options); });
    auto* job = list->add_option("--job", options->job, "Only the backfills of this job (id or APP/NAME)")
                    ->type_name("JOB")
                    ->check(job_ref_check());
    list->add_option("--workflow", options->workflow, "Only the backfills of this workflow (id or APP/NAME)")
        ->type_name("WF")
        ->check(workflow_ref_check())
        ->excludes(job);
    list->add_option("--state", options->state, "Only running, done or cancelled backfills")
        ->type_name("STATE")
        ->check(CLI::IsMember({"running", "done", "cancelled"}));
    add_limit_option(*list, options->limit, "backfills");
  }

  {
    auto id = std::make_shared<std::string>();
    CLI::App* get = command_line.add_command(
        *backfills, "get", "Show one backfill and its runs by state",
        "Shows the backfill: its job or workflow (and a workflow's runs' inputs), range, state,\n"
        "how far it got (runs written, instants skipped, the last instant dealt with) and its runs\n"
        "by state (a job's: retries included; a workflow's: its workflow runs); the runs\n"
        "themselves: cronwheel runs list --backfill ID, or a workflow's in cronwheel workflow-runs\n"
        "list --backfill ID.\n\n"
        "ARGUMENTS\n"
        "  ID  the backfill's id (cronwheel jobs backfill and backfills list print it)\n\n"
        "EXAMPLES\n"
        "  cronwheel backfills get 12\n"
        "  cronwheel backfills get 12 -o json | jq .runs\n",
        [id](Context& ctx) { return get_backfill(ctx, *id); });
    get->add_option("ID", *id, "The backfill's id")->required()->check(id_check());
  }

  {
    auto id = std::make_shared<std::string>();
    CLI::App* cancel = command_line.add_command(
        *backfills, "cancel", "Cancel a running backfill and its pending runs",
        "Ends the backfill: no more runs are written. A job's backfill's runs not yet sent are\n"
        "cancelled, and its runs already sent to an executor go on; a workflow's backfill's\n"
        "workflow runs go on to their end (cronwheel workflow-runs cancel ends one). A backfill\n"
        "that has ended already is refused (status 1).\n\n"
        "ARGUMENTS\n"
        "  ID  the backfill's id\n\n"
        "EXAMPLES\n"
        "  cronwheel backfills cancel 12\n",
        [id](Context& ctx) { return cancel_backfill(ctx, *id); });
    cancel->add_option("ID", *id, "The backfill's id")->required()->check(id_check());
  }
}

}  // namespace cronwheel::cli
