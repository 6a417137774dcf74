#include <nlohmann/json.hpp>

#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class ScriptsApi : public ResourceApiTest {
 protected:
  void SetUp() override {
    ResourceApiTest::SetUp();
    group_ = add_group("scripts");
    Job j;
    j.job_group = group_.id;
    j.job_desc = "cleanup";
    j.glue_type = GlueType::kGlueShell;
    j.glue_source = "echo v0";
    script_job_ = stores_.jobs.create(j, system_);
  }

  std::string path(const std::string& rest) const { return "jobs/" + std::to_string(script_job_.id) + rest; }

  Group group_;
  Job script_job_;
};

TEST_F(ScriptsApi, SavingAVersionUpdatesTheJobAndTheHistory) {
  auto r = post(path("/script"), {{"glueSource", "echo v1"}, {"glueRemark", "first cut"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["glueSource"], "echo v1");
  EXPECT_EQ(r.body["glueRemark"], "first cut");
  EXPECT_EQ(last_audit().action, "script.save");
  post(path("/script"), {{"glueSource", "echo v2"}, {"glueRemark", "second"}});

  auto versions = get(path("/script/versions"));
  ASSERT_EQ(versions.status, 200) << versions.text;
  EXPECT_EQ(versions.body["total"], 3);
  EXPECT_EQ(versions.body["items"][0]["glueSource"], "echo v2");  // newest first
  EXPECT_EQ(versions.body["items"][1]["glueRemark"], "first cut");
  EXPECT_EQ(versions.body["items"][0]["glueType"], "GLUE_SHELL");
  // The script the job was created with is the oldest version.
  EXPECT_EQ(versions.body["items"][2]["glueSource"], "echo v0");

  auto paged = get(path("/script/versions?offset=1&limit=5"));
  EXPECT_EQ(paged.body["total"], 3);
  ASSERT_EQ(paged.body["items"].size(), 2u);
  EXPECT_EQ(paged.body["items"][0]["glueSource"], "echo v1");
}

TEST_F(ScriptsApi, OnlyTheNewestThirtyVersionsAreKept) {
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(post(path("/script"), {{"glueSource", "echo " + std::to_string(i)}, {"glueRemark", "v" + std::to_string(i)}}).status,
              200);
  }
  auto versions = get(path("/script/versions?limit=100"));
  EXPECT_EQ(versions.body["total"], 30);
  EXPECT_EQ(versions.body["items"][29]["glueRemark"], "v2");
}

TEST_F(ScriptsApi, RemarkIsRequiredAndShort) {
  auto r = post(path("/script"), {{"glueSource", "echo"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message(), "glueRemark: is required");
  r = post(path("/script"), {{"glueSource", "echo"}, {"glueRemark", " "}});
  EXPECT_EQ(r.message(), "glueRemark: must not be empty");
  r = post(path("/script"), {{"glueSource", "echo"}, {"glueRemark", std::string(129, 'r')}});
  EXPECT_EQ(r.message(), "glueRemark: at most 128 characters, got 129");
  r = post(path("/script"), {{"glueRemark", "x"}});
  EXPECT_EQ(r.message(), "glueSource: is required");
  r = post(path("/script"), {{"glueSource", "echo"}, {"glueRemark", "x"}, {"glueType", "GLUE_PYTHON"}});
  EXPECT_EQ(r.message(), "glueType: unknown field");
}

TEST_F(ScriptsApi, BeanJobsHaveNoScript) {
  auto bean = add_job(group_.id);
  auto r = post("jobs/" + std::to_string(bean.id) + "/script", {{"glueSource", "echo"}, {"glueRemark", "x"}});
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.field(), "glueType");
  EXPECT_EQ(r.message(), "job " + std::to_string(bean.id) + " is a BEAN job; only GLUE_* jobs have script source");
}

TEST_F(ScriptsApi, RestoreSavesTheOldSourceAsTheNewestVersion) {
  post(path("/script"), {{"glueSource", "echo v1"}, {"glueRemark", "first"}});
  post(path("/script"), {{"glueSource", "echo v2"}, {"glueRemark", "second"}});
  const auto v1 = get(path("/script/versions")).body["items"][1]["id"].get<std::int64_t>();

  auto r = post(path("/script/versions/" + std::to_string(v1) + "/restore"));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["glueSource"], "echo v1");
  EXPECT_EQ(r.body["glueRemark"], "restored version " + std::to_string(v1) + ": first");
  auto versions = get(path("/script/versions"));
  EXPECT_EQ(versions.body["total"], 4);
  EXPECT_EQ(versions.body["items"][0]["glueSource"], "echo v1");
}

TEST_F(ScriptsApi, RestoreOfAnotherJobsVersionIs404) {
  Job other = script_job_;
  other.id = 0;
  other.name.clear();
  other = stores_.jobs.create(other, system_);
  stores_.scripts.save_version(other.id, "echo other", "other", system_);
  const auto foreign = stores_.scripts.versions(other.id).front().id;
  auto r = post(path("/script/versions/" + std::to_string(foreign) + "/restore"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.message(), "no such script version: " + std::to_string(foreign));
  EXPECT_EQ(post(path("/script/versions/9999/restore")).status, 404);
}

TEST_F(ScriptsApi, RestoreRefusesSourceOfAnotherLanguage) {
  post(path("/script"), {{"glueSource", "echo v1"}, {"glueRemark", "shell"}});
  const auto shell_version = stores_.scripts.versions(script_job_.id).front().id;
  ASSERT_EQ(put(path(""), {{"glueType", "GLUE_PYTHON"}}).status, 200);
  auto r = post(path("/script/versions/" + std::to_string(shell_version) + "/restore"));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.field(), "glueType");
}

TEST_F(ScriptsApi, NormalUserCannotReachAnotherGroupsScript) {
  add_user("bob", "normal", {});
  EXPECT_EQ(get(path("/script/versions"), "bob").status, 404);
  EXPECT_EQ(post(path("/script"), {{"glueSource", "rm -rf /"}, {"glueRemark", "x"}}, "bob").status, 404);
  EXPECT_EQ(stores_.jobs.get(script_job_.id)->glue_source, "echo v0");
}

}  // namespace
}  // namespace cronwheel::admin
