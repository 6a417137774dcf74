#include "cli/list_page.h"

#include <ostream>
#include <variant>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/command_line.h"
#include "cli/job_ref.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

// What --limit allows: the API's own bound on a page.
constexpr int kMaxListLimit = 1000;

AppNames app_names_of(ApiClient& api, const nlohmann::json& items, const ListTable& table) {
  if (!table.app_names) return {};
  if (table.known_app_name.empty()) return group_app_names(api, items);
  AppNames apps;
  for (const nlohmann::json& item : items) apps[int_of(item, "jobGroup")] = table.known_app_name;
  return apps;
}

}  // namespace

int print_list_page(Context& ctx, const std::string& resource, QueryParameters filters, int limit,
                    const ListTable& table) {
  ApiClient& api = ctx.api();
  filters.emplace_back("limit", std::to_string(limit));
  const nlohmann::json page = api.get(resource + query_string(filters));
  const nlohmann::json& items = array_member(page, "items");
  if (ctx.format() != OutputFormat::kTable) {
    print_document(ctx.out(), ctx.format(), page);
    return kExitOk;
  }
  if (items.empty()) {
    ctx.err() << "No " << table.plural << ".\n";
    return kExitOk;
  }
  const AppNames apps = app_names_of(api, items, table);
  std::vector<std::string> headers{"ID"};
  headers.insert(headers.end(), table.headers.begin(), table.headers.end());
  Table shown(std::move(headers));
  for (const nlohmann::json& item : items) {
    std::vector<std::string> cells{std::to_string(int_member(item, "id"))};
    for (std::string& cell : table.row(item, apps)) cells.push_back(std::move(cell));
    shown.add_row(std::move(cells));
  }
  shown.print(ctx.out());
  ctx.err() << partial_page_note(page, items.size(), table.plural.c_str());
  return kExitOk;
}

std::pair<std::string, std::string> group_filter(Context& ctx, const std::string& app_name) {
  ApiClient& api = ctx.api();  // outside about(): a settings error is not the option's
  const nlohmann::json group = ctx.about("--group " + app_name, [&] { return resolve_group(api, app_name); });
  return {"jobGroup", std::to_string(int_member(group, "id"))};
}

std::pair<std::string, std::string> job_filter(Context& ctx, const std::string& job) {
  ApiClient& api = ctx.api();
  const auto id = ctx.about("--job " + job, [&] { return resolve_job(api, std::get<JobRef>(parse_job_ref(job))); });
  return {"jobId", std::to_string(id)};
}

std::pair<std::string, std::string> workflow_filter(Context& ctx, const std::string& workflow) {
  ApiClient& api = ctx.api();
  const auto id = ctx.about("--workflow " + workflow, [&] {
    return resolve_workflow(api, std::get<WorkflowRef>(parse_workflow_ref(workflow)));
  });
  return {"workflowId", std::to_string(id)};
}

CLI::Option* add_group_option(CLI::App& list, std::string& app_name, const std::string& whose) {
  return list.add_option("--group", app_name, "Only " + whose + " of the group with this app name")
      ->type_name("APP")
      ->check(app_name_check());
}

CLI::Option* add_limit_option(CLI::App& list, int& limit, const std::string& plural) {
  return list.add_option("--limit", limit, "How many " + plural + " at most (1-" + std::to_string(kMaxListLimit) + ")")
      ->type_name("N")
      ->check(CLI::Range(1, kMaxListLimit))
      ->capture_default_str();
}

}  // namespace cronwheel::cli
