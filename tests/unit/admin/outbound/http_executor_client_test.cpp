// HttpExecutorClient against executors on 127.0.0.1: a scripted one (a plain HttpServer that
// records what arrives and on which connection), a raw socket one that closes connections at
// chosen points of a request, and the real executor library. Real sockets, ports chosen by the
// OS; waits are bounded by gates, latches and polls with a deadline, never sleeps.
#include "admin/outbound/http_executor_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/http/http_server.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "cronwheel/executor.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_admin.h"
#include "tests/support/fake_clock.h"

namespace cronwheel::testing {
namespace {

namespace fs = std::filesystem;
namespace protocol = common::protocol;
using namespace std::chrono_literals;

// A one-shot gate handlers block on until the test opens it.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool wait(std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// An executor that answers what the test scripts and records each request with the client's
// port (one port per connection).
class ScriptedExecutor {
 public:
  struct Request {
    std::string path;
    std::string body;
    std::string token;
    int remote_port = 0;
  };

  explicit ScriptedExecutor(int port = 0) {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    o.worker_threads = 8;
    o.error_formatter = common::http::xxl_job_error;
    o.name = "scripted-exec";
    server_ = std::make_unique<common::http::HttpServer>(o);
    for (auto path : {"/beat", "/idleBeat", "/run", "/kill", "/log"}) {
      server_->post(path, [this](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) { handle(req, res); });
    }
    server_->start();
  }
  ~ScriptedExecutor() { stop(); }

  void stop() {
    release_.open();
    server_->stop();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/"; }
  int port() const { return server_->port(); }

  // The next answers: status and body (default: 200 and a successful ReturnT).
  void answer(int status, std::string body) {
    std::lock_guard lock(mutex_);
    status_ = status;
    body_ = std::move(body);
  }
  // Handlers wait for release() (or the server's stop) before answering; `arrived` counts down
  // once per request that started waiting.
  void hold(std::latch* arrived) {
    std::lock_guard lock(mutex_);
    hold_ = true;
    arrived_ = arrived;
  }
  void release() { release_.open(); }

  std::vector<Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::set<int> ports() const {
    std::set<int> out;
    for (const auto& r : requests()) out.insert(r.remote_port);
    return out;
  }

 private:
  void handle(const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    bool hold = false;
    std::latch* arrived = nullptr;
    int status = 0;
    std::string body;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back({req.path, req.body, req.get_header_value(std::string(protocol::kAccessTokenHeader)),
                           req.remote_port});
      hold = hold_;
      arrived = arrived_;
      status = status_;
      body = body_;
    }
    if (hold) {
      if (arrived != nullptr) arrived->count_down();
      release_.wait();
    }
    res.status = status;
    res.set_content(body, "application/json");
  }

