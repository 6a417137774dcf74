// How the command line names jobs (an id or APP/NAME), groups and runs, and how names become ids.

#include "cli/job_ref.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cli/api_client.h"
#include "tests/unit/cli/cli_harness.h"

namespace cronwheel::cli {
namespace {

using nlohmann::json;
using testing::FakeApi;
using testing::FakeTransport;

JobRef parsed(const std::string& text) {
  auto ref = parse_job_ref(text);
  EXPECT_TRUE(std::holds_alternative<JobRef>(ref)) << text << ": " << std::get<std::string>(ref);
  return std::holds_alternative<JobRef>(ref) ? std::get<JobRef>(ref) : JobRef{};
}

std::string refused(const std::string& text) {
  auto ref = parse_job_ref(text);
  EXPECT_TRUE(std::holds_alternative<std::string>(ref)) << text << " was accepted";
  return std::holds_alternative<std::string>(ref) ? std::get<std::string>(ref) : std::string();
}

TEST(JobRef, DigitsAreAnId) {
  const JobRef ref = parsed("42");
  EXPECT_TRUE(ref.by_id());
  EXPECT_EQ(ref.id, 42);
  EXPECT_EQ(ref.text(), "42");
  EXPECT_EQ(parsed("9223372036854775807").id, INT64_MAX);
}

TEST(JobRef, AppSlashNameIsTheJobsIdentity) {
  const JobRef ref = parsed("billing-svc.eu/nightly_invoices-2");
  EXPECT_FALSE(ref.by_id());
  EXPECT_EQ(ref.app_name, "billing-svc.eu");
  EXPECT_EQ(ref.name, "nightly_invoices-2");
  EXPECT_EQ(ref.text(), "billing-svc.eu/nightly_invoices-2");
  EXPECT_EQ(parsed("Billing/1job").app_name, "Billing");  // app names may have capitals
}

TEST(JobRef, RefusesWhatIsNeitherSayingWhatAJobIs) {
  EXPECT_NE(refused("nightly").find("numeric id or APP/NAME"), std::string::npos);
  EXPECT_NE(refused("").find("numeric id or APP/NAME"), std::string::npos);
  EXPECT_NE(refused("-3").find("numeric id or APP/NAME"), std::string::npos);
  EXPECT_NE(refused("0").find("positive"), std::string::npos);
  EXPECT_NE(refused("9223372036854775808").find("too large"), std::string::npos);
}

TEST(JobRef, RefusesBadAppNamesAndJobNames) {
  EXPECT_NE(refused("/nightly").find("app name is empty"), std::string::npos);
  EXPECT_NE(refused("billing/").find("job name is empty"), std::string::npos);
  EXPECT_NE(refused("billing/Nightly").find("a-z"), std::string::npos);  // names are lower-case
  EXPECT_NE(refused("billing/a/b").find("a-z"), std::string::npos);
  EXPECT_NE(refused("bill ing/x").find("letters, digits"), std::string::npos);
  EXPECT_NE(refused(".billing/x").find("starts with a letter or digit"), std::string::npos);
  EXPECT_NE(refused("billing/-x").find("starts with a letter or digit"), std::string::npos);
  EXPECT_NE(refused(std::string(65, 'a') + "/x").find("64"), std::string::npos);
  EXPECT_NE(refused("billing/" + std::string(101, 'a')).find("100"), std::string::npos);
  parsed(std::string(64, 'a') + "/" + std::string(100, 'b'));
}

TEST(WorkflowRef, IsNamedAsAJobIsWithReasonsThatSayWorkflow) {
  auto ref = parse_workflow_ref("billing/nightly-etl");
  ASSERT_TRUE(std::holds_alternative<WorkflowRef>(ref));
  EXPECT_EQ(std::get<WorkflowRef>(ref).app_name, "billing");
  EXPECT_EQ(std::get<WorkflowRef>(ref).name, "nightly-etl");
  EXPECT_EQ(std::get<WorkflowRef>(parse_workflow_ref("12")).id, 12);
  EXPECT_EQ(std::get<std::string>(parse_workflow_ref("etl")),
            "a workflow is its numeric id or APP/NAME (the group's app name and the workflow's name)");
  EXPECT_EQ(std::get<std::string>(parse_workflow_ref("billing/")), "the workflow name is empty");
  EXPECT_EQ(std::get<std::string>(parse_workflow_ref("billing/" + std::string(101, 'a'))),
            "a workflow name has at most 100 characters");
  EXPECT_EQ(std::get<std::string>(parse_workflow_ref("bad app/etl")),
            "an app name has only letters, digits, '.', '_' and '-', and starts with a letter or digit");
  EXPECT_FALSE(workflow_name_problem("etl.v2_x-1"));
  EXPECT_TRUE(workflow_name_problem("Etl"));
}

TEST(ParseId, AcceptsPositiveWholeNumbersOnly) {
  EXPECT_EQ(std::get<std::int64_t>(parse_id("17")), 17);
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_id("0")));
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_id("1.5")));
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_id("")));
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_id("99999999999999999999")));
}

class ResolveTest : public ::testing::Test {
 protected:
  FakeApi fake_;
  ApiClient api_{std::make_unique<FakeTransport>(fake_), true};
};

TEST_F(ResolveTest, AnIdNeedsNoCall) {
  EXPECT_EQ(resolve_job(api_, parsed("42")), 42);
  EXPECT_TRUE(fake_.calls().empty());
}

