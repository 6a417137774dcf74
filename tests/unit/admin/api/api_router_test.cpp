#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/api/api_errors.h"
#include "admin/api/api_router.h"
#include "admin/api/json_body.h"
#include "admin/model/store_errors.h"
#include "admin/model/stores.h"
#include "common/http/http_client.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

// Accepts "Bearer admin", "Bearer normal" and the session cookie "session=normal".
class FakeAuthenticator : public Authenticator {
 public:
  std::optional<Principal> authenticate(const Credentials& req) override {
    Principal p;
    const std::string auth = req.authorization.value_or("");
    const std::string cookie = req.cookie_headers.empty() ? "" : req.cookie_headers.front();
    if (auth == "Bearer admin" || auth == "Bearer normal") {
      p.method = Principal::Method::kToken;
      p.user.username = auth.substr(7);
    } else if (cookie == "session=normal") {
      p.method = Principal::Method::kSession;
      p.user.username = "normal";
      p.csrf_token = "csrf-secret";
    } else {
      return std::nullopt;
    }
    p.user.id = p.user.username == "admin" ? 1 : 2;
    p.user.role = p.user.username == "admin" ? "admin" : "normal";
    return p;
  }
};

class ApiRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 4;
    server_ = std::make_unique<common::http::HttpServer>(o);
    router_ = std::make_unique<ApiRouter>(*server_, auth_);
    router_->add("POST", "auth/login", Access::kPublic, [](auto&, const auto&) { return ApiResponse{200, {{"ok", true}}}; });
    router_->add("GET", "jobs/{id}", Access::kUser, [](ApiRouter::RouteContext& ctx, const auto&) {
      return ApiResponse{200, {{"id", ctx.path_int("id")}, {"by", ctx.request.actor.username}}};
    });
    router_->add("PUT", "jobs/{id}", Access::kUser, [](ApiRouter::RouteContext& ctx, const cronwheel::common::http::Request& req) {
      JsonBody body(req.body);
      auto desc = body.required_string("jobDesc");
      auto timeout = body.optional_int("executorTimeout");
      body.finish();
      return ApiResponse{200, {{"id", ctx.path_int("id")}, {"jobDesc", desc}, {"executorTimeout", timeout.value_or(0)}}};
    });
    router_->add("DELETE", "users/{id}", Access::kAdmin, [](auto&, const auto&) { return ApiResponse{204, nullptr}; });
    router_->add("GET", "fail/{kind}", Access::kPublic, [](ApiRouter::RouteContext& ctx, const auto&) -> ApiResponse {
      const auto& kind = ctx.path_string("kind");
      if (kind == "missing") throw NotFound("job 7 does not exist");
      if (kind == "conflict") throw Conflict("app name demo is taken", "appName");
      if (kind == "database") throw StoreUnavailable("connection refused to 10.0.0.1");
      throw std::runtime_error("secret internal detail");
    });
    router_->add(
        "GET", "page", Access::kPublic,
        [](auto&, const cronwheel::common::http::Request& req) {
          auto p = page_query(req);
          return ApiResponse{200, {{"offset", p.offset}, {"limit", p.limit}}};
        },
        paged({"text"}));
    server_->start();
  }

  common::http::HttpResult call(const std::string& method, const std::string& path, const std::string& body = "",
                                httplib::Headers headers = {}) {
    httplib::Client client("127.0.0.1", server_->port());
    httplib::Result r = method == "GET"      ? client.Get(path.c_str(), headers)
                        : method == "PUT"    ? client.Put(path.c_str(), headers, body, "application/json")
                        : method == "DELETE" ? client.Delete(path.c_str(), headers)
                                             : client.Post(path.c_str(), headers, body, "application/json");
    common::http::HttpResult out;
    if (r) {
      out.status = r->status;
      out.body = r->body;
    }
    return out;
  }

  static json error_of(const common::http::HttpResult& r) { return json::parse(r.body)["error"]; }

  FakeAuthenticator auth_;
  std::unique_ptr<common::http::HttpServer> server_;
  std::unique_ptr<ApiRouter> router_;
};

TEST_F(ApiRouterTest, PublicRouteNeedsNoCredentials) {
  EXPECT_EQ(call("POST", "/api/v1/auth/login", "{}").status, 200);
}

TEST_F(ApiRouterTest, MissingCredentialsAre401InTheErrorShape) {
  auto r = call("GET", "/api/v1/jobs/5");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(error_of(r)["code"], "unauthorized");
}

