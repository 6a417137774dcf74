#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "tests/unit/common/http/test_server.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using common::http::HttpClient;
using common::http::HttpClientOptions;
using common::http::HttpError;
using common::http::HttpServer;
using common::http::HttpServerOptions;
using common::http::TransportError;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using testing::RawConnection;

std::string base_url(const HttpServer& server) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + "/";
}

void add_echo(HttpServer& server, std::atomic<int>* calls = nullptr) {
  server.post("/echo", [calls](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    if (calls != nullptr) ++*calls;
    common::http::write_json(res, req.body);
  });
}

TEST(HttpServer, ReportsThePortTheOsChose) {
  HttpServer server(testing::loopback_options());
  EXPECT_EQ(server.port(), 0);
  server.start();
  EXPECT_GT(server.port(), 0);
  server.stop();
}

TEST(HttpServer, BindTellsThePortBeforeStartAndStartServesOnIt) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.bind();
  const int port = server.port();
  ASSERT_GT(port, 0);
  server.bind();  // already bound: nothing changes
  EXPECT_EQ(server.port(), port);
  server.start();
  EXPECT_EQ(server.port(), port);
  HttpClient client(base_url(server));
  auto result = client.post_json("/echo", R"({"jobId":2})");
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.body, R"({"jobId":2})");
  server.stop();
}

TEST(HttpServer, StopWithoutStartClosesTheBoundSocket) {
  auto open_fds = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{});
  };
  HttpServer server(testing::loopback_options());
  const auto before = open_fds();
  server.bind();
  EXPECT_EQ(open_fds(), before + 1);
  server.stop();
  EXPECT_EQ(open_fds(), before);
  EXPECT_THROW(server.start(), std::logic_error);  // a stopped server stays stopped
}

// The sockets (their inodes, as /proc/net/tcp names them) process `pid` holds open.
std::set<std::string> sockets_held_by(pid_t pid) {
  std::set<std::string> inodes;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ignored;
    const std::string target = std::filesystem::read_symlink(entry.path(), ignored).string();
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  return inodes;
}

// The inodes of the IPv4 sockets on 127.0.0.1:`port` in `state` (/proc/net/tcp's st: 0A
// listening, 01 established).
std::set<std::string> loopback_sockets(int port, const std::string& state) {
  char local[32];
  std::snprintf(local, sizeof local, "0100007F:%04X", port);
  std::set<std::string> inodes;
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local_address, remote, st, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local_address >> remote >> st >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    if (local_address == local && st == state) inodes.insert(inode);
  }
  return inodes;
}

// A program the server's process starts (a script, a tool the embedding service runs) inherits
// none of the server's sockets: a listening socket a child held would keep the port taking
// connections after stop() into a backlog nobody reads, and each caller would wait out its read
// timeout; an accepted one would outlive the server's close.
TEST(HttpServer, AChildProcessInheritsNeitherItsListeningNorItsAcceptedSockets) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.start();
  const int port = server.port();
  RawConnection kept(port);
  ASSERT_TRUE(kept.connected());
  std::string answer;
  kept.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n[1,2,3]");
  ASSERT_TRUE(kept.read_until("[1,2,3]", answer)) << answer;  // accepted and served, kept alive
  const auto listening = loopback_sockets(port, "0A");
  const auto accepted = loopback_sockets(port, "01");
  ASSERT_EQ(listening.size(), 1u);
  ASSERT_EQ(accepted.size(), 1u);

  // Inherits every descriptor of this process not marked close-on-exec (posix_spawn returns once
  // the child has exec'd, when the others are closed).
  pid_t child = 0;
  char arg0[] = "sleep";
  char arg1[] = "30";
  char* argv[] = {arg0, arg1, nullptr};
  ASSERT_EQ(::posix_spawn(&child, "/bin/sleep", nullptr, nullptr, argv, environ), 0);
  const auto held = sockets_held_by(child);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(held.count(*listening.begin()), 0u) << "the child holds the listening socket";
  EXPECT_EQ(held.count(*accepted.begin()), 0u) << "the child holds the accepted connection";
  server.stop();
}

