// The list commands' shared piece (cli/list_page.h) on its own: a `things list` command made of it
// alone, over a scripted GET things. What is asked (filters, then the limit), what a page prints
// as a table or as itself, the partial and empty pages, and the answers it refuses.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/job_ref.h"
#include "cli/list_page.h"
#include "cli/output.h"
#include "tests/unit/cli/cli_harness.h"

namespace cronwheel::cli {
namespace {

using nlohmann::json;
using testing::CliResult;
using testing::page_of;

struct ThingListOptions {
  std::string job;
  std::string workflow;
  std::string group;
  std::string kind;
  int limit = kDefaultListLimit;
};

json thing(std::int64_t id, std::int64_t group, const std::string& name) {
  return {{"id", id}, {"jobGroup", group}, {"name", name}};
}

class ListPageTest : public testing::CliCommandTest {
 protected:
  void SetUp() override {
    CliCommandTest::SetUp();
    table_.plural = "things";
    table_.headers = {"NAME"};
    table_.row = [](const json& item, const AppNames& apps) -> std::vector<std::string> {
      return {cell_text(apps.empty() ? text_of(item, "name") : app_slash_name(item, apps))};
    };
    cli_.more_commands.push_back([this](CommandLine& command_line) {
      CLI::App* things = command_line.add_group("things", "Things");
      auto options = std::make_shared<ThingListOptions>();
      CLI::App* list = command_line.add_command(
          *things, "list", "List things", "EXAMPLES\n  cronwheel things list\n", [this, options](Context& ctx) {
            QueryParameters filters;
            if (!options->job.empty()) filters.push_back(job_filter(ctx, options->job));
            if (!options->workflow.empty()) filters.push_back(workflow_filter(ctx, options->workflow));
            if (!options->group.empty()) filters.push_back(group_filter(ctx, options->group));
            if (!options->kind.empty()) filters.emplace_back("kind", options->kind);
            ListTable table = table_;
            if (table.app_names) table.known_app_name = options->group;
            return print_list_page(ctx, "things", std::move(filters), options->limit, table);
          });
      list->add_option("--job", options->job, "Job");
      list->add_option("--workflow", options->workflow, "Workflow");
      list->add_option("--kind", options->kind, "Kind");
      add_group_option(*list, options->group, "the things");
      add_limit_option(*list, options->limit, "things");
    });
  }

