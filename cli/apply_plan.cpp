#include "cli/apply_plan.h"

#include <ostream>
#include <sstream>
#include <string>

#include "cli/command_line.h"
#include "cli/output.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

// A changed value's widest rendering; a script or a long list is cut.
constexpr std::size_t kValueWidth = 100;

std::string value_text(const json& change, const char* key) {
  if (!change.is_object() || !change.contains(key)) return "(none)";
  return cell_text(change[key].dump(-1, ' ', false, json::error_handler_t::replace), kValueWidth);
}

std::string action_of(const json& item) {
  const std::string action = string_member(item, "action");
  if (action != "create" && action != "update" && action != "unchanged" && action != "delete") {
    throw unexpected_answer("plan: unknown action '" + one_line(action, 40) + "'");
  }
  return action;
}

void print_changes(std::ostream& out, const json& item) {
  for (const json& change : array_member(item, "changes")) {
    out << "    " << cell_text(string_member(change, "field"), 200) << ": " << value_text(change, "from") << " \u2192 "
        << value_text(change, "to") << "\n";
  }
}

// The lines of one list of the plan; `label` names an item ("billing/nightly").
template <typename Label>
void print_items(std::ostream& out, const json& items, const char* kind, Label label) {
  for (const json& item : items) {
    const std::string action = action_of(item);
    if (action == "unchanged") continue;
    out << action << " " << kind << " " << cell_text(label(item), 300) << "\n";
    if (action == "update") print_changes(out, item);
  }
}

const json& optional_array(const json& plan, const char* key) {
  static const json empty = json::array();
  if (!plan.contains(key)) return empty;
  return array_member(plan, key);
}

}  // namespace

json post_apply(ApiClient& api, const json& document, bool dry_run, bool prune) {
  const std::string body = document.dump(-1, ' ', false, json::error_handler_t::replace);
  if (body.size() > common::jobs_file::kMaxDocumentBytes) {
    throw operation_failed("the document is " + std::to_string(body.size() / (1024 * 1024)) +
                           " MiB as JSON; the server takes at most " +
                           std::to_string(common::jobs_file::kMaxDocumentBytes / (1024 * 1024)) +
                           " MiB: apply the groups in parts");
  }
  ApiRequest request;
  request.method = "POST";
  request.target = "apply" + query_string({{"dryRun", dry_run ? "true" : "false"}, {"prune", prune ? "true" : "false"}});
  request.body = body;
  const ApiAnswer answer = api.request(std::move(request));
  json plan;
  try {
    plan = json::parse(answer.body);
  } catch (const json::exception&) {
    throw unexpected_answer("not JSON");
  }
  // Everything print_plan and plan_status read, checked before anything is printed.
  (void)bool_member(plan, "changed");
  for (const char* list : {"groups", "jobs"}) (void)array_member(plan, list);
  const json& summary = member(plan, "summary");
  for (const char* count : {"create", "update", "unchanged", "delete"}) (void)int_member(summary, count);
  return plan;
}

void print_plan(std::ostream& stream, const json& plan) {
  // Whole or not at all: a plan found malformed half-way prints nothing.
  std::ostringstream out;
  // In the order the apply writes them: calendars before the jobs and workflows that name them.
  print_items(out, optional_array(plan, "calendars"), "calendar", [](const json& c) { return string_member(c, "name"); });
  print_items(out, array_member(plan, "groups"), "group", [](const json& g) { return string_member(g, "appName"); });
  print_items(out, array_member(plan, "jobs"), "job",
              [](const json& j) { return string_member(j, "appName") + "/" + string_member(j, "name"); });
  print_items(out, optional_array(plan, "workflows"), "workflow",
              [](const json& w) { return string_member(w, "appName") + "/" + string_member(w, "name"); });
  print_items(out, optional_array(plan, "users"), "user", [](const json& u) { return string_member(u, "username"); });
  for (const json& w : optional_array(plan, "workflows")) {
    if (w.contains("blocked")) {
      out << "  blocked: " << cell_text(string_member(w, "appName") + "/" + string_member(w, "name"), 300) << ": "
          << cell_text(string_member(w, "blocked"), 500) << "\n";
    }
  }
  if (plan.is_object() && plan.contains("refused")) out << "refused: " << cell_text(string_member(plan, "refused"), 500) << "\n";

  const json& summary = member(plan, "summary");
  const auto create = int_member(summary, "create");
  const auto update = int_member(summary, "update");
  const auto unchanged = int_member(summary, "unchanged");
  const auto remove = int_member(summary, "delete");
  const bool dry_run = plan.is_object() && plan.value("dryRun", false);
  if (!bool_member(plan, "changed")) {
    out << "nothing to change: " << unchanged << " unchanged\n";
  } else if (dry_run) {
    out << create << " to create, " << update << " to update, " << unchanged << " unchanged, " << remove
        << " to delete (dry run: nothing changed)\n";
  } else {
    out << "applied: " << create << " created, " << update << " updated, " << unchanged << " unchanged, " << remove
        << " deleted\n";
  }
  stream << out.str();
}

int plan_status(const json& plan, bool dry_run) {
  return dry_run && bool_member(plan, "changed") ? kExitChanges : kExitOk;
}

int report_plan(Context& ctx, const json& plan, bool dry_run) {
  if (ctx.format() == OutputFormat::kTable) {
    print_plan(ctx.out(), plan);
  } else {
    print_document(ctx.out(), ctx.format(), plan);
  }
  return plan_status(plan, dry_run);
}

}  // namespace cronwheel::cli