TEST(HttpServer, PostRoundTrip) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.start();
  HttpClient client(base_url(server));
  auto result = client.post_json("/echo", R"({"jobId":1})");
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.status, 200);
  EXPECT_EQ(result.body, R"({"jobId":1})");
  server.stop();
}

TEST(HttpServer, GetPutDeleteRoutes) {
  HttpServer server(testing::loopback_options());
  server.route("GET", "/items/{id}",
               [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res, const common::http::PathParams& params) {
                 common::http::write_json(res, json{{"id", *params.find("id")}}.dump());
               });
  server.put("/items", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    common::http::write_json(res, "{}", 201);
  });
  server.del("/items", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) { res.status = 204; });
  server.start();
  httplib::Client raw("127.0.0.1", server.port());
  auto got = raw.Get("/items/42");
  ASSERT_TRUE(got);
  EXPECT_EQ(json::parse(got->body), json({{"id", "42"}}));
  EXPECT_EQ(got->get_header_value("Content-Type"), "application/json");
  auto put = raw.Put("/items", "{}", "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 201);
  auto del = raw.Delete("/items");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 204);
  server.stop();
}

TEST(HttpServer, KeepAliveReusesOneConnection) {
  HttpServer server(testing::loopback_options());
  std::mutex mutex;
  std::set<int> client_ports;
  server.post("/beat", [&](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    {
      std::lock_guard lock(mutex);
      client_ports.insert(req.remote_port);
    }
    common::http::write_json(res, R"({"code":200,"msg":null})");
  });
  server.start();
  HttpClient client(base_url(server));
  for (int i = 0; i < 5; ++i) {
    auto result = client.post_json("/beat", "");
    ASSERT_TRUE(result.ok()) << result.error;
  }
  EXPECT_EQ(client_ports.size(), 1u) << "every request should arrive on the same connection";
  server.stop();
}

TEST(HttpServer, ZeroKeepAliveTimeoutServesOneRequestPerConnection) {
  auto options = testing::loopback_options();
  options.keep_alive_timeout = std::chrono::milliseconds::zero();
  HttpServer server(options);
  std::mutex mutex;
  std::set<int> client_ports;
  server.post("/beat", [&](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    {
      std::lock_guard lock(mutex);
      client_ports.insert(req.remote_port);
    }
    common::http::write_json(res, "{}");
  });
  server.start();
  HttpClient client(base_url(server));
  for (int i = 0; i < 3; ++i) {
    auto result = client.post_json("/beat", "");
    ASSERT_TRUE(result.ok()) << result.error;
  }
  EXPECT_EQ(client_ports.size(), 3u);
  server.stop();
}

TEST(HttpServer, BurstOfKeepAlivePostsIsNotSlowedByDelayedAcks) {
  // Without TCP_NODELAY each request/answer pair waits ~40 ms for a delayed ACK: 50 of them
  // would take about 2 s. With it they take a few milliseconds; 1 s is a generous bound.
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.start();
  HttpClient client(base_url(server));
  std::string body = common::protocol::to_json_string(common::protocol::IdleBeatParam{7});
  auto started = Clock::now();
  for (int i = 0; i < 50; ++i) {
    auto result = client.post_json("/echo", body);
    ASSERT_TRUE(result.ok()) << result.error;
  }
  EXPECT_LT(Clock::now() - started, 1s);
  server.stop();
}

