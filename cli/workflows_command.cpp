// cronwheel workflows list|get|start|stop|delete|trigger|check (and backfill: backfills_command.cpp)

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/bulk_commands.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/job_ref.h"
#include "cli/jobs_files.h"
#include "cli/list_page.h"
#include "cli/output.h"
#include "cli/workflow_inputs.h"
#include "cli/workflow_progress.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr std::size_t kWorkflowDescriptionWidth = 48;
constexpr std::size_t kWorkflowScheduleWidth = 32;
constexpr std::size_t kNodeParamsWidth = 60;
// How often `workflows trigger --wait` asks for the run.
constexpr auto kWorkflowPollInterval = 1000ms;
// The longest --wait-timeout: a workflow's own timeout is at most 7 days.
constexpr int kMaxWaitSeconds = 7 * 24 * 3600;

WorkflowRef workflow_ref(const std::string& text) { return std::get<WorkflowRef>(parse_workflow_ref(text)); }

std::string workflow_schedule(const json& workflow) {
  const std::string type = text_of(workflow, "scheduleType");
  if (type.empty() || type == "NONE") return "-";
  const std::string conf = text_of(workflow, "scheduleConf");
  if (type == "FIX_RATE") return "every " + conf + " s";
  return conf;  // CRON
}

std::string workflow_status(const json& workflow) { return int_of(workflow, "triggerStatus") == 1 ? "scheduled" : "stopped"; }

std::size_t count_of(const json& object, const char* key) {
  const auto it = object.is_object() ? object.find(key) : object.end();
  return it != object.end() && it->is_array() ? it->size() : 0;
}

// ---- workflows list

struct WorkflowListOptions {
  std::string group;
  std::string name;
  int limit = kDefaultListLimit;
};

int list_workflows(Context& ctx, const WorkflowListOptions& options) {
  QueryParameters filters;
  if (!options.group.empty()) filters.push_back(group_filter(ctx, options.group));
  if (!options.name.empty()) filters.emplace_back("name", options.name);
  ListTable table;
  table.plural = "workflows";
  table.headers = {"WORKFLOW", "STATUS", "SCHEDULE", "NEXT FIRE", "NODES", "DESCRIPTION"};
  table.app_names = true;
  table.known_app_name = options.group;
  table.row = [](const json& workflow, const AppNames& apps) -> std::vector<std::string> {
    return {cell_text(app_slash_name(workflow, apps)),
            workflow_status(workflow),
            cell_text(workflow_schedule(workflow), kWorkflowScheduleWidth),
            local_time(int_of(workflow, "triggerNextTime")),
            std::to_string(count_of(workflow, "nodes")),
            cell_text(text_of(workflow, "description"), kWorkflowDescriptionWidth)};
  };
  return print_list_page(ctx, "workflows", std::move(filters), options.limit, table);
}

// ---- workflows get

std::string params_of(const json& workflow) {
  std::string text;
  const auto it = workflow.find("params");
  if (it == workflow.end() || !it->is_array()) return text;
  for (const json& param : *it) {
    if (!text.empty()) text += ", ";
    text += text_of(param, "name");
    if (param.is_object() && param.contains("default")) text += "=" + text_of(param, "default");
  }
  return text;
}

// The keys of the nodes each node follows, by node, from the edges.
std::map<std::string, std::string> parents_of(const json& workflow) {
  std::map<std::string, std::string> parents;
  const auto it = workflow.find("edges");
  if (it == workflow.end() || !it->is_array()) return parents;
  for (const json& edge : *it) {
    std::string& list = parents[text_of(edge, "to")];
    list += (list.empty() ? "" : ", ") + text_of(edge, "from");
  }
  return parents;
}