  ListTable table_;
};

TEST_F(ListPageTest, AWholePageIsATableWithTheIdsFirstAndNothingOnStderr) {
  cli_.api.answer("GET api/v1/things?limit=20", 200, page_of(json::array({thing(12, 3, "alpha"), thing(7, 3, "b")})));
  const CliResult r = cli_.run({"things", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  NAME\n"
            "12  alpha\n"
            "7   b\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(ListPageTest, TheFiltersGoIntoTheQueryInTheirOrderThenTheLimit) {
  cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200,
                  page_of(json::array({{{"id", 3}, {"appName", "billing"}}})));
  cli_.api.answer("GET api/v1/things?jobGroup=3&kind=a%20b&limit=5", 200, page_of(json::array({thing(1, 3, "x")})));
  const CliResult r = cli_.run({"things", "list", "--kind", "a b", "--group", "billing", "--limit", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{"GET api/v1/groups?text=billing&offset=0&limit=1000",
                                                        "GET api/v1/things?jobGroup=3&kind=a%20b&limit=5"}));
}

TEST_F(ListPageTest, APartialPageSaysHowManyOfHowManyOnStderr) {
  json page = page_of(json::array({thing(2, 3, "b"), thing(1, 3, "a")}));
  page["total"] = 5;
  cli_.api.answer("GET api/v1/things?limit=2", 200, page);
  page["total"] = 10000;
  page["totalExact"] = false;
  cli_.api.answer("GET api/v1/things?limit=2", 200, page);  // the next answer
  page["totalExact"] = "no";
  cli_.api.answer("GET api/v1/things?limit=2", 200, page);  // and the last

  CliResult r = cli_.run({"things", "list", "--limit", "2"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "(2 of 5 things shown; --limit shows up to 1000)\n");
  r = cli_.run({"things", "list", "--limit", "2"});
  EXPECT_EQ(r.err, "(2 of at least 10000 things shown; --limit shows up to 1000)\n");
  // A totalExact that is not true or false is no reason to fail a listing already printed.
  r = cli_.run({"things", "list", "--limit", "2"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "(2 of 10000 things shown; --limit shows up to 1000)\n");
}

TEST_F(ListPageTest, AnEmptyPageSaysSoOnStderrAndPrintsNoTable) {
  cli_.api.answer("GET api/v1/things?limit=20", 200, page_of(json::array()));
  const CliResult r = cli_.run({"things", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "No things.\n");
}

TEST_F(ListPageTest, JsonAndYamlPrintThePageAsAnsweredAndAskNothingMore) {
  table_.app_names = true;
  const json empty = page_of(json::array());
  json partial = page_of(json::array({thing(1, 3, "a")}));
  partial["total"] = 9;
  cli_.api.answer("GET api/v1/things?limit=20", 200, empty);
  cli_.api.answer("GET api/v1/things?limit=20", 200, partial);  // the next answer

  CliResult r = cli_.run({"things", "list", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), empty);
  EXPECT_EQ(r.err, "");  // no "No things." for a script
  r = cli_.run({"things", "list", "-o", "yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("items:\n  - ", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "");  // nor the partial page's note
  // No group names were looked up for either.
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{"GET api/v1/things?limit=20", "GET api/v1/things?limit=20"}));
}

TEST_F(ListPageTest, AppNamesAreLookedUpOnceForThePage) {
  table_.app_names = true;
  cli_.api.answer("GET api/v1/things?limit=20", 200,
                  page_of(json::array({thing(3, 1, "a"), thing(2, 1, "b"), thing(1, 99, "c")})));
  cli_.api.answer("GET api/v1/groups?limit=1000", 200, page_of(json::array({{{"id", 1}, {"appName", "billing"}}})));
  cli_.api.error("GET api/v1/groups/99", 404, "not_found", "no such group");
  const CliResult r = cli_.run({"things", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  NAME\n"
            "3   billing/a\n"
            "2   billing/b\n"
            "1   #99/c\n");
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{"GET api/v1/things?limit=20", "GET api/v1/groups?limit=1000",
                                                        "GET api/v1/groups/99"}));
}

TEST_F(ListPageTest, TheGroupListedByNamesItsItemsWithoutALookup) {
  table_.app_names = true;
  cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200,
                  page_of(json::array({{{"id", 3}, {"appName", "billing"}}})));
  cli_.api.answer("GET api/v1/things?jobGroup=3&limit=20", 200, page_of(json::array({thing(1, 3, "a")})));
  const CliResult r = cli_.run({"things", "list", "--group", "billing"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ID  NAME\n1   billing/a\n");
  EXPECT_EQ(cli_.api.calls().size(), 2u);
}

TEST_F(ListPageTest, AnErrorAnswerIsSaidInOneLineAndNothingIsPrinted) {
  cli_.api.error("GET api/v1/things?limit=20", 503, "unavailable", "the database is not reachable");
  const CliResult r = cli_.run({"things", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cronwheel: things list: the database is not reachable (HTTP 503)\n");
}

TEST_F(ListPageTest, APageThatIsNotAPageIsUnexpectedAndNothingIsHalfPrinted) {
  cli_.api.answer("GET api/v1/things?limit=20", 200, {{"total", 1}});
  CliResult r = cli_.run({"things", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: things list: unexpected answer from the server: no 'items'\n");

  // The second item has no id: the first is not printed either.
  cli_.api.answer("GET api/v1/things?limit=5", 200, page_of(json::array({thing(2, 3, "b"), {{"name", "a"}}})));
  r = cli_.run({"things", "list", "--limit", "5"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cronwheel: things list: unexpected answer from the server: no 'id'\n");
}

TEST_F(ListPageTest, AFilterNamingNoObjectNamesItsOption) {
  cli_.api.answer("GET api/v1/groups?text=nope&offset=0&limit=1000", 200, page_of(json::array()));
  CliResult r = cli_.run({"things", "list", "--group", "nope"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: things list --group nope: no such group\n");

  cli_.api.answer("GET api/v1/jobs?appName=billing&name=gone&limit=2", 200, page_of(json::array()));
  r = cli_.run({"things", "list", "--job", "billing/gone"});
  EXPECT_EQ(r.err, "cronwheel: things list --job billing/gone: no such job\n");

  cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200,
                  page_of(json::array({{{"id", 3}, {"appName", "billing"}}})));
  cli_.api.answer("GET api/v1/workflows?jobGroup=3&name=gone&limit=2", 200, page_of(json::array()));
  r = cli_.run({"things", "list", "--workflow", "billing/gone"});
  EXPECT_EQ(r.err, "cronwheel: things list --workflow billing/gone: no such workflow\n");
  for (const std::string& call : cli_.api.calls()) EXPECT_EQ(call.find("api/v1/things"), std::string::npos) << call;
}

TEST_F(ListPageTest, TheOptionsRefuseBadValuesBeforeAnythingIsSent) {
  expect_usage_error({"things", "list", "--limit", "1001"}, "cronwheel: things list: --limit: Value 1001 not in range 1 to 1000");
  expect_usage_error({"things", "list", "--limit", "0"}, "cronwheel: things list: --limit: Value 0 not in range 1 to 1000");
  expect_usage_error({"things", "list", "--group", "bad app"},
                     "cronwheel: things list: --group: 'bad app': an app name has only letters, digits, '.', '_' and "
                     "'-', and starts with a letter or digit");
}

}  // namespace
}  // namespace cronwheel::cli
