// Every resource route that names an object by id, called by a normal user with the id of an
// object of a group that is not theirs: each must answer 404 (403 for admin-only routes) and
// change nothing. The route table drives the test, so a route added later without a line here
// fails it until someone says what its ids mean.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class Permissions : public ResourceApiTest {
 protected:
  void SetUp() override {
    ResourceApiTest::SetUp();
    mine_ = add_group("reports", 1, {"http://10.0.0.5:9999/"});
    theirs_ = add_group("billing", 1, {"http://10.0.0.9:9999/"});
    add_user("alice", "normal", {mine_.id});

    my_job_ = add_script_job(mine_.id, "mine");
    their_job_ = add_script_job(theirs_.id, "theirs");
    their_version_ = stores_.scripts.save_version(their_job_.id, "echo theirs v2", "v2", system_).glue_source;
    their_version_id_ = stores_.scripts.versions(their_job_.id).front().id;

    JobLog log;
    log.job_group = theirs_.id;
    log.job_id = their_job_.id;
    log.state = FireState::kTriggered;
    log.trigger_type = TriggerType::kSchedule;
    log.scheduled_time = kStartMs;
    log.trigger_time = kStartMs;
    log.admin_node = "node-under-test";
    log.executor_address = "http://10.0.0.9:9999/";
    their_log_ = fake_.put_log(log);
  }

  Job add_script_job(std::int64_t group, const std::string& desc) {
    Job j;
    j.job_group = group;
    j.job_desc = desc;
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = "0 0 3 * * ?";
    j.glue_type = GlueType::kGlueShell;
    j.glue_source = "echo " + desc;
    return stores_.jobs.create(j, system_);
  }

  Group mine_;
  Group theirs_;
  Job my_job_;
  Job their_job_;
  std::string their_version_;
  std::int64_t their_version_id_ = 0;
  JobLog their_log_;
};

// "jobs/{id}/script/versions/{versionId}/restore" with each {name} replaced by `ids[name]`.
std::string fill(std::string path, const std::map<std::string, std::int64_t>& ids) {
  for (const auto& [name, id] : ids) {
    const std::string param = "{" + name + "}";
    for (auto at = path.find(param); at != std::string::npos; at = path.find(param)) {
      path.replace(at, param.size(), std::to_string(id));
    }
  }
  return path;
}

TEST_F(Permissions, EveryRouteWithAnIdRefusesAnotherGroupsObject) {
  // What each route's ids name, for the other group's objects.
  const std::map<std::string, std::map<std::string, std::int64_t>> others = {
      {"groups/", {{"id", theirs_.id}}},
      {"jobs/", {{"id", their_job_.id}, {"versionId", their_version_id_}}},
      {"logs/", {{"id", their_log_.id}}},
  };
  int checked = 0;
  for (const auto& route : router_->routes()) {
    if (route.path.find('{') == std::string::npos) continue;
    const auto prefix = route.path.substr(0, route.path.find('/') + 1);
    auto ids = others.find(prefix);
    ASSERT_NE(ids, others.end()) << route.method << " " << route.path
                                 << ": a new route with an id; say here which object of another group it names";
    const auto path = fill(route.path, ids->second);
    ASSERT_EQ(path.find('{'), std::string::npos) << route.path;
    const auto answer = call(route.method, path, route.method == "GET" || route.method == "DELETE" ? "" : "{}", "alice");
    const int expected = route.access == Access::kAdmin ? 403 : 404;
    EXPECT_EQ(answer.status, expected) << route.method << " " << path << ": " << answer.text;
    ++checked;
  }
  EXPECT_GE(checked, 14);

  // Nothing of theirs changed.
  EXPECT_EQ(stores_.groups.get(theirs_.id)->title, theirs_.title);
  EXPECT_EQ(stores_.jobs.get(their_job_.id)->trigger_status, 0);
  EXPECT_EQ(stores_.jobs.get(their_job_.id)->glue_source, their_version_);
  EXPECT_EQ(stores_.logs.get(their_log_.id)->state, FireState::kTriggered);
}

TEST_F(Permissions, AnotherJobsScriptVersionCannotBeRestoredIntoOnesOwn) {
  const auto path = "jobs/" + std::to_string(my_job_.id) + "/script/versions/" + std::to_string(their_version_id_) +
                    "/restore";
  auto r = post(path, json::object(), "alice");
  EXPECT_EQ(r.status, 404) << r.text;
  EXPECT_EQ(stores_.jobs.get(my_job_.id)->glue_source, "echo mine");
}

TEST_F(Permissions, GroupIdsInBodiesAndQueriesStayWithinTheUsersGroups) {
  const auto their_group = std::to_string(theirs_.id);
  EXPECT_EQ(get("jobs?jobGroup=" + their_group, "alice").body["total"], 0);
  EXPECT_EQ(get("logs?jobGroup=" + their_group, "alice").body["total"], 0);
  EXPECT_EQ(get("logs?jobId=" + std::to_string(their_job_.id), "alice").body["total"], 0);
  auto create = post("jobs", {{"jobGroup", theirs_.id}, {"jobDesc", "x"}, {"glueType", "GLUE_SHELL"}}, "alice");
  EXPECT_EQ(create.status, 400);
  EXPECT_EQ(create.field(), "jobGroup");
  EXPECT_EQ(put("jobs/" + std::to_string(my_job_.id), {{"jobGroup", theirs_.id}}, "alice").status, 400);
  EXPECT_EQ(put("jobs/" + std::to_string(my_job_.id), {{"childJobId", {their_job_.id}}}, "alice").field(),
            "childJobId");
  EXPECT_EQ(post("logs/clear", {{"jobGroup", theirs_.id}, {"keep", 0}}, "alice").field(), "jobGroup");
  EXPECT_EQ(post("groups", {{"appName", "mine-too"}, {"title", "t"}}, "alice").status, 403);
  EXPECT_TRUE(stores_.logs.get(their_log_.id).has_value());
}

TEST_F(Permissions, TriggerAddressesAreTheJobsGroupsOnly) {
  // Another group's executor, the metadata service, the database: none gets the run (or the
  // token it carries), whoever asks.
  for (const std::string& user : {std::string("alice"), std::string("admin")}) {
    for (const std::string& address :
         {std::string("http://10.0.0.9:9999/"), std::string("http://169.254.169.254/latest/meta-data/"),
          std::string("http://127.0.0.1:5432/")}) {
      auto r = post("jobs/" + std::to_string(my_job_.id) + "/trigger", {{"addressList", {address}}}, user);
      EXPECT_EQ(r.status, 400) << user << " " << address;
      EXPECT_EQ(r.field(), "addressList") << user << " " << address;
    }
  }
  auto own = post("jobs/" + std::to_string(my_job_.id) + "/trigger", {{"addressList", {"http://10.0.0.5:9999"}}}, "alice");
  EXPECT_EQ(own.status, 201) << own.text;
}

}  // namespace
}  // namespace cronwheel::admin
