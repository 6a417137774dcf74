// cronwheel groups list|pause|resume

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/job_ref.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kTitleWidth = 40;
constexpr std::size_t kAddressesWidth = 64;

std::string ids_of(const json& ids) {
  std::string text;
  for (const json& id : ids) {
    if (!id.is_number_integer()) throw unexpected_answer("a job id is not an integer");
    text += (text.empty() ? "" : ", ") + std::to_string(id.get<std::int64_t>());
  }
  return text;
}

std::string jobs_count(std::size_t count) { return std::to_string(count) + (count == 1 ? " job" : " jobs"); }

// ---- groups list

struct ListOptions {
  std::string search;
  int limit = 100;
};

int list_groups(Context& ctx, const ListOptions& options) {
  std::vector<std::pair<std::string, std::string>> query;
  if (!options.search.empty()) query.emplace_back("text", options.search);
  query.emplace_back("limit", std::to_string(options.limit));
  const json page = ctx.api().get("groups" + query_string(query));
  const json& groups = array_member(page, "items");
  if (ctx.format() != OutputFormat::kTable) {
    print_document(ctx.out(), ctx.format(), page);
    return kExitOk;
  }
  if (groups.empty()) {
    ctx.err() << "No groups.\n";
    return kExitOk;
  }
  Table table({"ID", "APP", "TITLE", "LIMIT", "ADDRESSES"});
  for (const json& group : groups) {
    const bool manual = int_of(group, "addressType") == 1;
    const std::string addresses = text_of(group, "addressList");
    // maxRunning: the group's runs at once across its executors (0: no limit).
    const auto max_running = int_of(group, "maxRunning");
    table.add_row({std::to_string(int_member(group, "id")), cell_text(string_member(group, "appName")),
                   cell_text(text_of(group, "title"), kTitleWidth),
                   max_running > 0 ? std::to_string(max_running) + " at once" : "none",
                   cell_text((manual ? "manual: " : "automatic: ") + (addresses.empty() ? "none" : addresses),
                             kAddressesWidth)});
  }
  table.print(ctx.out());
  const auto total = int_of(page, "total", -1);
  if (total > static_cast<std::int64_t>(groups.size())) {
    ctx.err() << "(" << groups.size() << " of " << total << " groups shown; --limit shows up to 1000)\n";
  }
  return kExitOk;
}

// ---- groups pause|resume

int pause_group(Context& ctx, const std::string& app) {
  return ctx.about(app, [&] {
    ApiClient& api = ctx.api();
    const json group = resolve_group(api, app);
    const json answer = api.post("groups/" + std::to_string(int_member(group, "id")) + "/pause");
    const json& paused = array_member(answer, "paused");
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), answer);
      return kExitOk;
    }
    ctx.out() << "group " << app << " paused: ";
    if (paused.empty()) ctx.out() << "no job was running\n";
    else ctx.out() << jobs_count(paused.size()) << " stopped (ids " << ids_of(paused) << ")\n";
    return kExitOk;
  });
}

int resume_group(Context& ctx, const std::string& app) {
  return ctx.about(app, [&] {
    ApiClient& api = ctx.api();
    const json group = resolve_group(api, app);
    const json answer = api.post("groups/" + std::to_string(int_member(group, "id")) + "/resume");
    const json& resumed = array_member(answer, "resumed");
    const json& not_resumed = array_member(answer, "notResumed");
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), answer);
      return kExitOk;
    }
    ctx.out() << "group " << app << " resumed: ";
    if (resumed.empty()) ctx.out() << "no job was paused with it\n";
    else ctx.out() << jobs_count(resumed.size()) << " started (ids " << ids_of(resumed) << ")\n";
    for (const json& job : not_resumed) {
      ctx.out() << "job " << app << "/" << cell_text(string_member(job, "name")) << " (" << int_member(job, "id")
                << ") stays stopped: " << one_line(string_member(job, "reason")) << "\n";
    }
    return kExitOk;
  });
}

}  // namespace

void add_groups_commands(CommandLine& command_line) {
  CLI::App* groups = command_line.add_group("groups", "List executor groups; pause and resume a whole group");

  {
    auto options = std::make_shared<ListOptions>();
    CLI::App* list = command_line.add_command(
        *groups, "list", "List executor groups, by app name",
        "Lists the groups you may see: id, app name, title, the limit of the group's runs at\n"
        "once (maxRunning; none: no limit) and executor addresses (automatic: the executors\n"
        "registered now; manual: the list entered). -o json and -o yaml print the API's page\n"
        "as answered.\n\n"
        "EXAMPLES\n"
        "  cronwheel groups list\n"
        "  cronwheel groups list --search billing -o json\n",
        [options](Context& ctx) { return list_groups(ctx, *options); });
    list->add_option("--search", options->search, "Text in the app name or title")
        ->type_name("TEXT")
        ->check(bounded_text_check());
    list->add_option("--limit", options->limit, "How many groups at most (1-1000)")
        ->type_name("N")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
  }

  {
    auto app = std::make_shared<std::string>();
    CLI::App* pause = command_line.add_command(
        *groups, "pause", "Stop every running job of a group at once",
        "Stops every running job of the group in one call (one audit entry), and marks them, so\n"
        "that `groups resume` starts exactly these again; jobs that were stopped already stay\n"
        "stopped after the resume. Prints the jobs stopped.\n\n"
        "ARGUMENTS\n"
        "  APP  the group's app name\n\n"
        "EXAMPLES\n"
        "  cronwheel groups pause billing\n",
        [app](Context& ctx) { return pause_group(ctx, *app); });
    pause->add_option("APP", *app, "The group's app name")->required()->check(app_name_check());
  }

  {
    auto app = std::make_shared<std::string>();
    CLI::App* resume = command_line.add_command(
        *groups, "resume", "Start again the jobs a group's pause stopped",
        "Starts again exactly the jobs the group's pause stopped that are still stopped, each from\n"
        "its schedule's next time after now. A job whose schedule has no time left stays stopped\n"
        "and is listed with the reason (that is not a failure).\n\n"
        "ARGUMENTS\n"
        "  APP  the group's app name\n\n"
        "EXAMPLES\n"
        "  cronwheel groups resume billing\n",
        [app](Context& ctx) { return resume_group(ctx, *app); });
    resume->add_option("APP", *app, "The group's app name")->required()->check(app_name_check());
  }
}

}  // namespace cronwheel::cli
