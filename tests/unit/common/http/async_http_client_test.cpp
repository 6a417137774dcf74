// AsyncHttpClient against a real HttpServer (and a silent socket) on 127.0.0.1.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/http/async_http_client.h"
#include "common/http/http_server.h"
#include "tests/support/eventually.h"
#include "tests/unit/common/http/test_server.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using common::http::AsyncHttpClient;
using common::http::AsyncHttpClientOptions;
using common::http::AsyncHttpRequest;
using common::http::HttpResult;
using common::http::HttpServer;
using common::http::Request;
using common::http::Response;
using common::http::TransportError;

std::string server_origin(const HttpServer& server) { return "http://127.0.0.1:" + std::to_string(server.port()); }

AsyncHttpRequest json_post(std::string base_url, std::string path, std::string body = "{}") {
  AsyncHttpRequest request;
  request.base_url = std::move(base_url);
  request.path = std::move(path);
  request.body = std::move(body);
  return request;
}

TEST(AsyncHttpClient, PostsToThePathUnderTheBaseUrlsPrefixWithItsHeaders) {
  HttpServer server(testing::loopback_options());
  server.post("/prefix/api/echo", [](const Request& req, Response& res) {
    common::http::write_json(res, "{\"body\":" + req.body + ",\"token\":\"" + req.get_header_value("X-Token") +
                                      "\",\"type\":\"" + req.get_header_value("Content-Type") + "\"}");
  });
  server.get("/prefix/ping", [](const Request&, Response& res) { common::http::write_json(res, "\"pong\""); });
  server.start();
  AsyncHttpClient client;
  auto request = json_post(server_origin(server) + "/prefix/", "api/echo", "[1]");
  request.headers.emplace_back("X-Token", "t0k");
  HttpResult result = client.send_and_wait(request);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.body, R"({"body":[1],"token":"t0k","type":"application/json"})");
  EXPECT_FALSE(result.reused_connection);

  AsyncHttpRequest get;
  get.method = "GET";
  get.base_url = server_origin(server) + "/prefix";
  get.path = "/ping";
  result = client.send_and_wait(get);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.body, "\"pong\"");
  EXPECT_TRUE(result.reused_connection) << "the kept-alive connection is used again";
  EXPECT_EQ(client.stats().idle, 1u);
  server.stop();
}

TEST(AsyncHttpClient, OneThreadKeepsManyRequestsInFlight) {
  auto options = testing::loopback_options();
  options.worker_threads = 40;
  HttpServer server(options);
  testing::Gate gate;
  std::atomic<int> inside{0};
  server.post("/wait", [&](const Request& req, Response& res) {
    ++inside;
    gate.wait();
    common::http::write_json(res, req.body);
  });
  server.start();
  AsyncHttpClientOptions client_options;
  client_options.max_connections_per_origin = 40;
  AsyncHttpClient client(client_options);

  constexpr int kRequests = 40;
  std::mutex mutex;
  std::vector<HttpResult> results;
  std::promise<void> all_done;
  for (int i = 0; i < kRequests; ++i) {
    client.send(json_post(server_origin(server), "/wait", std::to_string(i)), [&](HttpResult result) {
      std::lock_guard lock(mutex);
      results.push_back(std::move(result));
      if (results.size() == kRequests) all_done.set_value();
    });
  }
  // Every request reached the server while the sending thread went on: none waits for another.
  EXPECT_TRUE(testing::eventually([&] { return inside.load() == kRequests; }, 10s, 10ms)) << inside.load();
  EXPECT_EQ(client.stats().busy, static_cast<std::size_t>(kRequests));
  gate.open();
  ASSERT_EQ(all_done.get_future().wait_for(10s), std::future_status::ready);
  int sum = 0;
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.error;
    sum += std::stoi(result.body);
  }
  EXPECT_EQ(sum, kRequests * (kRequests - 1) / 2);
  EXPECT_EQ(client.stats().idle, static_cast<std::size_t>(kRequests));
  server.stop();
}