TEST_F(ResolveTest, AppSlashNameIsLookedUpByAppNameAndName) {
  fake_.answer("GET api/v1/jobs?appName=billing&name=nightly&limit=2", 200,
               testing::page_of(json::array({testing::job_json(7, 3, "nightly")})));
  EXPECT_EQ(resolve_job(api_, parsed("billing/nightly")), 7);
}

TEST_F(ResolveTest, NoJobOfThatNameIsNoSuchJob) {
  fake_.answer("GET api/v1/jobs?appName=billing&name=nightly&limit=2", 200, testing::page_of(json::array()));
  try {
    resolve_job(api_, parsed("billing/nightly"));
    FAIL() << "resolved";
  } catch (const CliError& e) {
    EXPECT_STREQ(e.what(), "no such job");
    EXPECT_EQ(e.status(), kExitFailed);
  }
}

TEST_F(ResolveTest, AMalformedAnswerIsUnexpected) {
  fake_.answer("GET api/v1/jobs?appName=billing&name=nightly&limit=2", 200, {{"items", {{{"id", "seven"}}}}});
  try {
    resolve_job(api_, parsed("billing/nightly"));
    FAIL() << "resolved";
  } catch (const CliError& e) {
    EXPECT_EQ(std::string(e.what()), "unexpected answer from the server: 'id' is not an integer");
  }
}

TEST_F(ResolveTest, AGroupIsFoundByItsExactAppNameAcrossPages) {
  json first = json::array();
  for (int i = 1; i <= 1000; ++i) first.push_back({{"id", i}, {"appName", "billing-" + std::to_string(i)}});
  fake_.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200, {{"items", first}, {"total", 1001}});
  fake_.answer("GET api/v1/groups?text=billing&offset=1000&limit=1000", 200,
               {{"items", {{{"id", 5000}, {"appName", "billing"}}}}, {"total", 1001}});
  EXPECT_EQ(resolve_group(api_, "billing")["id"], 5000);
}

TEST_F(ResolveTest, NoGroupOfThatAppNameIsNoSuchGroup) {
  fake_.answer("GET api/v1/groups?text=bill&offset=0&limit=1000", 200,
               {{"items", {{{"id", 1}, {"appName", "billing"}}}}, {"total", 1}});
  try {
    resolve_group(api_, "bill");
    FAIL() << "resolved";
  } catch (const CliError& e) {
    EXPECT_STREQ(e.what(), "no such group");
  }
}

TEST_F(ResolveTest, AWorkflowByNameIsLookedUpInItsGroup) {
  fake_.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200,
               {{"items", {{{"id", 4}, {"appName", "billing-eu"}}, {{"id", 3}, {"appName", "billing"}}}}, {"total", 2}});
  fake_.answer("GET api/v1/workflows?jobGroup=3&name=etl&limit=2", 200,
               testing::page_of(json::array({{{"id", 12}, {"jobGroup", 3}, {"name", "etl"}}})));
  EXPECT_EQ(resolve_workflow(api_, std::get<WorkflowRef>(parse_workflow_ref("billing/etl"))), 12);
  EXPECT_EQ(resolve_workflow(api_, std::get<WorkflowRef>(parse_workflow_ref("13"))), 13);
  EXPECT_EQ(fake_.calls().size(), 2u);  // the id needed none
}

TEST_F(ResolveTest, NoWorkflowOfThatNameIsNoSuchWorkflow) {
  fake_.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200,
               {{"items", {{{"id", 3}, {"appName", "billing"}}}}, {"total", 1}});
  fake_.answer("GET api/v1/workflows?jobGroup=3&name=etl&limit=2", 200, testing::page_of(json::array()));
  try {
    resolve_workflow(api_, std::get<WorkflowRef>(parse_workflow_ref("billing/etl")));
    FAIL() << "resolved";
  } catch (const CliError& e) {
    EXPECT_STREQ(e.what(), "no such workflow");
    EXPECT_EQ(e.status(), kExitFailed);
  }
}

TEST_F(ResolveTest, AppNamesOfAListComeFromOnePageAndThenOneByOne) {
  fake_.answer("GET api/v1/groups?limit=1000", 200,
               testing::page_of(json::array({{{"id", 3}, {"appName", "billing"}}})));
  fake_.answer("GET api/v1/groups/9", 200, {{"id", 9}, {"appName", "ledger"}});
  fake_.error("GET api/v1/groups/10", 404, "not_found", "no such group");
  const json objects = json::array({{{"jobGroup", 3}, {"name", "a"}},
                                    {{"jobGroup", 9}, {"workflowName", "b"}},
                                    {{"jobGroup", 10}, {"name", "c"}},
                                    {{"jobGroup", 3}, {"name", "d"}}});
  const auto apps = group_app_names(api_, objects);
  EXPECT_EQ(app_slash_name(objects[0], apps), "billing/a");
  EXPECT_EQ(app_slash_name(objects[1], apps, "workflowName"), "ledger/b");
  EXPECT_EQ(app_slash_name(objects[2], apps), "#10/c");
  EXPECT_EQ(fake_.calls().size(), 3u);
  EXPECT_TRUE(group_app_names(api_, json::array()).empty());
  EXPECT_EQ(fake_.calls().size(), 3u);  // nothing to name: no call
}

TEST(QueryString, PercentEncodesNamesAndValues) {
  EXPECT_EQ(query_string({}), "");
  EXPECT_EQ(query_string({{"text", "a b&c=d/é"}, {"limit", "5"}}), "?text=a%20b%26c%3Dd%2F%C3%A9&limit=5");
}

}  // namespace
}  // namespace cronwheel::cli