int get_workflow(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    ApiClient& api = ctx.api();
    const auto id = resolve_workflow(api, workflow_ref(text));
    const json workflow = api.get("workflows/" + std::to_string(id));
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), workflow);
      return kExitOk;
    }
    const auto apps = group_app_names(api, json::array({workflow}));
    const std::string overlap = text_of(workflow, "overlap");
    const auto timeout = int_of(workflow, "timeout");
    print_fields(ctx.out(), {
                                {"ID", std::to_string(int_member(workflow, "id"))},
                                {"Workflow", app_slash_name(workflow, apps)},
                                {"Description", text_of(workflow, "description")},
                                {"Author", text_of(workflow, "author")},
                                {"Status", workflow_status(workflow)},
                                {"Schedule", text_of(workflow, "scheduleType") +
                                                 (workflow_schedule(workflow) == "-" ? "" : " " + text_of(workflow, "scheduleConf"))},
                                {"Time zone", text_of(workflow, "timezone")},
                                {"Next fire", local_time(int_of(workflow, "triggerNextTime"))},
                                {"Last fire", local_time(int_of(workflow, "triggerLastTime"))},
                                {"Misfire", text_of(workflow, "misfireStrategy")},
                                {"Overlap", overlap + (overlap == "PARALLEL" ? ", up to " + text_of(workflow, "maxParallel") : "")},
                                {"Timeout", timeout > 0 ? std::to_string(timeout) + " s" : "none"},
                                {"On failure", text_of(workflow, "onFailureRunning") + " the running nodes"},
                                {"Parameters", params_of(workflow)},
                                {"Alarm e-mail", text_of(workflow, "alarmEmail")},
                                {"Version", text_of(workflow, "version")},
                                {"Updated", local_time(int_of(workflow, "updatedAt"))},
                            });
    ctx.out() << "\n";
    const auto parents = parents_of(workflow);
    Table nodes({"NODE", "JOB ID", "AFTER", "ON FAILURE", "PARAMETERS"});
    for (const json& node : array_member(workflow, "nodes")) {
      const std::string key = text_of(node, "key");
      const auto after = parents.find(key);
      nodes.add_row({cell_text(key), text_of(node, "jobId"), cell_text(after != parents.end() ? after->second : "-"),
                     text_of(node, "onFailure"),
                     cell_text(node.contains("params") ? text_of(node, "params") : "(the job's own)", kNodeParamsWidth)});
    }
    nodes.print(ctx.out());
    return kExitOk;
  });
}

// ---- workflows trigger [--wait]

struct WorkflowTriggerOptions {
  std::string workflow;
  std::vector<std::string> params;
  bool wait = false;
  int timeout_seconds = 0;  // 0: no limit
};

// Follows run `run` (as the trigger answered it) until it ends, `timeout` passes (zero: never) or
// Ctrl-C, saying each change on `progress`; answers the exit status.
int follow_run(Context& ctx, json run, std::chrono::seconds timeout, std::ostream& progress) {
  ApiClient& api = ctx.api();
  const std::int64_t id = int_member(run, "id");
  const auto deadline = ctx.now() + timeout;
  WorkflowRunProgress changes;
  for (;;) {
    for (const std::string& line : changes.changes(run)) progress << line << "\n";
    progress.flush();
    const std::string state = workflow_run_state(run);
    if (workflow_run_ended(state)) {
      print_document(ctx.out(), ctx.format(), run);
      return state == "succeeded" ? kExitOk : kExitFailed;
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kWorkflowPollInterval);
    if (timeout.count() > 0) {
      const auto now = ctx.now();
      if (now >= deadline) {
        throw operation_failed("run " + std::to_string(id) + " is still " + state + " after " +
                               std::to_string(timeout.count()) + " s; it goes on (cronwheel workflow-runs cancel " +
                               std::to_string(id) + " ends it)");
      }
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(deadline - now));
    }
    if (!ctx.pause(wait)) return kExitInterrupted;
    run = api.get("workflow-runs/" + std::to_string(id));
  }
}

