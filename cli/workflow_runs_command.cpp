// cronwheel workflow-runs list|get|cancel|rerun

#include <map>
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
#include "cli/workflow_progress.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kRunReasonWidth = 60;
constexpr std::size_t kNodeMessageWidth = 60;

std::int64_t workflow_run_id(const std::string& text) { return std::get<std::int64_t>(parse_id(text)); }

std::string workflow_label(const json& run, const std::map<std::int64_t, std::string>& apps) {
  return app_slash_name(run, apps, "workflowName");
}

// ---- workflow-runs list

struct WorkflowRunListOptions {
  std::string workflow;
  std::string group;
  std::string backfill;
  std::string state;
  int limit = kDefaultListLimit;
};

int list_workflow_runs(Context& ctx, const WorkflowRunListOptions& options) {
  QueryParameters filters;
  if (!options.workflow.empty()) filters.push_back(workflow_filter(ctx, options.workflow));
  if (!options.group.empty()) filters.push_back(group_filter(ctx, options.group));
  if (!options.backfill.empty()) filters.emplace_back("backfillId", options.backfill);
  if (!options.state.empty()) filters.emplace_back("state", options.state);
  ListTable table;
  table.plural = "workflow runs";
  table.headers = {"WORKFLOW", "STATE", "TRIGGER", "SCHEDULED", "ENDED", "REASON"};
  table.app_names = true;
  table.row = [](const json& run, const AppNames& apps) -> std::vector<std::string> {
    return {cell_text(workflow_label(run, apps)),
            cell_text(text_of(run, "state")),
            cell_text(text_of(run, "triggerType")),
            local_time(int_of(run, "scheduledTime")),
            local_time(int_of(run, "endedAt")),
            cell_text(text_of(run, "reason"), kRunReasonWidth)};
  };
  return print_list_page(ctx, "workflow-runs", std::move(filters), options.limit, table);
}

// ---- workflow-runs get

// "day=monday, region=eu": the run's inputs.
std::string inputs_of(const json& run) {
  std::string text;
  const auto it = run.find("params");
  if (it == run.end() || !it->is_object()) return text;
  for (const auto& [name, value] : it->items()) {
    if (!text.empty()) text += ", ";
    text += name + "=" + (value.is_string() ? value.get<std::string>() : value.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  return text;
}

// The run's fields, then a table of its nodes.
void print_workflow_run(Context& ctx, const json& run) {
  const auto apps = group_app_names(ctx.api(), json::array({run}));
  print_fields(ctx.out(), {
                              {"ID", std::to_string(int_member(run, "id"))},
                              {"Workflow", workflow_label(run, apps) + " (" + text_of(run, "workflowId") + ")"},
                              {"State", text_of(run, "state")},
                              {"Reason", text_of(run, "reason")},
                              {"Trigger", text_of(run, "triggerType")},
                              {"Created by", text_of(run, "createdBy")},
                              {"Inputs", inputs_of(run)},
                              {"Scheduled", local_time(int_of(run, "scheduledTime"))},
                              {"Started", local_time(int_of(run, "startedAt"))},
                              {"Ended", local_time(int_of(run, "endedAt"))},
                              {"Deadline", local_time(int_of(run, "deadline"))},
                          });
  ctx.out() << "\n";
  Table nodes({"NODE", "STATE", "RUN ID", "ATTEMPTS", "MESSAGE"});
  for (const json& node : array_member(run, "nodes")) {
    const auto run_id = int_of(node, "runId");
    nodes.add_row({cell_text(text_of(node, "key")), cell_text(text_of(node, "state")),
                   run_id > 0 ? std::to_string(run_id) : "-", std::to_string(int_of(node, "attempts")),
                   cell_text(text_of(node, "message"), kNodeMessageWidth)});
  }
  nodes.print(ctx.out());
}

int get_workflow_run(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    const json run = ctx.api().get("workflow-runs/" + std::to_string(workflow_run_id(text)));
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), run);
      return kExitOk;
    }
    print_workflow_run(ctx, run);
    return kExitOk;
  });
}

// ---- workflow-runs cancel|rerun

int cancel_workflow_run(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    const auto id = workflow_run_id(text);
    const json run = ctx.api().post("workflow-runs/" + std::to_string(id) + "/cancel");
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), run);
      return kExitOk;
    }
    ctx.out() << "workflow run " << id << " " << one_line(workflow_run_state(run), 40) << "\n";
    return kExitOk;
  });
}

struct WorkflowRerunOptions {
  std::string run;
  std::string node;
};

