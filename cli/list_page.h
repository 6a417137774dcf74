#pragma once

// What the list commands (jobs, runs, workflows and workflow-runs list) share: one page of a list
// endpoint of the API, asked for with the command's filters and --limit, shown as the page itself
// (-o json, -o yaml) or as a table for people.
//
// A list endpoint answers GET RESOURCE?FILTERS&limit=N with {"items": [...], "total": N,
// "totalExact": bool, ...}, newest first; a list command shows that first page only, and says on
// stderr when it holds fewer items than there are.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace cronwheel::cli {

class Context;

// How many items a list shows when --limit is not given.
inline constexpr int kDefaultListLimit = 20;

// A query's parameters, in the order they are sent.
using QueryParameters = std::vector<std::pair<std::string, std::string>>;

// App names by group id, as group_app_names (job_ref.h) answers them.
using AppNames = std::map<std::int64_t, std::string>;

// How a list shows its page as a table.
struct ListTable {
  // The items' plural, as said on stderr: "No workflow runs.", "(20 of 57 workflow runs shown;
  // --limit shows up to 1000)".
  std::string plural;
  // The columns after the first, which is every list's: ID, the item's `id`.
  std::vector<std::string> headers;
  // Whether the rows name the items' groups (each item has a `jobGroup`) by app name. The names
  // are looked up once for the page (group_app_names), unless `known_app_name` is given: the app
  // name of the group the list was filtered by, which every item is in.
  bool app_names = false;
  std::string known_app_name;
  // One item's cells after its id, each through cell_text; `apps` is empty unless app_names.
  std::function<std::vector<std::string>(const nlohmann::json& item, const AppNames& apps)> row;
};

// GET RESOURCE?FILTERS&limit=LIMIT, then: with -o json or -o yaml, the page printed as answered
// and nothing more asked; as a table, "No PLURAL." on stderr for an empty page, else the table on
// stdout and partial_page_note (output.h) on stderr. Answers kExitOk; throws what ApiClient
// throws, and unexpected_answer when the page has no `items` list or an item lacks its `id`.
int print_list_page(Context& ctx, const std::string& resource, QueryParameters filters, int limit,
                    const ListTable& table);

// Filters that name an object by what the command line calls it, resolved to its id (job_ref.h).
// A failure names the option: "cronwheel: runs list --group nope: no such group".
std::pair<std::string, std::string> group_filter(Context& ctx, const std::string& app_name);  // jobGroup=ID
std::pair<std::string, std::string> job_filter(Context& ctx, const std::string& job);         // jobId=ID
std::pair<std::string, std::string> workflow_filter(Context& ctx, const std::string& workflow);  // workflowId=ID

// --group APP: "Only <whose> of the group with this app name" (whose: "the runs").
CLI::Option* add_group_option(CLI::App& list, std::string& app_name, const std::string& whose);
// --limit N: "How many <plural> at most (1-1000)", its default shown in --help.
CLI::Option* add_limit_option(CLI::App& list, int& limit, const std::string& plural);

}  // namespace cronwheel::cli
