#include <nlohmann/json.hpp>

#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class GroupsApi : public ResourceApiTest {};

TEST_F(GroupsApi, AdminCreatesAGroupAnsweredWholeAndAudited) {
  auto r = post("groups", {{"appName", "billing-executor"},
                           {"title", "Billing"},
                           {"addressType", 1},
                           {"addressList", {"http://10.0.0.5:9999/", "https://exec.example.com/"}},
                           {"accessToken", "s3cret"}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_GT(r.body["id"].get<std::int64_t>(), 0);
  EXPECT_EQ(r.body["appName"], "billing-executor");
  EXPECT_EQ(r.body["title"], "Billing");
  EXPECT_EQ(r.body["addressType"], 1);
  EXPECT_EQ(r.body["addressList"], json({"http://10.0.0.5:9999/", "https://exec.example.com/"}));
  EXPECT_EQ(r.body["accessTokenSet"], true);
  EXPECT_FALSE(r.body.contains("accessToken"));

  auto audit = last_audit();
  EXPECT_EQ(audit.action, "group.create");
  EXPECT_EQ(audit.username, "admin");
  EXPECT_EQ(audit.entity_id, r.body["id"].get<std::int64_t>());
}

TEST_F(GroupsApi, AGroupsConcurrencyLimitIsStoredAndBounded) {
  auto r = post("groups", {{"appName", "limited-executor"}, {"title", "Limited"}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["maxRunning"], 0) << "no limit by default";
  const std::string path = "groups/" + r.body["id"].dump();
  r = put(path, {{"maxRunning", 10}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["maxRunning"], 10);
  EXPECT_EQ(stores_.groups.get(r.body["id"].get<std::int64_t>())->max_running, 10);
  r = put(path, {{"title", "Still limited"}});
  EXPECT_EQ(r.body["maxRunning"], 10) << "kept by an update that leaves it out";
  for (const auto& bad : {json(-1), json(10'001), json("5")}) {
    r = put(path, {{"maxRunning", bad}});
    EXPECT_EQ(r.status, 400) << bad.dump();
    EXPECT_EQ(r.field(), "maxRunning") << r.text;
  }
}

TEST_F(GroupsApi, AutomaticGroupNeedsNoAddresses) {
  auto r = post("groups", {{"appName", "reports"}, {"title", "Reports"}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["addressType"], 0);
  EXPECT_EQ(r.body["addressList"], json::array());
  EXPECT_EQ(r.body["accessTokenSet"], false);
}

TEST_F(GroupsApi, CreatingOrUpdatingAnAutomaticGroupAsksForItsRegisteredAddresses) {
  auto manual = post("groups", {{"appName", "manual-app"}, {"title", "M"}, {"addressType", 1},
                                {"addressList", {"http://10.0.0.5:9999/"}}});
  ASSERT_EQ(manual.status, 201) << manual.text;
  EXPECT_EQ(automatic_group_changes_, 0) << "a manual group's list is its own";

  auto automatic = post("groups", {{"appName", "auto-app"}, {"title", "A"}});
  ASSERT_EQ(automatic.status, 201) << automatic.text;
  EXPECT_EQ(automatic_group_changes_, 1);

  auto id = std::to_string(manual.body["id"].get<std::int64_t>());
  ASSERT_EQ(put("groups/" + id, {{"title", "M"}, {"addressType", 0}}).status, 200);
  EXPECT_EQ(automatic_group_changes_, 2) << "a group switched to automatic lists its executors";

  EXPECT_EQ(post("groups", {{"appName", "auto-app"}, {"title", "again"}}).status, 409);
  EXPECT_EQ(automatic_group_changes_, 2) << "a refused change asks for nothing";
}

TEST_F(GroupsApi, AppNameIsFourToSixtyFourSafeCharacters) {
  auto r = post("groups", {{"appName", "abc"}, {"title", "t"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "appName");
  EXPECT_EQ(r.message(), "appName: 4 to 64 characters, got 3");
  r = post("groups", {{"appName", std::string(65, 'a')}, {"title", "t"}});
  EXPECT_EQ(r.message(), "appName: 4 to 64 characters, got 65");
  r = post("groups", {{"appName", "-billing"}, {"title", "t"}});
  EXPECT_EQ(r.message(),
            "appName: letters, digits, '.', '_' and '-' only, starting with a letter or digit, got '-billing'");
  r = post("groups", {{"appName", "bill ing"}, {"title", "t"}});
  EXPECT_EQ(r.field(), "appName");
  EXPECT_EQ(post("groups", {{"appName", std::string(64, 'a')}, {"title", "t"}}).status, 201);
  EXPECT_EQ(post("groups", {{"appName", "a1._-"}, {"title", "t"}}).status, 201);
}

TEST_F(GroupsApi, TakenAppNameIsAConflict) {
  add_group("billing");
  auto r = post("groups", {{"appName", "billing"}, {"title", "Again"}});
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.error()["code"], "conflict");
  EXPECT_EQ(r.field(), "appName");
}

TEST_F(GroupsApi, TitleIsRequiredAndAtMost64Characters) {
  auto r = post("groups", {{"appName", "billing"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message(), "title: is required");
  r = post("groups", {{"appName", "billing"}, {"title", "  "}});
  EXPECT_EQ(r.message(), "title: must not be empty");
  r = post("groups", {{"appName", "billing"}, {"title", std::string(65, 't')}});
  EXPECT_EQ(r.message(), "title: at most 64 characters, got 65");
}

TEST_F(GroupsApi, AddressTypeIsZeroOrOne) {
  auto r = post("groups", {{"appName", "billing"}, {"title", "t"}, {"addressType", 2}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "addressType");
  EXPECT_EQ(r.message(), "addressType: expected 0 (from executor registrations) or 1 (entered by hand), got 2");
}

TEST_F(GroupsApi, ManualAddressesAreHttpUrls) {
  auto r = post("groups", {{"appName", "billing"}, {"title", "t"}, {"addressType", 1}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message(), "addressList: a group with addressType 1 needs at least one executor address");
  r = post("groups", {{"appName", "billing"},
                      {"title", "t"},
                      {"addressType", 1},
                      {"addressList", {"http://10.0.0.5:9999/", "ftp://10.0.0.6/"}}});
  EXPECT_EQ(r.field(), "addressList");
  EXPECT_EQ(r.message(),
            "addressList[1]: expected an http(s) URL such as http://10.0.0.5:9999/, got 'ftp://10.0.0.6/' (the scheme "
            "must be http or https)");
  for (const char* bad : {"10.0.0.5:9999", "http://", "http://host:99999/", "http://a b/"}) {
    r = post("groups", {{"appName", "billing"}, {"title", "t"}, {"addressType", 1}, {"addressList", {bad}}});
    EXPECT_EQ(r.status, 400) << bad;
  }
  r = post("groups", {{"appName", "billing"},
                      {"title", "t"},
                      {"addressType", 1},
                      {"addressList", {"http://a:1/", "http://a:1/"}}});
  EXPECT_EQ(r.message(), "addressList: 'http://a:1/' is listed twice");
  // XXL-JOB's comma-separated form is read too.
  r = post("groups", {{"appName", "billing"},
                      {"title", "t"},
                      {"addressType", 1},
                      {"addressList", "http://10.0.0.5:9999/, http://[::1]:9999"}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.body["addressList"], json({"http://10.0.0.5:9999/", "http://[::1]:9999"}));
}

TEST_F(GroupsApi, AutomaticGroupRefusesHandEnteredAddresses) {
  auto r = post("groups", {{"appName", "billing"}, {"title", "t"}, {"addressList", {"http://10.0.0.5:9999/"}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "addressList");
}

TEST_F(GroupsApi, UnknownReadOnlyAndMistypedFieldsAreRefused) {
  auto r = post("groups", {{"appName", "billing"}, {"title", "t"}, {"appname", "x"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message(), "appname: unknown field");
  r = post("groups", {{"appName", "billing"}, {"title", "t"}, {"id", 5}});
  EXPECT_EQ(r.message(), "id: is read-only");
  r = post("groups", {{"appName", "billing"}, {"title", "t"}, {"addressType", "1"}});
  EXPECT_EQ(r.message(), "addressType: expected an integer, got string");
  r = call("POST", "groups", "{\"appName\":");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error()["code"], "invalid");
}

TEST_F(GroupsApi, UpdateKeepsTheAppName) {
  auto g = add_group("billing");
  auto r = put("groups/" + std::to_string(g.id), {{"appName", "billing2"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "appName");
  EXPECT_EQ(r.message(), "appName: cannot be changed (jobs and executors know the group by it)");

  r = put("groups/" + std::to_string(g.id), {{"appName", "billing"}, {"title", "Billing v2"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["title"], "Billing v2");
  EXPECT_EQ(r.body["appName"], "billing");
  auto audit = last_audit();
  EXPECT_EQ(audit.action, "group.update");
  ASSERT_TRUE(audit.before && audit.after);
  EXPECT_EQ(json::parse(*audit.before)["title"], "Title of billing");
  EXPECT_EQ(json::parse(*audit.after)["title"], "Billing v2");
}

TEST_F(GroupsApi, UpdateSwitchesAddressTypeAndSetsTheToken) {
  auto g = add_group("billing");
  const auto path = "groups/" + std::to_string(g.id);
  EXPECT_EQ(put(path, {{"addressType", 1}}).message(),
            "addressList: a group with addressType 1 needs at least one executor address");
  auto r = put(path, {{"addressType", 1}, {"addressList", {"http://10.0.0.5:9999/"}}, {"accessToken", "tok"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["addressList"], json({"http://10.0.0.5:9999/"}));
  EXPECT_EQ(r.body["accessTokenSet"], true);
  EXPECT_EQ(stores_.groups.get(g.id)->access_token, "tok");

  r = put(path, {{"addressType", 0}, {"accessToken", ""}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["addressList"], json::array());  // executor registrations fill it again
  EXPECT_EQ(r.body["accessTokenSet"], false);
}

TEST_F(GroupsApi, DeletingAGroupWithJobsIsAConflict) {
  auto g = add_group("billing");
  auto job = add_job(g.id);
  auto r = del("groups/" + std::to_string(g.id));
  EXPECT_EQ(r.status, 409) << r.text;
  EXPECT_EQ(r.error()["code"], "conflict");

  stores_.jobs.remove(job.id, system_);
  EXPECT_EQ(del("groups/" + std::to_string(g.id)).status, 204);
  EXPECT_EQ(get("groups/" + std::to_string(g.id)).status, 404);
  EXPECT_EQ(last_audit().action, "group.delete");
  EXPECT_EQ(del("groups/" + std::to_string(g.id)).status, 404);
}

TEST_F(GroupsApi, ListFiltersByTextAndPages) {
  add_group("billing");
  add_group("reports");
  add_group("reports-eu");
  auto r = get("groups?text=REPORT");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["total"], 2);
  ASSERT_EQ(r.body["items"].size(), 2u);
  EXPECT_EQ(r.body["items"][0]["appName"], "reports");

  r = get("groups?offset=1&limit=1");
  EXPECT_EQ(r.body["total"], 3);
  ASSERT_EQ(r.body["items"].size(), 1u);
  EXPECT_EQ(r.body["items"][0]["appName"], "reports");
  EXPECT_EQ(get("groups?limit=0").status, 400);
}

TEST_F(GroupsApi, NormalUserSeesOnlyTheirGroupsAndChangesNone) {
  auto mine = add_group("team-a");
  auto theirs = add_group("team-b");
  add_user("alice", "normal", {mine.id});

  auto r = get("groups", "alice");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["total"], 1);
  EXPECT_EQ(r.body["items"][0]["appName"], "team-a");
  EXPECT_EQ(get("groups/" + std::to_string(mine.id), "alice").status, 200);
  auto hidden = get("groups/" + std::to_string(theirs.id), "alice");
  EXPECT_EQ(hidden.status, 404);
  EXPECT_EQ(hidden.message(), "no such group: " + std::to_string(theirs.id));

  EXPECT_EQ(post("groups", {{"appName", "team-c"}, {"title", "t"}}, "alice").status, 403);
  EXPECT_EQ(put("groups/" + std::to_string(mine.id), {{"title", "x"}}, "alice").status, 403);
  EXPECT_EQ(del("groups/" + std::to_string(mine.id), "alice").status, 403);
}

TEST_F(GroupsApi, RequestsWithoutCredentialsAreRefused) {
  EXPECT_EQ(get("groups", "").status, 401);
  EXPECT_EQ(get("groups", "nobody").status, 401);
}

}  // namespace
}  // namespace cronwheel::admin