TEST(AsyncHttpClient, BeyondTheConnectionLimitRequestsWaitForAConnectionThenFailUnsent) {
  HttpServer server(testing::loopback_options());
  testing::Gate gate;
  server.post("/wait", [&](const Request&, Response& res) {
    gate.wait();
    common::http::write_json(res, "{}");
  });
  server.start();
  AsyncHttpClientOptions options;
  options.max_connections_per_origin = 1;
  options.connection_wait = 200ms;
  AsyncHttpClient client(options);
  std::promise<HttpResult> first;
  client.send(json_post(server_origin(server), "/wait"), [&](HttpResult result) { first.set_value(std::move(result)); });
  ASSERT_TRUE(testing::eventually([&] { return client.stats().busy == 1; }, 5s, 5ms));
  HttpResult second = client.send_and_wait(json_post(server_origin(server), "/wait"));
  EXPECT_EQ(second.transport_error, TransportError::kNoConnection) << second.error;
  EXPECT_FALSE(second.request_written);
  EXPECT_NE(second.error.find("no connection to it came free within 200 ms (1 in use)"), std::string::npos)
      << second.error;
  gate.open();
  EXPECT_TRUE(first.get_future().get().ok());
  server.stop();
}

TEST(AsyncHttpClient, ARequestWaitingForAConnectionTakesTheOneGivenBack) {
  HttpServer server(testing::loopback_options());
  testing::Gate gate;
  server.post("/wait", [&](const Request& req, Response& res) {
    if (req.body == "\"first\"") gate.wait();
    common::http::write_json(res, req.body);
  });
  server.start();
  AsyncHttpClientOptions options;
  options.max_connections_per_origin = 1;
  AsyncHttpClient client(options);
  std::promise<HttpResult> first;
  std::promise<HttpResult> second;
  client.send(json_post(server_origin(server), "/wait", "\"first\""), [&](HttpResult result) { first.set_value(std::move(result)); });
  ASSERT_TRUE(testing::eventually([&] { return client.stats().busy == 1; }, 5s, 5ms));
  client.send(json_post(server_origin(server), "/wait", "\"second\""), [&](HttpResult result) { second.set_value(std::move(result)); });
  ASSERT_TRUE(testing::eventually([&] { return client.stats().waiting == 1; }, 5s, 5ms));
  gate.open();
  EXPECT_EQ(first.get_future().get().body, "\"first\"");
  HttpResult after = second.get_future().get();
  EXPECT_EQ(after.body, "\"second\"");
  EXPECT_TRUE(after.reused_connection);
  server.stop();
}

TEST(AsyncHttpClient, ClosedPortIsAConnectErrorThatWasNeverSent) {
  AsyncHttpClient client;
  const std::string base = "http://127.0.0.1:" + std::to_string(testing::unused_loopback_port());
  HttpResult result = client.send_and_wait(json_post(base, "/run"));
  EXPECT_EQ(result.transport_error, TransportError::kConnect);
  EXPECT_FALSE(result.request_written);
  EXPECT_EQ(result.error.rfind("POST " + base + "/run: cannot connect", 0), 0u) << result.error;
  EXPECT_EQ(client.stats().busy, 0u);
  EXPECT_EQ(client.stats().origins, 0u);
}

TEST(AsyncHttpClient, NoAnswerWithinTheReadTimeoutIsATimeoutAfterTheRequestWasWritten) {
  HttpServer server(testing::loopback_options());
  testing::Gate gate;
  server.post("/slow", [&](const Request&, Response& res) {
    gate.wait();
    common::http::write_json(res, "{}");
  });
  server.start();
  AsyncHttpClientOptions options;
  options.read_timeout = 200ms;
  AsyncHttpClient client(options);
  HttpResult result = client.send_and_wait(json_post(server_origin(server), "/slow"));
  gate.open();
  EXPECT_EQ(result.transport_error, TransportError::kTimeout) << result.error;
  EXPECT_TRUE(result.request_written);
  EXPECT_FALSE(result.answer_head_received);
  EXPECT_NE(result.error.find("no answer within the read timeout of 200 ms"), std::string::npos) << result.error;
  EXPECT_EQ(client.stats().idle, 0u) << "a connection that timed out is not kept";
  server.stop();
}