TEST(HttpServer, OversizedBodyIsAnswered413JsonWithoutRunningTheHandler) {
  auto options = testing::loopback_options();
  options.max_body_bytes = 1024;
  HttpServer server(options);
  std::atomic<int> calls{0};
  add_echo(server, &calls);
  server.start();
  HttpClient client(base_url(server));

  auto result = client.post_json("/echo", std::string(64 * 1024, 'x'));
  EXPECT_EQ(result.transport_error, TransportError::kNone) << result.error;
  EXPECT_EQ(result.status, 413);
  EXPECT_EQ(json::parse(result.body),
            json::parse(R"({"error":{"code":"payload_too_large",
                                     "message":"request body exceeds the limit of 1024 bytes"}})"));
  EXPECT_EQ(calls, 0);

  // A body at the limit is fine, and the client recovers from the closed connection.
  auto at_limit = client.post_json("/echo", std::string(1024, 'y'));
  EXPECT_TRUE(at_limit.ok()) << at_limit.error;
  EXPECT_EQ(calls, 1);
  server.stop();
}

TEST(HttpServer, ChunkedBodyIsAnswered411WithoutRunningTheHandler) {
  // A body without a declared length could not be refused before it is read: every client of
  // these endpoints sends Content-Length.
  HttpServer server(testing::loopback_options());
  std::atomic<int> calls{0};
  add_echo(server, &calls);
  server.start();

  httplib::Client raw("127.0.0.1", server.port());
  std::string chunk(16 * 1024, 'x');
  std::size_t sent = 0;
  auto result = raw.Post(
      "/echo",
      [&](std::size_t, httplib::DataSink& sink) {
        if (sent < 4 * chunk.size()) {
          sink.write(chunk.data(), chunk.size());
          sent += chunk.size();
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 411);
  EXPECT_EQ(json::parse(result->body)["error"]["code"], "length_required");
  EXPECT_EQ(calls, 0);
  server.stop();
}

TEST(HttpServer, OversizedBodyIsRefusedWithoutWaitingForIt) {
  // The limit is checked on the declared Content-Length before any body byte is read: the
  // answer comes although the body never does.
  auto options = testing::loopback_options();
  options.max_body_bytes = 1024;
  options.read_timeout = 60s;
  HttpServer server(options);
  add_echo(server);
  server.start();
  RawConnection connection(server.port());
  ASSERT_TRUE(connection.connected());
  auto started = Clock::now();
  connection.send(
      "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000000\r\n\r\n");
  std::string answer = connection.read_all();
  EXPECT_LT(Clock::now() - started, 1s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  server.stop();
}

TEST(HttpServer, OversizedBodyWithExpectContinueIsRefusedBeforeItIsSent) {
  auto options = testing::loopback_options();
  options.max_body_bytes = 1024;
  HttpServer server(options);
  add_echo(server);
  server.start();
  RawConnection connection(server.port());
  ASSERT_TRUE(connection.connected());
  connection.send(
      "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000000\r\nExpect: 100-continue\r\n\r\n");
  std::string answer = connection.read_all();
  EXPECT_EQ(answer.rfind("HTTP/1.1 413 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("payload_too_large"), std::string::npos) << answer;
  server.stop();
}

TEST(HttpServer, HandlerExceptionIs500JsonWithoutItsText) {
  HttpServer server(testing::loopback_options());
  server.post("/run", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    res.set_header("X-Partial", "1");
    throw std::runtime_error("password=hunter2 at /srv/db.conf");
  });
  server.start();
  HttpClient client(base_url(server));
  auto result = client.post_json("/run", "{}");
  EXPECT_EQ(result.status, 500);
  EXPECT_EQ(json::parse(result.body),
            json::parse(R"({"error":{"code":"internal","message":"internal server error"}})"));
  EXPECT_EQ(result.body.find("hunter2"), std::string::npos);
  server.stop();
}

TEST(HttpServer, NonStandardExceptionIs500Json) {
  HttpServer server(testing::loopback_options());
  server.post("/run", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response&) { throw 42; });
  server.start();
  HttpClient client(base_url(server));
  auto result = client.post_json("/run", "{}");
  EXPECT_EQ(result.status, 500);
  EXPECT_EQ(json::parse(result.body)["error"]["code"], "internal");
  server.stop();
}

TEST(HttpServer, HttpErrorAnswersItsStatusCodeAndMessage) {
  HttpServer server(testing::loopback_options());
  server.post("/jobs", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response&) {
    throw HttpError(409, "conflict", "job 7 is already running", "jobId");
  });
  server.start();
  HttpClient client(base_url(server));
  auto result = client.post_json("/jobs", "{}");
  EXPECT_EQ(result.status, 409);
  EXPECT_EQ(json::parse(result.body), json::parse(R"(
      {"error":{"code":"conflict","message":"job 7 is already running","field":"jobId"}})"));
  server.stop();
}

TEST(HttpServer, ProtocolErrorIs400NamingTheField) {
  HttpServer server(testing::loopback_options());
  server.post("/run", [](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    auto param = common::protocol::parse<common::protocol::TriggerParam>(req.body);
    common::http::write_json(res, std::to_string(param.job_id));
  });
  server.start();
  HttpClient client(base_url(server));
  auto result = client.post_json("/run", R"({"jobId":"7"})");
  EXPECT_EQ(result.status, 400);
  EXPECT_EQ(json::parse(result.body), json::parse(R"(
      {"error":{"code":"bad_request","message":"jobId: expected an integer, got string",
                "field":"jobId"}})"));
  server.stop();
}

TEST(HttpServer, UnknownRouteIs404Json) {
  HttpServer server(testing::loopback_options());
  server.start();
  HttpClient client(base_url(server));
  auto result = client.post_json("/nope", "{}");
  EXPECT_EQ(result.status, 404);
  EXPECT_EQ(json::parse(result.body),
            json::parse(R"({"error":{"code":"not_found","message":"not found: POST /nope"}})"));
  server.stop();
}

TEST(HttpServer, FallbackAnswersGetAndHeadOfPathsNoRouteMatches) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.get("/items/{id}", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    common::http::write_json(res, R"({"route":"items"})");
  });
  std::atomic<int> fallback_calls{0};
  server.fallback_get([&](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    ++fallback_calls;
    res.set_content("fallback " + req.method + " " + req.path, "text/plain");
  });
  server.start();
  httplib::Client raw("127.0.0.1", server.port());

  auto page = raw.Get("/jobs/42");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "fallback GET /jobs/42");
  auto head = raw.Head("/anything");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  EXPECT_EQ(fallback_calls.load(), 2);

  // Routes win over the fallback, and keep their own 405s; other methods of unknown paths 404.
  auto item = raw.Get("/items/7");
  ASSERT_TRUE(item);
  EXPECT_EQ(item->body, R"({"route":"items"})");
  auto wrong_method = raw.Get("/echo");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
  auto post = raw.Post("/jobs/42", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);
  EXPECT_EQ(fallback_calls.load(), 2);
  server.stop();
}

TEST(HttpServer, FallbackExceptionsAreAnsweredLikeARoute) {
  HttpServer server(testing::loopback_options());
  server.fallback_get([](const cronwheel::common::http::Request& req, cronwheel::common::http::Response&) {
    throw HttpError(404, "not_found", "no page " + req.path);
  });
  server.start();
  HttpClient client(base_url(server));
  auto result = client.get("/missing");
  EXPECT_EQ(result.status, 404);
  EXPECT_EQ(json::parse(result.body), json::parse(R"({"error":{"code":"not_found","message":"no page /missing"}})"));
  server.stop();
}

TEST(HttpServer, MalformedRequestIs400Json) {
  HttpServer server(testing::loopback_options());
  server.start();
  RawConnection connection(server.port());
  ASSERT_TRUE(connection.connected());
  connection.send("NONSENSE\r\n\r\n");
  std::string answer = connection.read_all();
  EXPECT_EQ(answer.rfind("HTTP/1.1 400 ", 0), 0u) << answer;
  EXPECT_NE(answer.find(R"("code":"bad_request")"), std::string::npos) << answer;
  server.stop();
}

// curl -X POST without -d sends neither Content-Length nor Transfer-Encoding: the request has
// no body and must be answered at once, not after the read timeout.
TEST(HttpServer, PostWithoutContentLengthHasAnEmptyBodyAndIsAnsweredAtOnce) {
  auto options = testing::loopback_options();
  options.read_timeout = 5s;
  HttpServer server(options);
  add_echo(server);
  server.start();
  RawConnection connection(server.port());
  ASSERT_TRUE(connection.connected());
  auto begin = Clock::now();
  connection.send("POST /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  // The same connection then carries a request with a body, and closes after it.
  connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  std::string answer = connection.read_all();
  EXPECT_LT(Clock::now() - begin, 2s);
  auto second = answer.find("HTTP/1.1 200", 1);
  ASSERT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer;
  ASSERT_NE(second, std::string::npos) << answer;
  EXPECT_NE(answer.find("Content-Length: 0\r\n"), std::string::npos) << answer;
  EXPECT_EQ(answer.substr(answer.size() - 2), "{}") << answer;
  server.stop();
}

TEST(HttpServer, XxlJobErrorShapeForTheExecutor) {
  auto options = testing::loopback_options();
  options.error_formatter = common::http::xxl_job_error;
  HttpServer server(options);
  server.post("/boom", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response&) {
    throw std::logic_error("internal detail");
  });
  server.start();
  HttpClient client(base_url(server));
  auto missing = client.post_json("/nope", "{}");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body),
            json::parse(R"({"code":500,"msg":"not found: POST /nope","content":null})"));
  auto failed = client.post_json("/boom", "{}");
  EXPECT_EQ(failed.status, 500);
  EXPECT_EQ(json::parse(failed.body),
            json::parse(R"({"code":500,"msg":"internal server error","content":null})"));
  server.stop();
}