int trigger_workflow(Context& ctx, const WorkflowTriggerOptions& options) {
  const json params = trigger_params(options.params);  // a usage error before anything is sent
  return ctx.about(options.workflow, [&] {
    ApiClient& api = ctx.api();
    const WorkflowRef ref = workflow_ref(options.workflow);
    const auto id = resolve_workflow(api, ref);
    const json run = api.post("workflows/" + std::to_string(id) + "/trigger", {{"params", params}});
    const std::string state = workflow_run_state(run);
    // Table: everything on stdout. JSON and YAML: the run alone on stdout, the progress on stderr.
    std::ostream& progress = ctx.format() == OutputFormat::kTable ? ctx.out() : ctx.err();
    if (ctx.format() == OutputFormat::kTable || options.wait) {
      const std::string reason = text_of(run, "reason");
      progress << "workflow " << named(ref, id) << " triggered: run " << int_member(run, "id");
      if (state != "running") progress << " (" << state << (reason.empty() ? "" : ": " + one_line(reason, 200)) << ")";
      progress << "\n";
    }
    if (!options.wait) {
      print_document(ctx.out(), ctx.format(), run);
      return static_cast<int>(kExitOk);
    }
    return follow_run(ctx, run, std::chrono::seconds(options.timeout_seconds), progress);
  });
}

// ---- workflows check -f FILE

struct WorkflowCheckOptions {
  std::string file;
};

// The problems as the check answers them: {"problems": [{"field", "message"}...]}. A workflow
// whose fields cannot even be read (a bad scheduleType, a missing name) is refused with 400 and
// one field instead: it is answered in the same shape, its message less the field it starts with.
json check_problems(ApiClient& api, const json& body) {
  try {
    const json answer = api.post("workflows/check", body);
    for (const json& problem : array_member(answer, "problems")) {
      string_member(problem, "field");
      string_member(problem, "message");
    }
    return answer;
  } catch (const ApiError& e) {
    if (e.http_status() != 400 || e.api_message().empty()) throw;
    std::string message = e.api_message();
    if (!e.field().empty() && message.rfind(e.field() + ": ", 0) == 0) message = message.substr(e.field().size() + 2);
    return {{"problems", json::array({{{"field", e.field()}, {"message", message}}})}};
  }
}

int check_workflow(Context& ctx, const WorkflowCheckOptions& options) {
  std::string text;
  try {
    text = read_regular_file(options.file, kMaxWorkflowFileBytes);
  } catch (const std::runtime_error& e) {
    throw operation_failed(one_line(options.file, 400) + ": " + e.what());
  }
  auto body = workflow_check_body(text);
  if (auto* why = std::get_if<std::string>(&body)) {
    // As compilers say theirs, so editors jump to it.
    ctx.err() << one_line(options.file, 400) << ":" << one_line(*why, 1024) << "\n";
    return kExitFailed;
  }
  const json answer = ctx.about(options.file, [&] { return check_problems(ctx.api(), std::get<json>(body)); });
  const json& problems = answer.at("problems");
  if (ctx.format() != OutputFormat::kTable) {
    print_document(ctx.out(), ctx.format(), answer);
  } else if (problems.empty()) {
    ctx.out() << one_line(options.file, 400) << ": no problems\n";
  } else {
    Table table({"FIELD", "PROBLEM"});
    for (const json& problem : problems) {
      const std::string field = problem["field"].get<std::string>();
      table.add_row({cell_text(field.empty() ? "-" : field), cell_text(problem["message"].get<std::string>())});
    }
    table.print(ctx.out());
  }
  if (problems.empty()) return kExitOk;
  ctx.report(options.file,
             operation_failed(std::to_string(problems.size()) + (problems.size() == 1 ? " problem" : " problems")));
  return kExitFailed;
}

}  // namespace

