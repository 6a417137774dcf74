#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>

#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "tests/unit/common/http/test_server.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using common::http::HttpClient;
using common::http::HttpClientOptions;
using common::http::HttpServer;
using common::http::TransportError;
using Clock = std::chrono::steady_clock;

std::string origin(const HttpServer& server) {
  return "http://127.0.0.1:" + std::to_string(server.port());
}

int closed_port() { return testing::unused_loopback_port(); }

TEST(HttpClient, ClosedPortIsAConnectErrorNotAnException) {
  HttpClient client("http://127.0.0.1:" + std::to_string(closed_port()) + "/");
  common::http::HttpResult result;
  ASSERT_NO_THROW(result = client.post_json("/run", "{}"));
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.transport_error, TransportError::kConnect);
  EXPECT_EQ(result.error.rfind("POST " + client.url("/run") + ": cannot connect", 0), 0u)
      << result.error;
}

TEST(HttpClient, ReadTimeoutIsATimeoutErrorWithinBound) {
  HttpServer server(testing::loopback_options());
  testing::Gate release;
  server.post("/slow", [&](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    release.wait();
    res.set_content("{}", "application/json");
  });
  server.start();
  HttpClientOptions options;
  options.read_timeout = 300ms;
  HttpClient client(origin(server), options);
  auto started = Clock::now();
  auto result = client.post_json("/slow", "{}");
  auto elapsed = Clock::now() - started;
  release.open();
  EXPECT_EQ(result.transport_error, TransportError::kTimeout) << result.error;
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.error.find("read timeout of 300 ms"), std::string::npos) << result.error;
  EXPECT_GE(elapsed, 300ms);
  EXPECT_LT(elapsed, 2s);
  server.stop();
}

TEST(HttpClient, SendsTheAccessTokenOnEveryRequest) {
  HttpServer server(testing::loopback_options());
  std::vector<std::string> tokens;
  server.post("/beat", [&](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    tokens.push_back(req.has_header("XXL-JOB-ACCESS-TOKEN")
                         ? req.get_header_value("XXL-JOB-ACCESS-TOKEN")
                         : "<none>");
    res.set_content("{}", "application/json");
  });
  server.start();
  HttpClientOptions with_token;
  with_token.access_token = "s3cret";
  HttpClient client(origin(server), with_token);
  ASSERT_TRUE(client.post_json("/beat", "").ok());
  ASSERT_TRUE(client.post_json("/beat", "").ok());
  HttpClient anonymous(origin(server));
  ASSERT_TRUE(anonymous.post_json("/beat", "").ok());
  server.stop();
  EXPECT_EQ(tokens, (std::vector<std::string>{"s3cret", "s3cret", "<none>"}));
}

TEST(HttpClient, BaseUrlPathPrefixIsPrepended) {
  HttpServer server(testing::loopback_options());
  int hits = 0;
  server.post("/xxl-job-admin/api/callback", [&](const cronwheel::common::http::Request& req,
                                                 cronwheel::common::http::Response& res) {
    ++hits;
    EXPECT_EQ(req.get_header_value("Content-Type"), "application/json");
    res.set_content(R"({"code":200})", "application/json");
  });
  server.start();
  for (const auto& base : {origin(server) + "/xxl-job-admin/", origin(server) + "/xxl-job-admin"}) {
    HttpClient client(base);
    EXPECT_TRUE(client.post_json("api/callback", "[]").ok()) << base;
    EXPECT_TRUE(client.post_json("/api/callback", "[]").ok()) << base;
    EXPECT_EQ(client.url("api/callback"), origin(server) + "/xxl-job-admin/api/callback");
  }
  EXPECT_EQ(hits, 4);
  server.stop();
}

TEST(HttpClient, ErrorStatusIsAnAnswerNotATransportError) {
  HttpServer server(testing::loopback_options());
  server.post("/fail", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    res.status = 503;
    res.set_content(R"({"busy":true})", "application/json");
  });
  server.start();
  HttpClient client(origin(server));
  auto result = client.post_json("/fail", "{}");
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.transport_error, TransportError::kNone);
  EXPECT_EQ(result.status, 503);
  EXPECT_EQ(result.body, R"({"busy":true})");
  EXPECT_TRUE(result.error.empty());
  server.stop();
}