TEST(HttpServer, FormatterMayChooseTheHttpStatus) {
  // XXL-JOB's own executor answers errors with HTTP 200 and the failure in the body.
  auto options = testing::loopback_options();
  options.error_formatter = [](const common::http::ErrorInfo& info) {
    auto out = common::http::xxl_job_error(info);
    out.status = 200;
    return out;
  };
  HttpServer server(options);
  server.start();
  HttpClient client(base_url(server));
  auto result = client.post_json("/nope", "{}");
  EXPECT_EQ(result.status, 200);
  EXPECT_EQ(json::parse(result.body)["code"], 500);
  server.stop();
}

TEST(HttpServer, AccessTokenMatchesOnlyTheConfiguredToken) {
  cronwheel::common::http::Request req;
  EXPECT_TRUE(common::http::access_token_matches(req, ""));
  EXPECT_FALSE(common::http::access_token_matches(req, "s3cret"));
  req.headers.emplace("xxl-job-access-token", "s3cret");  // header names match in any case
  EXPECT_TRUE(common::http::access_token_matches(req, "s3cret"));
  EXPECT_FALSE(common::http::access_token_matches(req, "s3cre"));
  EXPECT_FALSE(common::http::access_token_matches(req, "s3creT"));
}

TEST(HttpServer, StopWithAnIdleKeepAliveConnectionOpenReturnsPromptly) {
  auto options = testing::loopback_options();
  options.keep_alive_timeout = 60s;
  HttpServer server(options);
  add_echo(server);
  server.start();
  HttpClient client(base_url(server));
  ASSERT_TRUE(client.post_json("/echo", "{}").ok());  // the connection stays open

  auto started = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - started, 1s);

  auto after = client.post_json("/echo", "{}");
  EXPECT_NE(after.transport_error, TransportError::kNone);
}

