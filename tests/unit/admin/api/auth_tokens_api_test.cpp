#include "tests/unit/admin/auth/auth_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class TokensApiTest : public AuthApiTest {};

TEST_F(TokensApiTest, TheSecretIsShownOnceAndThenNever) {
  auto alice = alice_login();
  auto created = call("POST", "tokens", json{{"name", "deploy"}}.dump(), alice.changing());
  ASSERT_EQ(created.status, 201) << created.body;
  auto secret = created.json["token"].get<std::string>();
  EXPECT_EQ(secret.rfind("cw_", 0), 0u);
  EXPECT_EQ(created.json["name"], "deploy");
  EXPECT_GT(created.json["id"].get<std::int64_t>(), 0);
  EXPECT_EQ(created.header("Cache-Control"), "no-store");

  auto list = call("GET", "tokens", "", alice.reading());
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.json["total"], 1);
  EXPECT_EQ(list.json["items"][0]["name"], "deploy");
  EXPECT_FALSE(list.json["items"][0].contains("token"));
  EXPECT_EQ(list.body.find(secret), std::string::npos);
  EXPECT_EQ(list.body.find(secret.substr(3)), std::string::npos);

  auto audit = call("GET", "audit?entityType=token", "", admin_login().reading());
  EXPECT_EQ(audit.body.find(secret.substr(3)), std::string::npos) << audit.body;
}

TEST_F(TokensApiTest, ATokenActsAsItsUserWithoutCsrf) {
  auto alice = alice_login();
  auto secret = call("POST", "tokens", json{{"name", "deploy"}}.dump(), alice.changing()).json["token"].get<std::string>();
  auto me = call("GET", "auth/me", "", bearer(secret));
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.json["user"]["username"], "alice");
  EXPECT_FALSE(me.json.contains("csrfToken"));
  EXPECT_EQ(call("POST", "tokens", json{{"name", "second"}}.dump(), bearer(secret)).status, 201);
  // The user's role holds for their tokens too.
  EXPECT_EQ(call("GET", "users", "", bearer(secret)).status, 403);
}

TEST_F(TokensApiTest, ARevokedTokenStopsWorking) {
  auto alice = alice_login();
  auto created = call("POST", "tokens", json{{"name", "deploy"}}.dump(), alice.changing());
  auto secret = created.json["token"].get<std::string>();
  auto id = created.json["id"].get<std::int64_t>();
  EXPECT_EQ(call("GET", "auth/me", "", bearer(secret)).status, 200);

  EXPECT_EQ(call("DELETE", "tokens/" + std::to_string(id), "", alice.changing()).status, 204);
  EXPECT_EQ(call("GET", "auth/me", "", bearer(secret)).status, 401);
  auto list = call("GET", "tokens", "", alice.reading());
  EXPECT_FALSE(list.json["items"][0]["revokedAt"].is_null()) << list.body;
}

TEST_F(TokensApiTest, ATokenWithALifetimeStopsWorkingWhenItEnds) {
  auto alice = alice_login();
  constexpr std::int64_t kDay = 24LL * 3600 * 1000;
  auto created = call("POST", "tokens", json{{"name", "ci"}, {"expiresInDays", 30}}.dump(), alice.changing());
  ASSERT_EQ(created.status, 201) << created.body;
  const auto expires = clock_.now_ms() + 30 * kDay;
  EXPECT_EQ(created.json["expiresAt"], expires);
  auto secret = created.json["token"].get<std::string>();
  auto forever = call("POST", "tokens", json{{"name", "forever"}}.dump(), alice.changing());
  EXPECT_TRUE(forever.json["expiresAt"].is_null()) << forever.body;

  clock_.advance(std::chrono::milliseconds(30 * kDay - 1));
  EXPECT_EQ(call("GET", "auth/me", "", bearer(secret)).status, 200);
  clock_.advance(std::chrono::milliseconds(1));
  auto expired = call("GET", "auth/me", "", bearer(secret));
  EXPECT_EQ(expired.status, 401) << expired.body;
  EXPECT_EQ(call("GET", "auth/me", "", bearer(forever.json["token"])).status, 200);

  // Listed with its expiry, like a revoked token with its revocation.
  alice = alice_login();
  auto list = call("GET", "tokens", "", alice.reading());
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.json["items"][1]["expiresAt"], expires);
  EXPECT_TRUE(list.json["items"][1]["revokedAt"].is_null());
}

TEST_F(TokensApiTest, ALifetimeIsOneToThreeHundredSixtyFiveDays) {
  auto alice = alice_login();
  auto post = [&](const json& days) {
    return call("POST", "tokens", json{{"name", "ci"}, {"expiresInDays", days}}.dump(), alice.changing());
  };
  for (const json& bad : {json(0), json(-1), json(366), json(1LL << 40), json("30"), json(1.5), json(true)}) {
    auto r = post(bad);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
    EXPECT_EQ(r.error_field(), "expiresInDays") << bad;
  }
  EXPECT_EQ(post(366).error_message(), "expiresInDays: 366 is out of range 1-365");
  EXPECT_EQ(post(365).status, 201);
  // null is "never", as leaving it out.
  auto never = call("POST", "tokens", R"({"name":"never","expiresInDays":null})", alice.changing());
  EXPECT_EQ(never.status, 201) << never.body;
  EXPECT_TRUE(never.json["expiresAt"].is_null());
}