int rerun_workflow_run(Context& ctx, const WorkflowRerunOptions& options) {
  return ctx.about(options.run, [&] {
    const auto id = workflow_run_id(options.run);
    const json run = ctx.api().post("workflow-runs/" + std::to_string(id) + "/rerun", {{"node", options.node}});
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), run);
      return kExitOk;
    }
    // The node may already have ended again by the time the answer is read: say what was done,
    // then the state the run is in now.
    ctx.out() << "workflow run " << id << " re-run from node " << one_line(options.node, 64) << ": "
              << one_line(workflow_run_state(run), 40) << "\n";
    return kExitOk;
  });
}

}  // namespace

void add_workflow_runs_commands(CommandLine& command_line) {
  CLI::App* runs = command_line.add_group("workflow-runs", "List workflow runs, inspect their nodes, cancel and re-run them");

  {
    auto options = std::make_shared<WorkflowRunListOptions>();
    CLI::App* list = command_line.add_command(
        *runs, "list", "List workflow runs, newest first",
        "Lists workflow runs: id, APP/NAME of the workflow, state (waiting, running, succeeded,\n"
        "failed, cancelled, skipped, timed_out), trigger type, scheduled and end times (local\n"
        "time) and the reason the run ended, waits or was skipped. -o json and -o yaml print the\n"
        "API's page.\n\n"
        "EXAMPLES\n"
        "  cronwheel workflow-runs list --workflow billing/nightly-etl\n"
        "  cronwheel workflow-runs list --group billing --state failed --limit 100\n"
        "  cronwheel workflow-runs list --backfill 12\n",
        [options](Context& ctx) { return list_workflow_runs(ctx, *options); });
    list->add_option("--workflow", options->workflow, "Only the runs of this workflow (id or APP/NAME)")
        ->type_name("WF")
        ->check(workflow_ref_check());
    add_group_option(*list, options->group, "the runs of the workflows");
    list->add_option("--backfill", options->backfill, "Only the runs of this backfill (cronwheel workflows backfill), by its id")
        ->type_name("ID")
        ->check(id_check());
    list->add_option("--state", options->state, "Only runs in this state")
        ->type_name("STATE")
        ->check(CLI::IsMember({"waiting", "running", "succeeded", "failed", "cancelled", "skipped", "timed_out"}));
    add_limit_option(*list, options->limit, "runs");
  }

  {
    auto id = std::make_shared<std::string>();
    CLI::App* get = command_line.add_command(
        *runs, "get", "Show a workflow run and its nodes",
        "Shows the run (its workflow, state and why, trigger, inputs, times), then a table of its\n"
        "nodes: each node's key, state (waiting, started, succeeded, failed, cancelled), the id of\n"
        "its current run (cronwheel runs get|logs ID), its attempts and its message. -o json adds\n"
        "each node's rendered parameters and output.\n\n"
        "ARGUMENTS\n"
        "  RUN  the workflow run's id (cronwheel workflows trigger and workflow-runs list print it)\n\n"
        "EXAMPLES\n"
        "  cronwheel workflow-runs get 17\n"
        "  cronwheel workflow-runs get 17 -o json | jq '.nodes[] | {key, output}'\n",
        [id](Context& ctx) { return get_workflow_run(ctx, *id); });
    get->add_option("RUN", *id, "The workflow run's id")->required()->check(id_check());
  }

  {
    auto id = std::make_shared<std::string>();
    CLI::App* cancel = command_line.add_command(
        *runs, "cancel", "Cancel a waiting or running workflow run",
        "Cancels the run: its nodes not started are cancelled and those running are killed. Only a\n"
        "run waiting or running can be cancelled (409 otherwise).\n\n"
        "ARGUMENTS\n"
        "  RUN  the workflow run's id\n\n"
        "EXAMPLES\n"
        "  cronwheel workflow-runs cancel 17\n",
        [id](Context& ctx) { return cancel_workflow_run(ctx, *id); });
    cancel->add_option("RUN", *id, "The workflow run's id")->required()->check(id_check());
  }

  {
    auto options = std::make_shared<WorkflowRerunOptions>();
    CLI::App* rerun = command_line.add_command(
        *runs, "rerun", "Run a failed workflow run again from one of its nodes",
        "Runs a failed, timed-out or cancelled run again from NODE, a node that failed or was\n"
        "cancelled: that node, everything downstream of it and every other node that did not get\n"
        "done run again; what succeeded elsewhere is kept, outputs included. Refused (409) while a\n"
        "node of the run still runs, and while the workflow's overlap policy has no room.\n\n"
        "ARGUMENTS\n"
        "  RUN          the workflow run's id\n"
        "  --from NODE  the key of the node to run again from\n\n"
        "EXAMPLES\n"
        "  cronwheel workflow-runs rerun 17 --from load\n",
        [options](Context& ctx) { return rerun_workflow_run(ctx, *options); });
    rerun->add_option("RUN", options->run, "The workflow run's id")->required()->check(id_check());
    rerun->add_option("--from", options->node, "The node to run again from")
        ->type_name("NODE")
        ->required()
        ->check(node_key_check());
  }
}

}  // namespace cronwheel::cli