TEST(HttpServer, StopWithARequestHalfSentReturnsPromptly) {
  auto options = testing::loopback_options();
  options.read_timeout = 60s;
  HttpServer server(options);
  add_echo(server);
  server.start();
  RawConnection connection(server.port());
  ASSERT_TRUE(connection.connected());
  connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":");
  // A round trip on another connection: by now a worker has almost certainly picked the
  // half-sent request up and is waiting for the rest of its body. Either way stop() must not
  // wait for it.
  HttpClient probe(base_url(server));
  ASSERT_TRUE(probe.post_json("/echo", "{}").ok());

  auto started = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - started, 1s);
}

TEST(HttpServer, StopWaitsForARunningHandlerAndDeliversItsAnswer) {
  HttpServer server(testing::loopback_options());
  testing::Gate entered;
  testing::Gate release;
  server.post("/slow", [&](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    entered.open();
    release.wait();
    common::http::write_json(res, R"({"code":200})");
  });
  server.start();
  auto answer = std::async(std::launch::async, [&] {
    HttpClient client(base_url(server));
    return client.post_json("/slow", "{}");
  });
  ASSERT_TRUE(entered.wait());
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    server.stop();
    stopped = true;
  });
  release.open();
  auto result = answer.get();
  stopper.join();
  EXPECT_TRUE(stopped);
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.body, R"({"code":200})");
}

