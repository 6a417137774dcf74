// What slow, idle, greedy and pipelining clients can and cannot do to an HttpServer: real
// sockets on 127.0.0.1, deadlines shortened so each test takes well under a second or two.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "tests/support/eventually.h"
#include "tests/unit/common/http/test_server.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using common::http::HttpClient;
using common::http::HttpServer;
using common::http::RouteOptions;
using nlohmann::json;
using testing::RawConnection;
using Clock = std::chrono::steady_clock;

std::string base_url(const HttpServer& server) { return "http://127.0.0.1:" + std::to_string(server.port()) + "/"; }

void add_echo(HttpServer& server, RouteOptions route = {}) {
  server.post("/echo", [](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) { common::http::write_json(res, req.body); },
              route);
}

std::string post_echo(const std::string& body, const std::string& extra_headers = "") {
  return "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
}

std::vector<std::unique_ptr<RawConnection>> open_connections(int port, int count) {
  std::vector<std::unique_ptr<RawConnection>> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(std::make_unique<RawConnection>(port));
    EXPECT_TRUE(out.back()->connected());
  }
  return out;
}

// Polls `done` for up to 5 s.
bool eventually(const std::function<bool()>& done) { return cronwheel::testing::eventually(done, 5s, 10ms); }

TEST(ConnectionLimits, SlowAndIdleClientsHoldNoWorker) {
  auto options = testing::loopback_options();
  options.worker_threads = 2;
  options.max_connections_per_address = 1000;
  HttpServer server(options);
  add_echo(server);
  server.start();

  auto idle = open_connections(server.port(), 100);
  auto heads = open_connections(server.port(), 100);
  for (auto& c : heads) c->send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Le");  // a head, trickling
  auto bodies = open_connections(server.port(), 50);
  for (auto& c : bodies) c->send(post_echo(std::string(100, 'x')).substr(0, 120));  // a body, trickling
  ASSERT_TRUE(eventually([&] { return server.connection_stats().open >= 250; }));
  EXPECT_EQ(server.connection_stats().serving, 0u);

  HttpClient client(base_url(server));
  for (int i = 0; i < 5; ++i) {
    auto started = Clock::now();
    auto result = client.post_json("/echo", R"({"n":1})");
    EXPECT_TRUE(result.ok()) << result.error;
    EXPECT_LT(Clock::now() - started, 1s);
  }
  server.stop();
}

TEST(ConnectionLimits, TricklingHeadIsAnswered408AtItsDeadline) {
  auto options = testing::loopback_options();
  options.head_timeout = 300ms;
  HttpServer server(options);
  add_echo(server);
  server.start();
  RawConnection slow(server.port());
  ASSERT_TRUE(slow.connected());
  auto started = Clock::now();
  // One byte at a time, each well within any per-read timeout: only a deadline for the whole
  // head ends it.
  std::string answer;
  const std::string head = "POST /echo HTTP/1.1\r\nHost: localhost\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  for (char c : head) {
    if (!slow.try_send(std::string(1, c))) break;
    if (slow.read_until("\r\n\r\n", answer, 20ms)) break;
  }
  slow.read_until("request_timeout", answer, 2s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 408 ", 0), 0u) << answer;
  EXPECT_LT(Clock::now() - started, 1500ms);
  EXPECT_TRUE(slow.closed_by_peer());
  EXPECT_EQ(server.connection_stats().timed_out, 1u);
  server.stop();
}

TEST(ConnectionLimits, SilentNewConnectionIsClosedAtTheHeadDeadline) {
  auto options = testing::loopback_options();
  options.head_timeout = 200ms;
  HttpServer server(options);
  add_echo(server);
  server.start();
  RawConnection silent(server.port());
  auto started = Clock::now();
  EXPECT_TRUE(silent.closed_by_peer(3s));
  EXPECT_LT(Clock::now() - started, 1s);
  server.stop();
}