  std::unique_ptr<common::http::HttpServer> server_;
  mutable std::mutex mutex_;
  std::vector<Request> requests_;
  int status_ = 200;
  std::string body_ = R"({"code":200,"msg":null,"content":null})";
  bool hold_ = false;
  std::latch* arrived_ = nullptr;
  Gate release_;
};

// An executor written on raw sockets, for what an HttpServer will not do on purpose: close a
// kept-alive connection at a chosen point of a request. A test runs its script on a thread of
// its own; every wait is a poll bounded by kWait, so a broken client fails the test, never hangs
// it. A request counts as received once read whole (what a real executor would act on).
class RawExecutor {
 public:
  static constexpr std::chrono::milliseconds kWait{10'000};

  RawExecutor() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(listener_, 16), 0);
    socklen_t length = sizeof(address);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~RawExecutor() {
    join();
    for (int fd : connections_) ::close(fd);
    close_listener();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

  // Runs `script` on the executor's thread.
  void run(std::function<void(RawExecutor&)> script) {
    thread_ = std::thread([this, script = std::move(script)] { script(*this); });
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

  // The next connection; -1 when none came within kWait.
  int accept() {
    if (!wait(listener_, POLLIN)) return -1;
    int fd = ::accept(listener_, nullptr, nullptr);
    if (fd >= 0) connections_.push_back(fd);
    return fd;
  }
  // True when a connection waits to be accepted (checked now, without waiting).
  bool connection_pending() {
    pollfd p{listener_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  // Refuses every further connection.
  void close_listener() {
    if (listener_ >= 0) ::close(listener_);
    listener_ = -1;
  }

  // Reads one request whole from `fd` and records it; its path, or nullopt when the connection
  // closed or nothing came within kWait.
  std::optional<std::string> read_request(int fd) {
    std::string data;
    while (!whole_request(data)) {
      if (!wait(fd, POLLIN)) return std::nullopt;
      char buffer[65536];
      ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return std::nullopt;
      data.append(buffer, static_cast<std::size_t>(n));
    }
    std::string path = data.substr(data.find(' ') + 1);
    path.resize(path.find(' '));
    std::lock_guard lock(mutex_);
    received_.push_back(path);
    return path;
  }
  // Waits until a request has fully arrived on `fd` without reading any of it.
  bool wait_for_whole_request_unread(int fd) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!wait(fd, POLLIN)) return false;
      std::string data(64 * 1024, '\0');
      ssize_t n = ::recv(fd, data.data(), data.size(), MSG_PEEK | MSG_DONTWAIT);
      if (n <= 0) return false;
      data.resize(static_cast<std::size_t>(n));
      if (whole_request(data)) return true;
      // Part of it: wait for the rest without spinning on the bytes already there.
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 1);
    }
    return false;
  }
  // Waits until the first bytes of a request arrived on `fd`, without reading them.
  bool wait_for_request_start(int fd) { return wait(fd, POLLIN); }
  // Closes `fd` with whatever the client sent still unread: the kernel resets the connection.
  void close_unread(int fd) {
    ::close(fd);
    connections_.erase(std::find(connections_.begin(), connections_.end(), fd));
  }
  // Waits until the client closed `fd` (true) or kWait passed.
  bool wait_for_client_close(int fd) {
    for (;;) {
      if (!wait(fd, POLLIN)) return false;
      char buffer[4096];
      if (::recv(fd, buffer, sizeof(buffer), 0) <= 0) return true;
    }
  }
  void answer_success(int fd) {
    const std::string body = R"({"code":200,"msg":null,"content":null})";
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body;
    EXPECT_EQ(::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL), static_cast<ssize_t>(answer.size()));
  }

  // The paths of the requests read whole, in order.
  std::vector<std::string> received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  static bool whole_request(const std::string& data) {
    const auto head_end = data.find("\r\n\r\n");
    if (head_end == std::string::npos) return false;
    std::size_t length = 0;
    const auto at = data.find("Content-Length: ");
    if (at != std::string::npos && at < head_end) length = std::stoul(data.substr(at + 16));
    return data.size() >= head_end + 4 + length;
  }
  static bool wait(int fd, short events) {
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, static_cast<int>(kWait.count())) > 0;
  }

  int listener_ = -1;
  int port_ = 0;
  std::vector<int> connections_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<std::string> received_;
};

int closed_port() {
  ScriptedExecutor gone;
  int port = gone.port();
  gone.stop();
  return port;
}

protocol::TriggerParam trigger(std::int64_t log_id) {
  protocol::TriggerParam p;
  p.job_id = 12;
  p.executor_handler = "demoHandler";
  p.executor_params = "a=1";
  p.executor_block_strategy = "SERIAL_EXECUTION";
  p.executor_timeout = 5;
  p.log_id = log_id;
  p.log_date_time = 1'700'000'000'000;
  p.glue_type = "BEAN";
  p.broadcast_index = 1;
  p.broadcast_total = 2;
  return p;
}

TEST(HttpExecutorClient, RunPostsTheTriggerParamWithTheAccessToken) {
  ScriptedExecutor executor;
  admin::HttpExecutorClient client;
  auto answer = client.run(executor.url(), "secret", trigger(99));
  EXPECT_TRUE(answer.is_success()) << answer.msg;
  auto requests = executor.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/run");
  EXPECT_EQ(requests[0].token, "secret");
  EXPECT_EQ(protocol::parse<protocol::TriggerParam>(requests[0].body), trigger(99));
}