TEST(HttpServer, IdleKeepAliveConnectionHoldsNoWorker) {
  auto options = testing::loopback_options();
  options.worker_threads = 1;
  options.keep_alive_timeout = 60s;
  HttpServer server(options);
  add_echo(server);
  server.start();
  HttpClient first(base_url(server));
  ASSERT_TRUE(first.post_json("/echo", "{}").ok());  // kept alive, idle

  HttpClient second(base_url(server));
  auto started = Clock::now();
  auto result = second.post_json("/echo", "{}");
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_LT(Clock::now() - started, 1s);

  auto again = first.post_json("/echo", "{}");
  EXPECT_TRUE(again.ok()) << again.error;
  EXPECT_EQ(server.connection_stats().evicted, 0u);
  server.stop();
}

TEST(HttpServer, TakenPortIsAClearError) {
  HttpServer first(testing::loopback_options());
  first.start();
  auto options = testing::loopback_options();
  options.port = first.port();
  HttpServer second(options);
  try {
    second.start();
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("cannot listen on 127.0.0.1:" + std::to_string(first.port())),
              std::string::npos)
        << what;
    EXPECT_EQ(e.code(), std::errc::address_in_use) << what;
  }
  first.stop();
}

TEST(HttpServer, StopIsIdempotentAndSafeBeforeStart) {
  HttpServer never_started(testing::loopback_options());
  never_started.stop();
  never_started.stop();

  HttpServer server(testing::loopback_options());
  server.start();
  server.stop();
  server.stop();
}

TEST(HttpServer, StartTwiceIsALogicError) {
  HttpServer server(testing::loopback_options());
  server.start();
  EXPECT_THROW(server.start(), std::logic_error);
  server.stop();
  EXPECT_THROW(server.start(), std::logic_error);
}

TEST(HttpServer, BurstOfSimultaneousConnectsIsNotDelayedByAShortListenBacklog) {
  // cpp-httplib listens with a backlog of 5; a SYN dropped on overflow is retransmitted by the
  // client after 1 s. The server raises the backlog, so the whole burst is answered well within
  // that second.
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.start();
  constexpr int kClients = 32;
  std::latch ready(kClients);
  std::vector<std::future<Clock::duration>> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(std::async(std::launch::async, [&] {
      HttpClient client(base_url(server));
      ready.arrive_and_wait();
      auto started = Clock::now();
      auto result = client.post_json("/echo", "{}");
      EXPECT_TRUE(result.ok()) << result.error;
      return Clock::now() - started;
    }));
  }
  for (auto& client : clients) EXPECT_LT(client.get(), 900ms);
  server.stop();
}

TEST(HttpServer, ManyConcurrentClientsAllGetAnswers) {
  auto options = testing::loopback_options();
  options.worker_threads = 2;
  HttpServer server(options);
  add_echo(server);
  server.start();
  std::vector<std::future<int>> clients;
  for (int c = 0; c < 8; ++c) {
    clients.push_back(std::async(std::launch::async, [&] {
      HttpClient client(base_url(server));
      int ok = 0;
      for (int i = 0; i < 20; ++i) ok += client.post_json("/echo", "{}").ok() ? 1 : 0;
      return ok;
    }));
  }
  for (auto& client : clients) EXPECT_EQ(client.get(), 20);
  server.stop();
}