TEST(ConnectionLimits, TricklingBodyIsAnswered408AtTheRequestDeadline) {
  auto options = testing::loopback_options();
  options.request_timeout = 400ms;
  HttpServer server(options);
  add_echo(server);
  server.start();
  RawConnection slow(server.port());
  auto started = Clock::now();
  slow.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
  std::string answer;
  for (int i = 0; i < 100 && !slow.read_until("\r\n\r\n", answer, 50ms); ++i) {
    if (!slow.try_send(" ")) break;
  }
  slow.read_until("request_timeout", answer, 2s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 408 ", 0), 0u) << answer;
  EXPECT_LT(Clock::now() - started, 1500ms);
  server.stop();
}

TEST(ConnectionLimits, ConnectionsPerAddressEvictTheOldestWaiting) {
  auto options = testing::loopback_options();
  options.max_connections_per_address = 10;
  options.keep_alive_timeout = 60s;
  options.head_timeout = 60s;
  HttpServer server(options);
  add_echo(server);
  server.start();

  auto idle = open_connections(server.port(), 30);
  ASSERT_TRUE(eventually([&] { return server.connection_stats().evicted >= 20; }));
  EXPECT_LE(server.connection_stats().open, 10u);
  // The oldest went first; the newest are still open.
  EXPECT_TRUE(idle.front()->closed_by_peer(1s));
  idle.back()->send(post_echo("{}"));
  std::string answer;
  EXPECT_TRUE(idle.back()->read_until("{}", answer)) << answer;

  // A newcomer always gets in.
  HttpClient client(base_url(server));
  EXPECT_TRUE(client.post_json("/echo", "{}").ok());
  server.stop();
}

// A worker that answers a kept-alive request waits for the next one on the connection itself
// (HttpServer's I/O thread is not woken in between): such a connection is still one waiting for a
// request, so it makes room for a newcomer.
TEST(ConnectionLimits, ConnectionsIdleAfterTheirAnswerAreEvictedToMakeRoom) {
  auto options = testing::loopback_options();
  options.max_connections_per_address = 2;
  options.keep_alive_timeout = 60s;
  HttpServer server(options);
  add_echo(server);
  server.start();

  RawConnection first(server.port());
  RawConnection second(server.port());
  for (RawConnection* connection : {&first, &second}) {
    connection->send(post_echo("{}"));
    std::string answer;
    ASSERT_TRUE(connection->read_until("{}", answer)) << answer;
  }
  ASSERT_TRUE(eventually([&] { return server.connection_stats().serving == 0; }));

  RawConnection third(server.port());
  third.send(post_echo(R"({"third":1})"));
  std::string answer;
  EXPECT_TRUE(third.read_until(R"({"third":1})", answer)) << answer;
  EXPECT_EQ(server.connection_stats().evicted, 1u);
  EXPECT_EQ(server.connection_stats().refused, 0u);
  EXPECT_TRUE(first.closed_by_peer(2s));
  server.stop();
}

TEST(ConnectionLimits, AConnectionIdleAfterItsAnswerIsClosedAtTheKeepAliveDeadline) {
  auto options = testing::loopback_options();
  options.keep_alive_timeout = 200ms;
  HttpServer server(options);
  add_echo(server);
  server.start();

  RawConnection connection(server.port());
  for (int i = 0; i < 3; ++i) {  // served on, each answer followed by a wait for the next request
    connection.send(post_echo("{}"));
    std::string answer;
    ASSERT_TRUE(connection.read_until("{}", answer)) << answer;
  }
  EXPECT_TRUE(connection.closed_by_peer(5s));
  EXPECT_TRUE(eventually([&] { return server.connection_stats().open == 0; }));
  server.stop();
}

TEST(ConnectionLimits, WithNoConnectionWaitingANewOneIsAnswered503) {
  auto options = testing::loopback_options();
  options.max_connections_per_address = 2;
  options.worker_threads = 1;
  HttpServer server(options);
  testing::Gate gate;
  std::atomic<int> entered{0};
  server.post("/block", [&](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    ++entered;
    gate.wait();
    common::http::write_json(res, "{}");
  });
  server.start();

  // Two requests being served (one running, one queued for the only worker): nothing to evict.
  RawConnection first(server.port());
  first.send("POST /block HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  RawConnection second(server.port());
  second.send("POST /block HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(eventually([&] { return server.connection_stats().serving == 2; }));

  RawConnection third(server.port());
  std::string answer = third.read_all(2s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503 ", 0), 0u) << answer;
  EXPECT_EQ(server.connection_stats().refused, 1u);

  gate.open();
  std::string one;
  std::string two;
  EXPECT_TRUE(first.read_until("{}", one));
  EXPECT_TRUE(second.read_until("{}", two));
  server.stop();
}

TEST(ConnectionLimits, EachRouteHasItsOwnBodyLimit) {
  auto options = testing::loopback_options();
  options.max_body_bytes = 1000;
  HttpServer server(options);
  RouteOptions small;
  small.max_body_bytes = 100;
  server.post("/small", [](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) { common::http::write_json(res, req.body); },
              small);
  add_echo(server);
  server.start();
  HttpClient client(base_url(server));
  auto refused = client.post_json("/small", "\"" + std::string(100, 'x') + "\"");
  EXPECT_EQ(refused.status, 413);
  EXPECT_EQ(json::parse(refused.body)["error"]["message"], "request body exceeds the limit of 100 bytes");
  EXPECT_TRUE(client.post_json("/small", "\"" + std::string(98, 'x') + "\"").ok());
  EXPECT_TRUE(client.post_json("/echo", "\"" + std::string(500, 'x') + "\"").ok());
  EXPECT_EQ(client.post_json("/echo", "\"" + std::string(1000, 'x') + "\"").status, 413);
  server.stop();
}

TEST(ConnectionLimits, WrongMethodIs405NamingTheAllowedOnes) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.start();
  RawConnection raw(server.port());
  raw.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string answer = raw.read_all();
  EXPECT_EQ(answer.rfind("HTTP/1.1 405 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("Allow: POST\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("method_not_allowed"), std::string::npos) << answer;
  server.stop();
}

TEST(ConnectionLimits, PipelinedRequestsAreAnsweredInOrder) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.start();
  RawConnection raw(server.port());
  raw.send(post_echo("\"one\"") + post_echo("\"two\"") + post_echo("\"three\"", "Connection: close\r\n"));
  std::string answer = raw.read_all();
  auto one = answer.find("\"one\"");
  auto two = answer.find("\"two\"");
  auto three = answer.find("\"three\"");
  ASSERT_NE(three, std::string::npos) << answer;
  EXPECT_LT(one, two);
  EXPECT_LT(two, three);
  server.stop();
}

TEST(ConnectionLimits, ExpectContinueGetsOneInterimAnswerThenTheAnswer) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.start();
  RawConnection raw(server.port());
  raw.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  std::string answer;
  ASSERT_TRUE(raw.read_until("100 Continue\r\n\r\n", answer)) << answer;
  raw.send("\"ok\"");
  ASSERT_TRUE(raw.read_until("\"ok\"", answer)) << answer;
  EXPECT_EQ(answer.find("100 Continue"), answer.rfind("100 Continue")) << answer;
  EXPECT_NE(answer.find("HTTP/1.1 200 OK"), std::string::npos) << answer;
  server.stop();
}

TEST(ConnectionLimits, OversizedHeadIs431AndLongTargetIs414) {
  auto options = testing::loopback_options();
  options.max_head_bytes = 1024;
  options.max_target_bytes = 256;
  HttpServer server(options);
  add_echo(server);
  server.start();
  {
    RawConnection raw(server.port());
    raw.send("POST /echo HTTP/1.1\r\nX-Big: " + std::string(2000, 'x'));  // never ends
    std::string answer = raw.read_all();
    EXPECT_EQ(answer.rfind("HTTP/1.1 431 ", 0), 0u) << answer;
  }
  {
    RawConnection raw(server.port());
    raw.send("GET /" + std::string(300, 'a') + " HTTP/1.1\r\n\r\n");
    std::string answer = raw.read_all();
    EXPECT_EQ(answer.rfind("HTTP/1.1 414 ", 0), 0u) << answer;
  }
  server.stop();
}

TEST(ConnectionLimits, StopClosesSlowClientsPromptly) {
  auto options = testing::loopback_options();
  options.head_timeout = 60s;
  options.request_timeout = 60s;
  HttpServer server(options);
  add_echo(server);
  server.start();
  auto idle = open_connections(server.port(), 20);
  RawConnection slow(server.port());
  slow.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
  ASSERT_TRUE(eventually([&] { return server.connection_stats().open == 21; }));
  auto started = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - started, 1s);
  EXPECT_TRUE(slow.closed_by_peer(1s));
}

}  // namespace
}  // namespace cronwheel