TEST(HttpExecutorClient, BeatIdleBeatKillAndLogSendXxlJobBodies) {
  ScriptedExecutor executor;
  admin::HttpExecutorClient client;
  EXPECT_TRUE(client.beat(executor.url(), "").is_success());
  EXPECT_TRUE(client.idle_beat(executor.url(), "", 7).is_success());
  EXPECT_TRUE(client.kill(executor.url(), "", 8).is_success());
  executor.answer(200, R"({"code":200,"msg":null,"content":{"fromLineNum":1,"toLineNum":2,"logContent":"a\nb\n","isEnd":true}})");
  protocol::LogParam param;
  param.log_id = 5;
  param.log_date_time = 1'700'000'000'000;
  param.from_line_num = 1;
  auto log = client.log(executor.url(), "", param);
  ASSERT_TRUE(log.is_success()) << log.msg;
  ASSERT_TRUE(log.content);
  EXPECT_EQ(log.content->to_line_num, 2);
  EXPECT_EQ(log.content->log_content, "a\nb\n");
  EXPECT_TRUE(log.content->is_end);

  auto requests = executor.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].path, "/beat");
  EXPECT_EQ(requests[0].body, "\"\"");
  EXPECT_EQ(requests[0].token, "");
  EXPECT_EQ(requests[1].path, "/idleBeat");
  EXPECT_EQ(protocol::parse<protocol::IdleBeatParam>(requests[1].body).job_id, 7);
  EXPECT_EQ(requests[2].path, "/kill");
  EXPECT_EQ(protocol::parse<protocol::KillParam>(requests[2].body).job_id, 8);
  EXPECT_EQ(requests[3].path, "/log");
  EXPECT_EQ(protocol::parse<protocol::LogParam>(requests[3].body), param);
}

TEST(HttpExecutorClient, SequentialCallsReuseOneKeptAliveConnection) {
  ScriptedExecutor executor;
  admin::HttpExecutorClient client;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client.run(executor.url(), "t", trigger(i)).is_success());
  EXPECT_EQ(executor.requests().size(), 5u);
  EXPECT_EQ(executor.ports().size(), 1u) << "one connection for all five calls";
  EXPECT_EQ(client.idle_connections(), 1u);
}

TEST(HttpExecutorClient, ParallelCallsShareAtMostTheConnectionLimitAndWaitForOneBeyondIt) {
  ScriptedExecutor executor;
  admin::HttpExecutorClient::Options o;
  o.max_connections_per_address = 2;
  admin::HttpExecutorClient client(common::SystemClock::instance(), o);
  constexpr int kCalls = 4;
  std::latch arrived(2);
  executor.hold(&arrived);
  std::vector<std::future<admin::ExecutorClient::Result>> calls;
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(std::async(std::launch::async, [&, i] { return client.run(executor.url(), "t", trigger(i)); }));
  }
  arrived.wait();  // two at the executor at once
  ASSERT_TRUE(eventually([&] { return client.waiting_calls() == 2; }));  // the other two wait for them
  EXPECT_EQ(executor.requests().size(), 2u);
  EXPECT_EQ(client.busy_connections(), 2u);
  executor.release();
  for (auto& c : calls) EXPECT_TRUE(c.get().is_success());
  EXPECT_EQ(executor.requests().size(), static_cast<std::size_t>(kCalls));
  EXPECT_EQ(executor.ports().size(), 2u) << "four calls over the two connections";
  EXPECT_EQ(client.idle_connections(), 2u);
  EXPECT_EQ(client.busy_connections(), 0u);
}

TEST(HttpExecutorClient, CallThatGetsNoConnectionInTimeFailsWithoutReachingTheExecutor) {
  ScriptedExecutor executor;
  admin::HttpExecutorClient::Options o;
  o.max_connections_per_address = 1;
  o.connection_wait = 50ms;
  admin::HttpExecutorClient client(common::SystemClock::instance(), o);
  std::latch arrived(1);
  executor.hold(&arrived);
  auto first = std::async(std::launch::async, [&] { return client.run(executor.url(), "t", trigger(1)); });
  arrived.wait();
  auto second = client.run(executor.url(), "t", trigger(2));
  EXPECT_FALSE(second.is_success());
  EXPECT_EQ(second.code, protocol::kFailCode);  // never sent: not "may have arrived"
  EXPECT_EQ(second.msg, "POST " + executor.url() + "run: no connection to it came free within 50 ms (1 in use)");
  executor.release();
  EXPECT_TRUE(first.get().is_success());
  EXPECT_EQ(executor.requests().size(), 1u);
  EXPECT_TRUE(client.run(executor.url(), "t", trigger(3)).is_success());  // its connection is free again
}

TEST(HttpExecutorClient, ConnectionThatFailedFreesItsPlace) {
  const int port = closed_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  admin::HttpExecutorClient::Options o;
  o.max_connections_per_address = 1;
  o.connection_wait = 10s;
  admin::HttpExecutorClient client(common::SystemClock::instance(), o);
  EXPECT_FALSE(client.beat(url, "").is_success());
  EXPECT_EQ(client.busy_connections(), 0u);
  ScriptedExecutor executor(port);  // back at the same address: the one place is free
  EXPECT_TRUE(client.beat(url, "").is_success());
  EXPECT_EQ(client.idle_connections(), 1u);
}