// A lane with one thread whose handler blocks on `release` (opening `entered` first) and counts
// its calls.
struct BlockedLane {
  testing::Gate entered;
  testing::Gate release;
  std::atomic<int> calls{0};

  void add_to(HttpServer& server, common::http::LaneOptions lane) {
    lane.busy_message = "too many slow calls; try again";
    server.add_lane("slow", lane);
    common::http::RouteOptions on_lane;
    on_lane.lane = "slow";
    server.post("/slow", [this](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      ++calls;
      entered.open();
      release.wait();
      common::http::write_json(res, R"({"done":true})");
    }, on_lane);
  }
};

std::future<common::http::HttpResult> post_async(const HttpServer& server, const std::string& path) {
  return std::async(std::launch::async, [&server, path] {
    HttpClient client(base_url(server));
    return client.post_json(path, "{}");
  });
}

// Waits (bounded) until the lane holds `count` requests.
bool lane_holds(const HttpServer& server, std::size_t count) {
  for (int i = 0; i < 1000; ++i) {
    if (server.lane_stats().at(0).inside == count) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

TEST(HttpServerLanes, AWaitingLaneHandlerHoldsNoWorker) {
  auto options = testing::loopback_options();
  options.worker_threads = 1;
  HttpServer server(options);
  add_echo(server);
  BlockedLane slow;
  slow.add_to(server, {.threads = 1});
  server.start();
  auto blocked = post_async(server, "/slow");
  ASSERT_TRUE(slow.entered.wait());

  // The only worker is free: the lane's handler waits on a thread of its own.
  HttpClientOptions quick;
  quick.read_timeout = 5s;
  HttpClient client(base_url(server), quick);
  auto echoed = client.post_json("/echo", R"({"a":1})");
  EXPECT_TRUE(echoed.ok()) << echoed.error;
  EXPECT_EQ(echoed.body, R"({"a":1})");

  slow.release.open();
  auto done = blocked.get();
  EXPECT_TRUE(done.ok()) << done.error;
  EXPECT_EQ(done.body, R"({"done":true})");
  server.stop();
}

TEST(HttpServerLanes, AFullLaneAnswers503WithRetryAfterWithoutRunningTheHandler) {
  HttpServer server(testing::loopback_options());
  BlockedLane slow;
  slow.add_to(server, {.threads = 1, .max_waiting = 1, .max_per_address = 10, .retry_after = 3s});
  server.start();
  auto running = post_async(server, "/slow");
  ASSERT_TRUE(slow.entered.wait());
  auto waiting = post_async(server, "/slow");
  ASSERT_TRUE(lane_holds(server, 2));

  httplib::Client raw("127.0.0.1", server.port());
  auto refused = raw.Post("/slow", "{}", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "3");
  auto error = json::parse(refused->body).at("error");
  EXPECT_EQ(error.at("code"), "busy");
  EXPECT_EQ(error.at("message"), "too many slow calls; try again");
  EXPECT_EQ(server.lane_stats().at(0).refused_full, 1u);

  slow.release.open();
  EXPECT_TRUE(running.get().ok());
  EXPECT_TRUE(waiting.get().ok());
  EXPECT_EQ(slow.calls, 2);  // never the refused one
  EXPECT_TRUE(lane_holds(server, 0));
  server.stop();
}

TEST(HttpServerLanes, OneAddressTakesAtMostItsShareOfALane) {
  HttpServer server(testing::loopback_options());
  BlockedLane slow;
  slow.add_to(server, {.threads = 1, .max_waiting = 8, .max_per_address = 2});
  server.start();
  auto running = post_async(server, "/slow");
  ASSERT_TRUE(slow.entered.wait());
  auto waiting = post_async(server, "/slow");
  ASSERT_TRUE(lane_holds(server, 2));

  httplib::Client raw("127.0.0.1", server.port());
  auto refused = raw.Post("/slow", "{}", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);

  slow.release.open();
  EXPECT_TRUE(running.get().ok());
  EXPECT_TRUE(waiting.get().ok());
  // Places are given back: the address may use its share again.
  EXPECT_TRUE(raw.Post("/slow", "{}", "application/json"));
  EXPECT_EQ(slow.calls, 3);
  server.stop();
}

TEST(HttpServerLanes, ARequestThatWaitedLongerThanMaxWaitIsRefusedUnrun) {
  HttpServer server(testing::loopback_options());
  BlockedLane slow;
  slow.release.open();
  // Every request waits some time for a lane thread, so with no wait allowed each is late.
  slow.add_to(server, {.threads = 1, .max_wait = 0ms});
  server.start();
  httplib::Client raw("127.0.0.1", server.port());
  auto refused = raw.Post("/slow", "{}", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_EQ(slow.calls, 0);
  EXPECT_EQ(server.lane_stats().at(0).refused_late, 1u);
  server.stop();
}

TEST(HttpServer, EveryAnswerForbidsContentSniffing) {
  HttpServer server(testing::loopback_options());
  add_echo(server);
  server.post("/throws", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    res.set_header("X-Partial", "1");
    throw HttpError(409, "conflict", "no");
  });
  server.start();
  httplib::Client raw("127.0.0.1", server.port());
  for (const char* path : {"/echo", "/throws", "/missing"}) {
    auto answer = raw.Post(path, "{}", "application/json");
    ASSERT_TRUE(answer) << path;
    EXPECT_EQ(answer->get_header_value("X-Content-Type-Options"), "nosniff") << path;
  }
  server.stop();
}

TEST(HttpServer, AnswersGoWholeAndAsTheHandlerMadeThemWhateverTheClientAsks) {
  HttpServer server(testing::loopback_options());
  const std::string text(10'000, 'x');
  server.get("/text", [&text](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) { res.set_content(text, "text/plain"); });
  server.start();
  RawConnection connection(server.port());
  ASSERT_TRUE(connection.connected());
  std::string ranges = "bytes=0-0";
  for (int i = 1; i < 500; ++i) ranges += ",0-" + std::to_string(i);
  connection.send("GET /text HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br, gzip, deflate\r\nRange: " + ranges +
                  "\r\nConnection: close\r\n\r\n");
  const auto answer = connection.read_all();
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer.substr(0, 200);
  EXPECT_EQ(answer.find("Content-Encoding"), std::string::npos) << answer.substr(0, 400);
  EXPECT_NE(answer.find("Content-Length: 10000\r\n"), std::string::npos) << answer.substr(0, 400);
  EXPECT_LT(answer.size(), 10'600u) << "the body once, not a range per request";
  server.stop();
}

TEST(HttpServer, AnErrorThatSaysWhenToComeBackCarriesRetryAfter) {
  HttpServer server(testing::loopback_options());
  server.post("/later", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response&) {
    throw HttpError(common::http::ErrorInfo{503, "busy", "come back later", "", 7});
  });
  server.start();
  httplib::Client raw("127.0.0.1", server.port());
  auto answer = raw.Post("/later", "{}", "application/json");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(answer->get_header_value("Retry-After"), "7");
  server.stop();
}

TEST(HttpServerLanes, ARouteOnAnUnknownLaneIsRefusedWhenAdded) {
  HttpServer server(testing::loopback_options());
  common::http::RouteOptions on_lane;
  on_lane.lane = "nowhere";
  EXPECT_THROW(server.post("/x", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response&) {}, on_lane),
               std::invalid_argument);
  server.add_lane("here", {});
  EXPECT_THROW(server.add_lane("here", {}), std::logic_error);
}

}  // namespace
}  // namespace cronwheel