TEST(HttpClient, TheAnswersHeadersAreKeptAndFoundInAnyCase) {
  HttpServer server(testing::loopback_options());
  server.post("/clock", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    res.set_header("X-Cronwheel-Clock", "1000,1002");
    res.set_content("{}", "application/json");
  });
  server.start();
  HttpClient client(origin(server));
  auto result = client.post_json("/clock", "{}");
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.header("X-Cronwheel-Clock"), "1000,1002");
  EXPECT_EQ(result.header("x-cronwheel-clock"), "1000,1002");
  EXPECT_EQ(result.header("X-Cronwheel-Clocks"), std::nullopt);
  EXPECT_EQ(result.header("X-Cronwheel-Cloc"), std::nullopt);
  // No answer, no headers.
  HttpClient closed("http://127.0.0.1:" + std::to_string(closed_port()) + "/");
  EXPECT_EQ(closed.post_json("/clock", "{}").header("Content-Type"), std::nullopt);
  server.stop();
}

TEST(HttpClient, AnAnswerLargerThanTheLimitIsRefusedAndTheConnectionNotReused) {
  HttpServer server(testing::loopback_options());
  std::atomic<int> answered{0};
  server.post("/big", [&](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    ++answered;
    res.set_content(std::string(std::stoul(req.body), 'x'), "text/plain");
  });
  server.get("/big", [&](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    ++answered;
    res.set_content(std::string(70'000, 'y'), "text/plain");
  });
  server.start();
  HttpClientOptions options;
  options.max_answer_bytes = 64 * 1024;
  HttpClient client(origin(server), options);

  auto exact = client.post_json("/big", std::to_string(64 * 1024));
  EXPECT_TRUE(exact.ok()) << exact.error;
  EXPECT_EQ(exact.body.size(), 64u * 1024);

  auto over = client.post_json("/big", std::to_string(64 * 1024 + 1));
  EXPECT_EQ(over.transport_error, TransportError::kTooLarge);
  EXPECT_EQ(over.status, 0);
  EXPECT_TRUE(over.body.empty());
  EXPECT_NE(over.error.find("/big: the answer is larger than 65536 bytes"), std::string::npos) << over.error;
  EXPECT_EQ(client.get("/big").transport_error, TransportError::kTooLarge);

  // The client goes on working on a fresh connection.
  auto after = client.post_json("/big", "10");
  EXPECT_TRUE(after.ok()) << after.error;
  EXPECT_EQ(after.body, std::string(10, 'x'));
  EXPECT_EQ(answered.load(), 4);
  server.stop();
}

TEST(HttpClient, GetRequest) {
  HttpServer server(testing::loopback_options());
  server.get("/healthz", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    res.set_content("ok", "text/plain");
  });
  server.start();
  HttpClient client(origin(server) + "/");
  auto result = client.get("healthz");
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.body, "ok");
  server.stop();
}

TEST(HttpClient, InvalidBaseUrlsAreRejected) {
  for (const char* url : {"127.0.0.1:8080", "ftp://host/", "http://", "http:///path",
                          "http://host:99999/", "http://host:port/", "http://user@host/",
                          "http://host/path?query"}) {
    EXPECT_THROW(HttpClient{url}, std::invalid_argument) << url;
  }
  EXPECT_NO_THROW(HttpClient{"HTTP://host"});
  EXPECT_NO_THROW(HttpClient{"http://[::1]:8080/prefix/"});
  EXPECT_NO_THROW(HttpClient{"https://admin.example.com/xxl-job-admin"});
}

TEST(HttpClient, UrlJoinsBaseAndPath) {
  HttpClient executor("http://10.0.0.7:9999/");
  EXPECT_EQ(executor.url("/run"), "http://10.0.0.7:9999/run");
  EXPECT_EQ(executor.base_url(), "http://10.0.0.7:9999/");
  HttpClient admin("http://10.0.0.5:8080//xxl-job-admin//");
  EXPECT_EQ(admin.url("api/registry"), "http://10.0.0.5:8080//xxl-job-admin/api/registry");
}

TEST(HttpClient, TransportErrorNames) {
  EXPECT_EQ(common::http::to_string(TransportError::kNone), "none");
  EXPECT_EQ(common::http::to_string(TransportError::kConnect), "connect");
  EXPECT_EQ(common::http::to_string(TransportError::kTimeout), "timeout");
  EXPECT_EQ(common::http::to_string(TransportError::kConnection), "connection");
  EXPECT_EQ(common::http::to_string(TransportError::kOther), "other");
}

}  // namespace
}  // namespace cronwheel