TEST(HttpExecutorClient, ConnectionIdleTooLongIsClosedNotReused) {
  ScriptedExecutor executor;
  FakeClock clock;
  admin::HttpExecutorClient::Options o;
  o.max_idle_time = 5s;
  admin::HttpExecutorClient client(clock, o);
  ASSERT_TRUE(client.beat(executor.url(), "").is_success());
  clock.advance(4s);
  ASSERT_TRUE(client.beat(executor.url(), "").is_success());
  EXPECT_EQ(executor.ports().size(), 1u) << "idle for 4 s: reused";
  clock.advance(5s);
  ASSERT_TRUE(client.beat(executor.url(), "").is_success());
  EXPECT_EQ(executor.ports().size(), 2u) << "idle for 5 s: a new connection";
  EXPECT_EQ(client.idle_connections(), 1u);
}

TEST(HttpExecutorClient, PoolsOfAddressesNoLongerCalledAreDropped) {
  ScriptedExecutor one, two;
  FakeClock clock;
  admin::HttpExecutorClient::Options o;
  o.max_idle_time = 5s;
  admin::HttpExecutorClient client(clock, o);
  ASSERT_TRUE(client.beat(one.url(), "").is_success());
  ASSERT_TRUE(client.beat(two.url(), "").is_success());
  EXPECT_EQ(client.pools(), 2u);
  clock.advance(6s);
  ASSERT_TRUE(client.beat(one.url(), "").is_success());
  EXPECT_EQ(client.pools(), 1u);
  EXPECT_EQ(client.idle_connections(), 1u);
}

TEST(HttpExecutorClient, EachCallCarriesItsOwnAccessTokenOnTheSharedConnection) {
  ScriptedExecutor executor;
  admin::HttpExecutorClient client;
  ASSERT_TRUE(client.beat(executor.url(), "a").is_success());
  ASSERT_TRUE(client.beat(executor.url(), "b").is_success());
  ASSERT_TRUE(client.beat(executor.url(), "a").is_success());
  auto requests = executor.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].token, "a");
  EXPECT_EQ(requests[1].token, "b");
  EXPECT_EQ(requests[2].token, "a");
  // The token is a header of each request, not of the connection: one kept-alive connection
  // carries the calls of every job group to the executor.
  EXPECT_EQ(requests[0].remote_port, requests[1].remote_port);
  EXPECT_EQ(requests[1].remote_port, requests[2].remote_port);
}

TEST(HttpExecutorClient, ConnectionClosedByTheExecutorIsReplacedNotFailed) {
  auto executor = std::make_unique<ScriptedExecutor>();
  const int port = executor->port();
  admin::HttpExecutorClient client;
  ASSERT_TRUE(client.beat(executor->url(), "").is_success());
  ASSERT_EQ(client.idle_connections(), 1u);
  executor.reset();  // closes the kept-alive connection from its side
  executor = std::make_unique<ScriptedExecutor>(port);
  auto answer = client.run(executor->url(), "", trigger(1));
  EXPECT_TRUE(answer.is_success()) << answer.code << " " << answer.msg;
  EXPECT_EQ(executor->requests().size(), 1u);
}

TEST(HttpExecutorClient, UnreachableExecutorIsAFailureThatWasNeverSent) {
  admin::HttpExecutorClient client;
  const std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/";
  auto answer = client.run(url, "", trigger(1));
  EXPECT_EQ(answer.code, admin::kNotReachedCode) << "provably not delivered";
  EXPECT_NE(answer.msg.find(url), std::string::npos) << answer.msg;
  EXPECT_EQ(client.idle_connections(), 0u);
}

TEST(HttpExecutorClient, RunWithoutAnAnswerInTimeMayHaveBeenDelivered) {
  ScriptedExecutor executor;
  std::latch arrived(1);
  executor.hold(&arrived);
  admin::HttpExecutorClient::Options o;
  o.connect_timeout = 100ms;
  o.read_timeout = 300ms;
  admin::HttpExecutorClient client(common::SystemClock::instance(), o);
  auto answer = client.run(executor.url(), "", trigger(1));
  EXPECT_EQ(answer.code, protocol::kTimeoutCode) << answer.msg;
  EXPECT_NE(answer.msg.find("read timeout"), std::string::npos) << answer.msg;
  EXPECT_EQ(client.idle_connections(), 0u) << "a connection that timed out is not reused";
  executor.release();
}