TEST_F(TokensApiTest, ChangingThePasswordRevokesEveryToken) {
  auto alice = alice_login();
  auto ci = call("POST", "tokens", json{{"name", "ci"}}.dump(), alice.changing()).json["token"].get<std::string>();
  auto deploy =
      call("POST", "tokens", json{{"name", "deploy"}, {"expiresInDays", 7}}.dump(), alice.changing()).json["token"];
  auto r = call("PUT", "auth/password", json{{"currentPassword", kAlicePassword}, {"newPassword", "a-new-password"}}.dump(),
                alice.changing());
  ASSERT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(call("GET", "auth/me", "", bearer(ci)).status, 401);
  EXPECT_EQ(call("GET", "auth/me", "", bearer(deploy)).status, 401);
  auto list = call("GET", "tokens", "", alice.reading());
  for (const auto& t : list.json["items"]) EXPECT_FALSE(t["revokedAt"].is_null()) << t;
  // Revoked names are free again.
  EXPECT_EQ(call("POST", "tokens", json{{"name", "ci"}}.dump(), alice.changing()).status, 201);
}

TEST_F(TokensApiTest, UsersSeeAndRevokeOnlyTheirOwnTokens) {
  auto alice = alice_login();
  auto admin = admin_login();
  auto created = call("POST", "tokens", json{{"name", "deploy"}}.dump(), alice.changing());
  auto id = created.json["id"].get<std::int64_t>();

  auto admins = call("GET", "tokens", "", admin.reading());
  EXPECT_EQ(admins.json["total"], 0);
  auto revoke = call("DELETE", "tokens/" + std::to_string(id), "", admin.changing());
  EXPECT_EQ(revoke.status, 404);
  EXPECT_EQ(call("GET", "auth/me", "", bearer(created.json["token"])).status, 200);
}

TEST_F(TokensApiTest, TheListPagesByOffsetAndLimit) {
  auto alice = alice_login();
  for (const char* name : {"one", "two", "three"}) {
    ASSERT_EQ(call("POST", "tokens", json{{"name", name}}.dump(), alice.changing()).status, 201);
  }
  auto all = call("GET", "tokens", "", alice.reading());
  ASSERT_EQ(all.status, 200) << all.body;
  ASSERT_EQ(all.json["items"].size(), 3u);

  auto page = call("GET", "tokens?offset=1&limit=1", "", alice.reading());
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.json["total"], 3);
  ASSERT_EQ(page.json["items"].size(), 1u);
  EXPECT_EQ(page.json["items"][0]["id"], all.json["items"][1]["id"]);
  auto last = call("GET", "tokens?offset=2&limit=5", "", alice.reading());
  EXPECT_EQ(last.json["total"], 3);
  ASSERT_EQ(last.json["items"].size(), 1u);
  EXPECT_EQ(last.json["items"][0]["id"], all.json["items"][2]["id"]);
  auto past = call("GET", "tokens?offset=7", "", alice.reading());
  ASSERT_EQ(past.status, 200) << past.body;
  EXPECT_EQ(past.json["total"], 3);
  EXPECT_TRUE(past.json["items"].empty());

  EXPECT_EQ(call("GET", "tokens?offset=-1", "", alice.reading()).error_field(), "offset");
  EXPECT_EQ(call("GET", "tokens?limit=0", "", alice.reading()).error_field(), "limit");
  EXPECT_EQ(call("GET", "tokens?limit=1001", "", alice.reading()).error_field(), "limit");
}

TEST_F(TokensApiTest, NamesAreRequiredShortAndUniquePerUser) {
  auto alice = alice_login();
  auto post = [&](const std::string& body) { return call("POST", "tokens", body, alice.changing()); };
  EXPECT_EQ(post("{}").error_field(), "name");
  EXPECT_EQ(post(R"({"name":"   "})").error_field(), "name");
  EXPECT_EQ(post(json{{"name", std::string(65, 'n')}}.dump()).error_field(), "name");
  EXPECT_EQ(post(R"({"name":"ok","expires":1})").error_field(), "expires");
  EXPECT_EQ(post(R"({"name":"deploy"})").status, 201);
  auto again = post(R"({"name":"deploy"})");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.error_field(), "name");
}

TEST_F(TokensApiTest, TokenChangesAreAudited) {
  auto alice = alice_login();
  auto created = call("POST", "tokens", json{{"name", "deploy"}}.dump(), alice.changing());
  auto id = created.json["id"].get<std::int64_t>();
  call("DELETE", "tokens/" + std::to_string(id), "", alice.changing());
  auto create = last_audit("token.create");
  auto revoke = last_audit("token.revoke");
  ASSERT_TRUE(create);
  ASSERT_TRUE(revoke);
  EXPECT_EQ(create->entity_id, id);
  EXPECT_EQ(create->username, "alice");
  EXPECT_EQ(revoke->user_id, alice_id_);
}

TEST_F(TokensApiTest, AuditListFiltersAndIsForAdmins) {
  auto admin = admin_login();
  alice_login();
  auto all = call("GET", "audit", "", admin.reading());
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_GE(all.json["total"].get<int>(), 2);

  auto alices = call("GET", "audit?userId=" + std::to_string(alice_id_), "", admin.reading());
  ASSERT_EQ(alices.status, 200);
  for (const auto& e : alices.json["items"]) EXPECT_EQ(e["userId"], alice_id_);
  EXPECT_GE(alices.json["total"].get<int>(), 1);

  auto future = call("GET", "audit?from=" + std::to_string(clock_.now_ms() + 1000), "", admin.reading());
  EXPECT_EQ(future.json["total"], 0);
  EXPECT_EQ(call("GET", "audit?entityId=abc", "", admin.reading()).error_field(), "entityId");
  EXPECT_EQ(call("GET", "audit?from=10&to=5", "", admin.reading()).error_field(), "to");
  auto paged = call("GET", "audit?limit=1", "", admin.reading());
  EXPECT_EQ(paged.json["items"].size(), 1u);
}

}  // namespace
}  // namespace cronwheel::admin