TEST_F(ApiRouterTest, PathParametersReachTheHandlerWithTheActor) {
  auto r = call("GET", "/api/v1/jobs/42", "", {{"Authorization", "Bearer normal"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), (json{{"id", 42}, {"by", "normal"}}));
}

TEST_F(ApiRouterTest, NonNumericIdMatchesNoRoute) {
  EXPECT_EQ(call("GET", "/api/v1/jobs/abc", "", {{"Authorization", "Bearer normal"}}).status, 404);
}

TEST_F(ApiRouterTest, AdminRouteRefusesNormalUsers) {
  auto r = call("DELETE", "/api/v1/users/3", "", {{"Authorization", "Bearer normal"}});
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(error_of(r)["code"], "forbidden");
  EXPECT_EQ(call("DELETE", "/api/v1/users/3", "", {{"Authorization", "Bearer admin"}}).status, 204);
}

TEST_F(ApiRouterTest, SessionChangesNeedTheCsrfHeader) {
  const std::string body = R"({"jobDesc":"x"})";
  auto without = call("PUT", "/api/v1/jobs/1", body, {{"Cookie", "session=normal"}});
  EXPECT_EQ(without.status, 403);
  EXPECT_NE(error_of(without)["message"].get<std::string>().find("X-CSRF-Token"), std::string::npos);
  EXPECT_EQ(call("PUT", "/api/v1/jobs/1", body, {{"Cookie", "session=normal"}, {"X-CSRF-Token", "wrong"}}).status, 403);
  EXPECT_EQ(call("PUT", "/api/v1/jobs/1", body, {{"Cookie", "session=normal"}, {"X-CSRF-Token", "csrf-secret"}}).status, 200);
  // Reads need none, and neither do bearer tokens.
  EXPECT_EQ(call("GET", "/api/v1/jobs/1", "", {{"Cookie", "session=normal"}}).status, 200);
  EXPECT_EQ(call("PUT", "/api/v1/jobs/1", body, {{"Authorization", "Bearer normal"}}).status, 200);
}

TEST_F(ApiRouterTest, BodyProblemsNameTheField) {
  httplib::Headers auth{{"Authorization", "Bearer normal"}};
  auto unknown = call("PUT", "/api/v1/jobs/1", R"({"jobDesc":"x","jobDescription":"y"})", auth);
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(error_of(unknown)["field"], "jobDescription");
  EXPECT_EQ(error_of(unknown)["message"], "jobDescription: unknown field");

  auto wrong = call("PUT", "/api/v1/jobs/1", R"({"jobDesc":"x","executorTimeout":"10"})", auth);
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(error_of(wrong)["message"], "executorTimeout: expected an integer, got string");

  auto missing = call("PUT", "/api/v1/jobs/1", R"({})", auth);
  EXPECT_EQ(error_of(missing)["message"], "jobDesc: is required");

  auto malformed = call("PUT", "/api/v1/jobs/1", R"({"jobDesc":)", auth);
  EXPECT_EQ(malformed.status, 400);
  EXPECT_NE(error_of(malformed)["message"].get<std::string>().find("malformed JSON"), std::string::npos);

  auto array = call("PUT", "/api/v1/jobs/1", R"([1,2])", auth);
  EXPECT_EQ(error_of(array)["message"], "the body must be a JSON object, got array");
}

TEST_F(ApiRouterTest, HostileBodiesAre400NamingTheProblemNever500) {
  httplib::Headers auth{{"Authorization", "Bearer normal"}};
  auto message = [&](const std::string& body) {
    auto r = call("PUT", "/api/v1/jobs/1", body, auth);
    EXPECT_EQ(r.status, 400) << body.substr(0, 80) << " -> " << r.body;
    return r.status == 400 ? error_of(r)["message"].get<std::string>() : std::string();
  };
  EXPECT_EQ(message(R"({"jobDesc":"x","executorTimeout":1e400})"), "malformed JSON: a number is out of range");
  EXPECT_EQ(message(R"({"jobDesc":"x","executorTimeout":9223372036854775808})"),
            "executorTimeout: 9223372036854775808 is out of range (at most 9223372036854775807)");
  EXPECT_EQ(message(R"({"jobDesc":"x","executorTimeout":18446744073709551616})"),
            "executorTimeout: 1.8446744073709552e+19 is out of range (at most 9223372036854775807)");
  EXPECT_EQ(message(R"({"jobDesc":"x","executorTimeout":1.5})"), "executorTimeout: expected an integer, got number");
  EXPECT_EQ(message(std::string(100, '[') + std::string(100, ']')), "JSON nested deeper than 16 levels");
  std::string many = R"({"jobDesc":"x","pad":[)";
  for (int i = 0; i < 20'000; ++i) many += "0,";
  many += "0]}";
  EXPECT_EQ(message(many), "JSON with more than 10000 values");
  // NUL would be cut short by PostgreSQL; line breaks would forge log lines.
  EXPECT_EQ(message(R"({"jobDesc":"bob\u0000x"})"), "jobDesc: must not contain NUL characters");
  EXPECT_EQ(message(R"({"jobDesc":"a\nb"})"), "jobDesc: must not contain control characters or line breaks");
  EXPECT_EQ(message("{\"jobDesc\":\"\xff\"}").substr(0, 14), "malformed JSON");
}

TEST_F(ApiRouterTest, BodiesBeyondTheRouteLimitAre413) {
  httplib::Headers auth{{"Authorization", "Bearer normal"}};
  const std::string big = R"({"jobDesc":")" + std::string(ApiRouter::kDefaultMaxBodyBytes, 'x') + R"("})";
  auto r = call("PUT", "/api/v1/jobs/1", big, auth);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(error_of(r)["code"], "payload_too_large");
}

TEST_F(ApiRouterTest, HostileQueryParametersAre400NamingThem) {
  auto r = call("GET", "/api/v1/page?text=%FF");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_of(r)["field"], "text");
  EXPECT_EQ(error_of(r)["message"], "text: not valid UTF-8");
  r = call("GET", "/api/v1/page?text=a%0Ab");
  EXPECT_EQ(error_of(r)["message"], "text: must not contain control characters");
  r = call("GET", "/api/v1/page?offset=9223372036854775808");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_of(r)["message"], "offset: 9223372036854775808 is out of range (at most 9223372036854775807)");
  r = call("GET", "/api/v1/page?%FF=1");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(call("GET", "/api/v1/page?text=caf%C3%A9").status, 200);
}