TEST(AsyncHttpClient, AnAnswerLargerThanTheLimitIsTooLargeAndItsConnectionClosed) {
  HttpServer server(testing::loopback_options());
  server.post("/big", [](const Request&, Response& res) { common::http::write_json(res, "\"" + std::string(5000, 'x') + "\""); });
  server.start();
  AsyncHttpClientOptions options;
  options.max_answer_bytes = 1000;
  AsyncHttpClient client(options);
  HttpResult result = client.send_and_wait(json_post(server_origin(server), "/big"));
  EXPECT_EQ(result.transport_error, TransportError::kTooLarge) << result.error;
  EXPECT_TRUE(result.answer_head_received);
  EXPECT_TRUE(result.body.empty());
  EXPECT_EQ(client.stats().idle, 0u);
  server.stop();
}

TEST(AsyncHttpClient, AConnectionTheServerClosedIsAStaleKeptAliveOneOnItsNextRequest) {
  auto server_options = testing::loopback_options();
  server_options.keep_alive_timeout = 300ms;
  HttpServer server(server_options);
  server.post("/echo", [](const Request& req, Response& res) { common::http::write_json(res, req.body); });
  server.start();
  AsyncHttpClient client;
  ASSERT_TRUE(client.send_and_wait(json_post(server_origin(server), "/echo")).ok());
  // The server closes the idle connection; the client learns it only by using it.
  ASSERT_TRUE(testing::eventually([&] { return server.connection_stats().open == 0; }, 5s, 10ms));
  HttpResult result = client.send_and_wait(json_post(server_origin(server), "/echo"));
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(result.reused_connection);
  EXPECT_EQ(result.transport_error, TransportError::kConnection) << result.error;
  EXPECT_FALSE(result.answer_head_received);
  // The next one opens a new connection.
  result = client.send_and_wait(json_post(server_origin(server), "/echo", "[2]"));
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_FALSE(result.reused_connection);
  server.stop();
}

TEST(AsyncHttpClient, HttpsAndHeadersWithLineBreaksAreRefusedUnsent) {
  AsyncHttpClient client;
  HttpResult https = client.send_and_wait(json_post("https://127.0.0.1:1", "/run"));
  EXPECT_EQ(https.transport_error, TransportError::kOther);
  EXPECT_FALSE(https.request_written);
  EXPECT_NE(https.error.find("only http://"), std::string::npos) << https.error;

  auto forged = json_post("http://127.0.0.1:1", "/run");
  forged.headers.emplace_back("X-Token", "a\r\nX-Admin: yes");
  HttpResult refused = client.send_and_wait(forged);
  EXPECT_EQ(refused.transport_error, TransportError::kOther);
  EXPECT_NE(refused.error.find("CR, LF or NUL"), std::string::npos) << refused.error;

  HttpResult malformed = client.send_and_wait(json_post("http://exa mple/", "/run"));
  EXPECT_EQ(malformed.transport_error, TransportError::kOther);
  EXPECT_NE(malformed.error.find("invalid base URL"), std::string::npos) << malformed.error;
}

TEST(AsyncHttpClient, DestroyingTheClientCompletesWhatIsInFlight) {
  HttpServer server(testing::loopback_options());
  testing::Gate gate;
  server.post("/wait", [&](const Request&, Response& res) {
    gate.wait();
    common::http::write_json(res, "{}");
  });
  server.start();
  std::promise<HttpResult> in_flight;
  {
    AsyncHttpClient client;
    client.send(json_post(server_origin(server), "/wait"), [&](HttpResult result) { in_flight.set_value(std::move(result)); });
    ASSERT_TRUE(testing::eventually([&] { return server.connection_stats().serving == 1; }, 5s, 5ms));
  }
  auto result = in_flight.get_future();
  ASSERT_EQ(result.wait_for(0s), std::future_status::ready);
  HttpResult stopped = result.get();
  EXPECT_EQ(stopped.transport_error, TransportError::kOther);
  EXPECT_NE(stopped.error.find("the client stopped"), std::string::npos) << stopped.error;
  gate.open();
  server.stop();
}

}  // namespace
}  // namespace cronwheel