void add_workflows_commands(CommandLine& command_line) {
  CLI::App* workflows = command_line.add_group("workflows", "List, inspect, check, schedule, trigger and delete workflows");

  {
    auto options = std::make_shared<WorkflowListOptions>();
    CLI::App* list = command_line.add_command(
        *workflows, "list", "List workflows, newest first",
        "Lists the workflows you may see: their id, APP/NAME (the group's app name and the\n"
        "workflow's name), status (scheduled or stopped), schedule, next fire time (local time),\n"
        "number of nodes and description. -o json and -o yaml print the API's page as answered.\n\n"
        "EXAMPLES\n"
        "  cronwheel workflows list\n"
        "  cronwheel workflows list --group billing\n"
        "  cronwheel workflows list --group billing --name nightly-etl -o json\n",
        [options](Context& ctx) { return list_workflows(ctx, *options); });
    add_group_option(*list, options->group, "the workflows");
    list->add_option("--name", options->name, "Only the workflow with exactly this name")
        ->type_name("NAME")
        ->check(workflow_name_check());
    add_limit_option(*list, options->limit, "workflows");
  }

  {
    auto workflow = std::make_shared<std::string>();
    CLI::App* get = command_line.add_command(
        *workflows, "get", "Show one workflow and its graph",
        "Shows the workflow's settings, then its nodes: each node's key, the job it runs, the\n"
        "nodes it follows, its failure policy and its parameters' template. -o json prints the\n"
        "workflow as the API answers it, which `cronwheel workflows check -f` takes back.\n\n"
        "ARGUMENTS\n"
        "  WF  the workflow's numeric id, or APP/NAME: its group's app name and its name\n\n"
        "EXAMPLES\n"
        "  cronwheel workflows get billing/nightly-etl\n"
        "  cronwheel workflows get 12 -o json > nightly-etl.json\n",
        [workflow](Context& ctx) { return get_workflow(ctx, *workflow); });
    get->add_option("WF", *workflow, "The workflow: its id or APP/NAME")->required()->check(workflow_ref_check());
  }

  const NamedKind kWorkflow{"workflow", "WF", "Workflows: ids or APP/NAME",
                            workflow_ref_check, parse_workflow_ref, resolve_workflow};
  add_bulk_commands(command_line, *workflows, kWorkflow, {
      {"start", "Schedule workflows",
       "Schedules each workflow: it runs from its schedule's first time after now. A workflow\n"
       "without a schedule (NONE) cannot be started (run it with `cronwheel workflows trigger`).\n"
       "Each workflow is its own call; a line is printed for each, and the workflows after a\n"
       "failed one are still started.\n\n"
       "ARGUMENTS\n"
       "  WF...  workflows, each its numeric id or APP/NAME\n\n"
       "EXAMPLES\n"
       "  cronwheel workflows start billing/nightly-etl billing/hourly-sync\n\n"
       "A workflow that could not be started makes the exit status 1, after every one was tried.\n",
       "started", [](ApiClient& api, std::int64_t id) { return api.post("workflows/" + std::to_string(id) + "/start"); }},
      {"stop", "Stop scheduling workflows",
       "Stops each workflow's schedule: no new run is created by it until started again; runs\n"
       "already created go on. Each workflow is its own call; a line is printed for each, and the\n"
       "workflows after a failed one are still stopped.\n\n"
       "ARGUMENTS\n"
       "  WF...  workflows, each its numeric id or APP/NAME\n\n"
       "EXAMPLES\n"
       "  cronwheel workflows stop billing/nightly-etl\n\n"
       "A workflow that could not be stopped makes the exit status 1, after every one was tried.\n",
       "stopped", [](ApiClient& api, std::int64_t id) { return api.post("workflows/" + std::to_string(id) + "/stop"); }},
      {"delete", "Delete workflows with their runs",
       "Deletes each workflow with the records of its runs; this cannot be undone. A workflow\n"
       "with a run running or waiting cannot be deleted (cancel the run first). Its jobs stay.\n"
       "Each workflow is its own call; a line is printed for each, and the workflows after a\n"
       "failed one are still deleted.\n\n"
       "ARGUMENTS\n"
       "  WF...  workflows, each its numeric id or APP/NAME\n\n"
       "EXAMPLES\n"
       "  cronwheel workflows delete billing/old-etl 14\n\n"
       "A workflow that could not be deleted makes the exit status 1, after every one was tried.\n",
       "deleted", [](ApiClient& api, std::int64_t id) { return api.remove("workflows/" + std::to_string(id)); }},
  });

  {
    auto options = std::make_shared<WorkflowTriggerOptions>();
    CLI::App* trigger = command_line.add_command(
        *workflows, "trigger", "Run a workflow now; --wait follows the run to its end",
        "Creates a run of the workflow now with the inputs given (-p NAME=VALUE, once per input; a\n"
        "declared input left out takes its default) and prints the run's id. The workflow's\n"
        "overlap policy decides whether the run starts, waits for another, or is skipped.\n\n"
        "With --wait, follows the run (asking once a second) and prints each node's change of\n"
        "state as it sees it (started with its run's id, succeeded, failed with its message,\n"
        "cancelled), then the run's end. The exit status is then 0 when the run succeeded and 1\n"
        "when it failed, timed out, was cancelled or skipped. --wait-timeout bounds the wait: past\n"
        "it the command fails (status 1) and the run goes on. Ctrl-C stops following (status 130);\n"
        "the run goes on. With -o json or -o yaml the run as it ended is printed on stdout, the\n"
        "progress on stderr.\n\n"

        "ARGUMENTS\n"
        "  WF  the workflow's numeric id, or APP/NAME\n\n"
        "EXAMPLES\n"
        "  cronwheel workflows trigger billing/nightly-etl\n"
        "  cronwheel workflows trigger billing/nightly-etl -p day=2026-05-01 -p region=eu --wait\n"
        "  cronwheel workflows trigger 12 --wait --wait-timeout 3600 -o json | jq -r .state\n",
        [options](Context& ctx) { return trigger_workflow(ctx, *options); });
    trigger->add_option("WF", options->workflow, "The workflow: its id or APP/NAME")
        ->required()
        ->check(workflow_ref_check());
    trigger->add_option("-p,--param", options->params, "An input of the run, NAME=VALUE (repeat for more)")
        ->type_name("NAME=VALUE")
        ->check(param_assignment_check())
        ->allow_extra_args(false);
    auto* wait = trigger->add_flag("--wait", options->wait, "Follow the run until it ends; exit 0 only if it succeeded");
    trigger->add_option("--wait-timeout", options->timeout_seconds, "With --wait: give up waiting after this many seconds")
        ->type_name("SECONDS")
        ->check(CLI::Range(1, kMaxWaitSeconds))
        ->needs(wait);
  }

  add_workflows_backfill_command(command_line, *workflows);

  {
    auto options = std::make_shared<WorkflowCheckOptions>();
    CLI::App* check = command_line.add_command(
        *workflows, "check", "Check a workflow file without saving it",
        "Sends the workflow in FILE (JSON, the body POST /api/v1/workflows takes; what\n"
        "`cronwheel workflows get WF -o json` prints, whose id, version and status are left out)\n"
        "to POST /api/v1/workflows/check and prints every problem the server finds, each with the\n"
        "field it is about (nodes[2].params, edges[0].to, edges for a cycle, ...). Nothing is saved.\n"
        "The exit status is 0 when there is none and 1 when there are problems; -o json prints the\n"
        "answer ({\"problems\": [...]}).\n\n"
        "The file is at most 2 MiB; a file that is not JSON is said as FILE:LINE:COLUMN: reason.\n\n"
        "ARGUMENTS\n"
        "  -f FILE  the workflow, as JSON\n\n"
        "EXAMPLES\n"
        "  cronwheel workflows check -f nightly-etl.json\n"
        "  cronwheel workflows get billing/nightly-etl -o json > etl.json && cronwheel workflows check -f etl.json\n",
        [options](Context& ctx) { return check_workflow(ctx, *options); });
    check->add_option("-f,--file", options->file, "The workflow file (JSON)")
        ->type_name("FILE")
        ->required()
        ->check(bounded_text_check());
  }
}

}  // namespace cronwheel::cli