// The stale kept-alive connection: the executor closes a connection the admin is sending on.
// Here it closes it once the /run has arrived whole, without reading it (as an executor closing
// an idle connection does when the request lands in that instant): the client got no answer byte,
// the executor never read the run. It goes again on a new connection and runs once.
TEST(HttpExecutorClient, RunOnAKeptAliveConnectionClosedUnreadIsSentAgainOnANewOne) {
  RawExecutor executor;
  std::atomic<bool> scripted{false};
  executor.run([&](RawExecutor& e) {
    int kept = e.accept();
    if (kept < 0 || e.read_request(kept) != "/beat") return;
    e.answer_success(kept);  // keep-alive: the client pools the connection
    if (!e.wait_for_whole_request_unread(kept)) return;
    e.close_unread(kept);
    int fresh = e.accept();
    if (fresh < 0 || e.read_request(fresh) != "/run") return;
    e.answer_success(fresh);
    scripted = true;
  });
  admin::HttpExecutorClient client;
  ASSERT_TRUE(client.beat(executor.url(), "").is_success());
  auto answer = client.run(executor.url(), "", trigger(7));
  executor.join();
  EXPECT_TRUE(answer.is_success()) << answer.code << " " << answer.msg;
  EXPECT_TRUE(scripted);
  EXPECT_EQ(executor.received(), (std::vector<std::string>{"/beat", "/run"})) << "the run arrives exactly once";
  EXPECT_EQ(client.idle_connections(), 1u) << "the new connection is kept";
}

// The same race caught earlier: the executor closes the connection as soon as the request's
// first bytes arrive, unread, so the rest usually cannot be written (cpp-httplib writes head and
// body apart; whether the body was already out or not, nothing was read). /kill (and the other
// calls) take the same single retry.
TEST(HttpExecutorClient, CallCutOffWhileBeingSentOnAKeptAliveConnectionIsSentAgain) {
  RawExecutor executor;
  executor.run([](RawExecutor& e) {
    int kept = e.accept();
    if (kept < 0 || !e.read_request(kept)) return;
    e.answer_success(kept);
    if (!e.wait_for_request_start(kept)) return;
    e.close_unread(kept);
    int fresh = e.accept();
    if (fresh < 0 || !e.read_request(fresh)) return;
    e.answer_success(fresh);
  });
  admin::HttpExecutorClient client;
  ASSERT_TRUE(client.beat(executor.url(), "").is_success());
  auto answer = client.kill(executor.url(), "", 3);
  executor.join();
  EXPECT_TRUE(answer.is_success()) << answer.code << " " << answer.msg;
  EXPECT_EQ(executor.received(), (std::vector<std::string>{"/beat", "/kill"}));
}

// Sent whole, then no answer: the executor may be running it. Not sent again; 502 tells the
// trigger service to ask the executor (/log) before anything else.
TEST(HttpExecutorClient, RunReadButNeverAnsweredIsNotSentAgain) {
  RawExecutor executor;
  std::atomic<bool> client_gave_up{false};
  executor.run([&](RawExecutor& e) {
    int kept = e.accept();
    if (kept < 0 || !e.read_request(kept)) return;
    e.answer_success(kept);
    if (e.read_request(kept) != "/run") return;
    client_gave_up = e.wait_for_client_close(kept);  // never answered
  });
  admin::HttpExecutorClient::Options o;
  o.read_timeout = 300ms;
  admin::HttpExecutorClient client(common::SystemClock::instance(), o);
  ASSERT_TRUE(client.beat(executor.url(), "").is_success());
  auto answer = client.run(executor.url(), "", trigger(8));
  executor.join();
  EXPECT_EQ(answer.code, protocol::kTimeoutCode) << answer.msg;
  EXPECT_NE(answer.msg.find("read timeout"), std::string::npos) << answer.msg;
  EXPECT_TRUE(client_gave_up);
  EXPECT_EQ(executor.received(), (std::vector<std::string>{"/beat", "/run"})) << "received exactly once";
  EXPECT_FALSE(executor.connection_pending()) << "no second connection";
}