TEST_F(ApiRouterTest, StoreErrorsMapToStatuses) {
  auto missing = call("GET", "/api/v1/fail/missing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(error_of(missing)["message"], "job 7 does not exist");

  auto taken = call("GET", "/api/v1/fail/conflict");
  EXPECT_EQ(taken.status, 409);
  EXPECT_EQ(error_of(taken)["field"], "appName");

  auto down = call("GET", "/api/v1/fail/database");
  EXPECT_EQ(down.status, 503);
  EXPECT_EQ(down.body.find("10.0.0.1"), std::string::npos) << down.body;

  auto other = call("GET", "/api/v1/fail/other");
  EXPECT_EQ(other.status, 500);
  EXPECT_EQ(other.body.find("secret internal detail"), std::string::npos) << other.body;
}

TEST_F(ApiRouterTest, PagingIsValidated) {
  EXPECT_EQ(json::parse(call("GET", "/api/v1/page").body), (json{{"offset", 0}, {"limit", 20}}));
  EXPECT_EQ(json::parse(call("GET", "/api/v1/page?offset=40&limit=1000").body), (json{{"offset", 40}, {"limit", 1000}}));
  EXPECT_EQ(call("GET", "/api/v1/page?limit=1001").status, 400);
  EXPECT_EQ(call("GET", "/api/v1/page?limit=0").status, 400);
  EXPECT_EQ(call("GET", "/api/v1/page?offset=-1").status, 400);
  auto words = call("GET", "/api/v1/page?limit=ten");
  EXPECT_EQ(error_of(words)["message"], "limit: expected an integer, got \"ten\"");
}

TEST_F(ApiRouterTest, UnknownQueryParametersAre400NamingThem) {
  EXPECT_EQ(call("GET", "/api/v1/page?text=x&offset=1").status, 200);

  auto misspelt = call("GET", "/api/v1/page?text=x&state=failed");
  EXPECT_EQ(misspelt.status, 400);
  EXPECT_EQ(error_of(misspelt)["field"], "state");
  EXPECT_EQ(error_of(misspelt)["message"], "state: unknown query parameter");

  auto none_taken = call("GET", "/api/v1/jobs/7?verbose=1", "", {{"Authorization", "Bearer admin"}});
  EXPECT_EQ(none_taken.status, 400);
  EXPECT_EQ(error_of(none_taken)["message"], "verbose: unknown query parameter (this operation takes none)");
}

TEST_F(ApiRouterTest, QueryParametersAreCheckedOnlyAfterAuthentication) {
  EXPECT_EQ(call("GET", "/api/v1/jobs/7?verbose=1").status, 401) << "an anonymous caller learns nothing";
}

TEST_F(ApiRouterTest, RoutesAreListedAsDocumented) {
  bool found = false;
  for (const auto& r : router_->routes()) {
    if (r.method == "PUT" && r.path == "jobs/{id}") found = true;
  }
  EXPECT_TRUE(found);
  for (const auto& r : router_->routes()) {
    if (r.path == "page") {
      EXPECT_EQ(r.query, (std::vector<std::string>{"text", "offset", "limit"}));
    }
  }
}

}  // namespace
}  // namespace cronwheel::admin