// A run written whole before the executor closed the connection is taken as unread only when
// the executor then answers on a new connection. When it cannot be reached any more (it died),
// the call is 502 — delivery unknown, to be checked — not 500.
TEST(HttpExecutorClient, RunClosedUnreadThenRefusedMayHaveBeenDelivered) {
  RawExecutor executor;
  executor.run([](RawExecutor& e) {
    int kept = e.accept();
    if (kept < 0 || !e.read_request(kept)) return;
    e.answer_success(kept);
    if (!e.wait_for_whole_request_unread(kept)) return;
    e.close_listener();  // the retry's connect is refused
    e.close_unread(kept);
  });
  admin::HttpExecutorClient client;
  ASSERT_TRUE(client.beat(executor.url(), "").is_success());
  auto answer = client.run(executor.url(), "", trigger(9));
  executor.join();
  EXPECT_EQ(answer.code, protocol::kTimeoutCode) << answer.msg;
  EXPECT_NE(answer.msg.find("cannot connect"), std::string::npos) << answer.msg;
  EXPECT_NE(answer.msg.find("sent again on a new connection after"), std::string::npos) << answer.msg;
  EXPECT_NE(answer.msg.find("reset after the request was sent, before any answer"), std::string::npos) << answer.msg;
  EXPECT_EQ(executor.received(), (std::vector<std::string>{"/beat"}));
}

TEST(HttpExecutorClient, AnswerThatIsNotAReturnTIsAFailure) {
  ScriptedExecutor executor;
  executor.answer(200, "<html>proxy</html>");
  admin::HttpExecutorClient client;
  auto answer = client.run(executor.url(), "", trigger(1));
  EXPECT_EQ(answer.code, protocol::kFailCode);
  EXPECT_NE(answer.msg.find("invalid answer from POST " + executor.url() + "run"), std::string::npos) << answer.msg;
}

TEST(HttpExecutorClient, RefusalKeepsTheExecutorsMessage) {
  ScriptedExecutor executor;
  executor.answer(200, R"({"code":500,"msg":"job handler [x] not found.","content":null})");
  admin::HttpExecutorClient client;
  auto answer = client.run(executor.url(), "", trigger(1));
  EXPECT_EQ(answer.code, 500);
  EXPECT_EQ(answer.msg, "job handler [x] not found.");
  executor.answer(502, "Bad Gateway");
  answer = client.run(executor.url(), "", trigger(2));
  EXPECT_EQ(answer.code, protocol::kFailCode);
  EXPECT_NE(answer.msg.find("HTTP 502 from POST"), std::string::npos) << answer.msg;
}

TEST(HttpExecutorClient, MalformedAddressIsAFailureNotAnException) {
  admin::HttpExecutorClient client;
  auto answer = client.beat("10.0.0.1:9999", "");
  EXPECT_EQ(answer.code, admin::kNotReachedCode);
  EXPECT_NE(answer.msg.find("10.0.0.1:9999"), std::string::npos) << answer.msg;
}

TEST(HttpExecutorClient, RunReachesARealExecutorsHandler) {
  FakeAdmin admin;
  const fs::path log_dir =
      fs::temp_directory_path() / ("cronwheel-trigger-test-" + std::to_string(::getpid()));
  fs::remove_all(log_dir);
  executor::ExecutorOptions o;
  o.admin_addresses = {admin.url()};
  o.app_name = "trigger-test";
  o.access_token = "secret";
  o.listen_host = "127.0.0.1";
  o.listen_port = 0;
  o.log_dir = log_dir.string();
  executor::Executor executor(o);
  std::promise<std::pair<std::string, int>> ran;
  executor.handle("demoHandler", [&](executor::JobContext& ctx) {
    ran.set_value({ctx.params(), ctx.shard_index()});
  });
  executor.start();

  admin::HttpExecutorClient client;
  EXPECT_TRUE(client.beat(executor.address(), "secret").is_success());
  EXPECT_FALSE(client.beat(executor.address(), "wrong").is_success());
  auto answer = client.run(executor.address(), "secret", trigger(41));
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  auto future = ran.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), std::make_pair(std::string("a=1"), 1));

  protocol::LogParam unknown;
  unknown.log_id = 4242;
  unknown.log_date_time = 1'700'000'000'000;
  unknown.from_line_num = 1;
  auto log = client.log(executor.address(), "secret", unknown);
  ASSERT_TRUE(log.is_success()) << log.msg;
  EXPECT_EQ(log.content->log_content, "readLog fail, logFile not exists");

  executor.stop();
  fs::remove_all(log_dir);
}

}  // namespace
}  // namespace cronwheel::testing
