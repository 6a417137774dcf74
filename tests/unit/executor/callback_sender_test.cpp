#include "executor/src/callback_sender.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/http/http_server.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "tests/support/fake_admin.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"

// Real sockets on 127.0.0.1 (the fake admin picks its port), a real spool directory per test and
// the retries' timer on a fake clock, driven by hand: the tests move time to the next retry
// themselves, and wait for the sender with wait_idle() or for the admin's callbacks.
namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using common::protocol::HandleCallbackParam;
using Results = std::vector<HandleCallbackParam>;
using testing::FakeAdmin;
using testing::FakeClock;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr std::int64_t kLogDateTime = 1700000000000;
constexpr auto kRetryInterval = 30s;

HandleCallbackParam result(std::int64_t log_id, int code = 200, std::string msg = "") {
  HandleCallbackParam r;
  r.log_id = log_id;
  r.log_date_time = kLogDateTime + log_id;
  r.handle_code = code;
  r.handle_msg = std::move(msg);
  return r;
}

CallbackSender::Options options_for(std::vector<std::string> admins, const fs::path& spool) {
  CallbackSender::Options options;
  options.admin_addresses = std::move(admins);
  options.spool_dir = spool;
  options.retry_interval = kRetryInterval;
  options.max_batch = 100;
  options.http.connect_timeout = 5s;
  options.http.read_timeout = 10s;
  options.http.write_timeout = 10s;
  return options;
}

std::vector<fs::path> spool_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".spool") files.push_back(entry.path());
  }
  return files;
}

// How many times the admin accepted each log id.
std::map<std::int64_t, int> deliveries(const FakeAdmin& admin) {
  std::map<std::int64_t, int> seen;
  for (const auto& c : admin.callbacks()) ++seen[c.log_id];
  return seen;
}

bool has_callbacks(const FakeAdmin& admin, std::size_t count) {
  return admin.wait_until([count](const FakeAdmin& a) { return a.callbacks().size() >= count; });
}

// Every log id in [first, last] was accepted exactly once, and nothing else was.
void expect_each_delivered_once(const FakeAdmin& admin, std::int64_t first, std::int64_t last) {
  auto seen = deliveries(admin);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(last - first + 1));
  for (std::int64_t id = first; id <= last; ++id) EXPECT_EQ(seen[id], 1) << "log id " << id;
}

// The timer the sender's retries are on, with a fake clock, driven by hand.
struct Retries {
  FakeClock clock;
  common::HierarchicalWheelTimer timer{clock, {}, {.manual = true}};

  // Once `sender` has done what it can (and so put its next retry on the timer), moves time by
  // `d` and hands over what came due.
  void advance(const CallbackSender& sender, std::chrono::milliseconds d) {
    sender.wait_idle();
    EXPECT_GE(timer.pending_timeouts(), 1U) << "no retry on the timer";
    clock.advance(d);
    timer.process_until(clock.steady_now());
  }
};

// Moves time to the sender's next retry.
void next_retry(Retries& retries, const CallbackSender& sender) { retries.advance(sender, kRetryInterval); }

void write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

TEST(CallbackSenderTest, SendsTheXxlJob24BodyWithTheAccessToken) {
  Retries retries;
  FakeAdmin admin(FakeAdmin::Options{.access_token = "s3cret"});
  TempDir spool;
  auto options = options_for({admin.url()}, spool.path());
  options.access_token = "s3cret";
  CallbackSender sender(options, retries.timer, retries.clock);
  sender.start();

  auto pushed = result(42, 500, "boom: \"quoted\"\nsecond line");
  sender.push(pushed);

  auto received = admin.wait_for_result(42);
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(*received, pushed);
  EXPECT_EQ(admin.rejected_tokens(), 0);

  auto bodies = admin.callback_bodies();
  ASSERT_EQ(bodies.size(), 1U);
  const std::string& body = bodies[0];
  // A bare JSON array (XXL-JOB 2.4), not {"callbackList":[...]} (3.x).
  ASSERT_FALSE(body.empty());
  EXPECT_EQ(body.front(), '[');
  auto json = nlohmann::json::parse(body);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 1U);
  std::set<std::string> keys;
  for (const auto& [key, value] : json[0].items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"logId", "logDateTim", "handleCode", "handleMsg"}));
  EXPECT_EQ(json[0]["logId"], 42);
  EXPECT_EQ(json[0]["logDateTim"], kLogDateTime + 42);
  EXPECT_EQ(json[0]["handleCode"], 500);
  EXPECT_EQ(json[0]["handleMsg"], "boom: \"quoted\"\nsecond line");
  // XXL-JOB's spelling, byte for byte.
  EXPECT_NE(body.find("\"logDateTim\":" + std::to_string(kLogDateTime + 42)), std::string::npos);
  EXPECT_EQ(body.find("logDateTime"), std::string::npos);
}

TEST(CallbackSenderTest, ResultRefusedForAWrongTokenStaysSpooled) {
  Retries retries;
  FakeAdmin admin(FakeAdmin::Options{.access_token = "right"});
  TempDir spool;
  auto options = options_for({admin.url()}, spool.path());
  options.access_token = "wrong";
  CallbackSender sender(options, retries.timer, retries.clock);
  sender.start();
  sender.push(result(1));

  sender.wait_idle();
  EXPECT_EQ(sender.spooled(), 1U);
  EXPECT_EQ(sender.queued(), 0U);
  EXPECT_GE(admin.rejected_tokens(), 1);
  EXPECT_TRUE(admin.callbacks().empty());
  EXPECT_FALSE(spool_files(spool.path()).empty());
}

TEST(CallbackSenderTest, BatchesEverythingQueuedUpToMaxBatchPerRequest) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);

  // Four threads push 250 results each; the sender then finds 1000 queued.
  std::vector<std::thread> pushers;
  for (int t = 0; t < 4; ++t) {
    pushers.emplace_back([&sender, t] {
      for (int i = 0; i < 250; ++i) sender.push(result(t * 250 + i + 1));
    });
  }
  for (auto& p : pushers) p.join();
  EXPECT_EQ(sender.queued(), 1000U);
  sender.start();

  ASSERT_TRUE(has_callbacks(admin, 1000));
  EXPECT_EQ(admin.callback_bodies().size(), 10U);  // 1000 results, 100 per request
  expect_each_delivered_once(admin, 1, 1000);
  sender.wait_idle();
  EXPECT_EQ(sender.queued(), 0U);
}

// Requests of up to 1,000 results (the default) and 256 KiB of body.
CallbackSender::Options bounded_by_bytes(const FakeAdmin& admin, const fs::path& spool) {
  auto options = options_for({admin.url()}, spool);
  options.max_batch = 1000;
  options.max_batch_bytes = 256 * 1024;
  return options;
}

// Results with long messages of characters JSON escapes six times over (a control character is
// \u00XX): a request holds only as many as fit in max_batch_bytes, and a result over it alone
// goes alone. Counted by results, the first request would have been 40 of them, 4.8 MB.
TEST(CallbackSenderTest, ARequestsBodyStaysWithinMaxBatchBytes) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  const auto options = bounded_by_bytes(admin, spool.path());
  CallbackSender sender(options, retries.timer, retries.clock);
  for (int id = 1; id <= 40; ++id) sender.push(result(id, 500, std::string(20'000, '\x01')));
  sender.push(result(41, 500, std::string(300 * 1024, 'x')));
  for (int id = 42; id <= 141; ++id) sender.push(result(id));
  sender.start();

  ASSERT_TRUE(has_callbacks(admin, 141));
  const auto bodies = admin.callback_bodies();
  // 40 escaped messages two a request (120 KB each), the long one alone, the short ones together.
  ASSERT_EQ(bodies.size(), 22U);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (i == 20) {
      EXPECT_GT(bodies[i].size(), options.max_batch_bytes);
      continue;
    }
    EXPECT_LE(bodies[i].size(), options.max_batch_bytes) << "request " << i;
  }
  expect_each_delivered_once(admin, 1, 141);
}

// The same bound when what the spool holds is sent again: a sender never started spools all
// ten in one file, which the next one sends in two requests.
TEST(CallbackSenderTest, ASpoolFileIsSentAgainWithinMaxBatchBytes) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  const auto options = bounded_by_bytes(admin, spool.path());
  {
    CallbackSender idle(options, retries.timer, retries.clock);
    for (int id = 1; id <= 10; ++id) idle.push(result(id, 500, std::string(20'000, '"')));
  }
  ASSERT_EQ(spool_files(spool.path()).size(), 1U);
  EXPECT_TRUE(admin.callbacks().empty());

  CallbackSender sender(options, retries.timer, retries.clock);
  sender.start();
  ASSERT_TRUE(has_callbacks(admin, 10));
  sender.wait_idle();
  const auto bodies = admin.callback_bodies();
  EXPECT_EQ(bodies.size(), 2U);  // 40 KB each escaped: six a request, then four
  for (const auto& body : bodies) EXPECT_LE(body.size(), options.max_batch_bytes);
  expect_each_delivered_once(admin, 1, 10);
}

TEST(CallbackSenderTest, ConcurrentPushesWhileRunningArriveExactlyOnce) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();

  std::vector<std::thread> pushers;
  for (int t = 0; t < 4; ++t) {
    pushers.emplace_back([&sender, t] {
      for (int i = 0; i < 200; ++i) sender.push(result(t * 200 + i + 1));
    });
  }
  for (auto& p : pushers) p.join();

  ASSERT_TRUE(has_callbacks(admin, 800));
  expect_each_delivered_once(admin, 1, 800);
  EXPECT_LE(admin.callback_bodies().size(), 800U);
  sender.wait_idle();
  EXPECT_EQ(sender.queued(), 0U);
  EXPECT_EQ(sender.spooled(), 0U);
}

TEST(CallbackSenderTest, SpoolsWhileTheAdminIsDownAndDeliversOnceItIsBack) {
  Retries retries;
  FakeAdmin admin;
  admin.stop();
  TempDir spool;
  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  for (int id = 1; id <= 5; ++id) sender.push(result(id));

  sender.wait_idle();
  EXPECT_EQ(sender.spooled(), 5U);
  EXPECT_EQ(sender.queued(), 0U);
  EXPECT_FALSE(spool_files(spool.path()).empty());

  admin.start();
  retries.advance(sender, kRetryInterval - 1s);
  sender.wait_idle();
  EXPECT_TRUE(admin.callbacks().empty());  // not before the retry interval
  retries.advance(sender, 1s);
  ASSERT_TRUE(has_callbacks(admin, 5));
  sender.wait_idle();
  EXPECT_EQ(sender.spooled(), 0U);
  EXPECT_TRUE(spool_files(spool.path()).empty());
  expect_each_delivered_once(admin, 1, 5);
}

TEST(CallbackSenderTest, ResultsSurviveARestartOfTheSenderWhileTheAdminIsDown) {
  Retries retries;
  FakeAdmin admin;
  admin.stop();
  TempDir spool;
  {
    CallbackSender first(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
    first.start();
    for (int id = 1; id <= 3; ++id) first.push(result(id));
    first.wait_idle();
    ASSERT_EQ(first.spooled(), 3U);
    for (int id = 4; id <= 6; ++id) first.push(result(id));
    // Destroyed with results possibly still queued: they are spooled, not lost.
  }
  EXPECT_FALSE(spool_files(spool.path()).empty());

  CallbackSender second(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  second.start();
  EXPECT_EQ(second.spooled(), 6U);
  admin.start();
  next_retry(retries, second);

  ASSERT_TRUE(has_callbacks(admin, 6));
  second.wait_idle();
  EXPECT_EQ(second.spooled(), 0U);
  EXPECT_TRUE(spool_files(spool.path()).empty());
  expect_each_delivered_once(admin, 1, 6);
}

// Runs `body` in a child process, then kills it with SIGKILL once it said it is done (a byte on a
// pipe), while it is still alive: nothing of the child's runs after its body, no destructor, no
// flush. Returns whether the child got that far.
//
// The fork happens while this process has no thread but the test's own: a child forked beside
// running threads inherits whatever locks they held at that instant (the allocator's, a logger's,
// a server's), and its body may then wait on one forever. So `after_fork` (say, starting the
// admin the child sends to) runs in the parent only after the fork, and what it returns reaches
// `body` through a pipe.
bool run_then_sigkill(const std::function<void(const std::string&)>& body,
                      const std::function<std::string()>& after_fork = [] { return std::string(); }) {
  int ready[2];
  int given[2];
  if (::pipe(ready) != 0) return false;
  if (::pipe(given) != 0) return false;
  pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    ::close(ready[0]);
    ::close(given[1]);
    std::string text;
    char c = 0;
    while (::read(given[0], &c, 1) == 1 && c != '\n') text += c;
    body(text);
    char done = 1;
    (void)!::write(ready[1], &done, 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  ::close(given[0]);
  const std::string text = after_fork() + "\n";
  (void)!::write(given[1], text.data(), text.size());
  ::close(given[1]);
  char done = 0;
  bool got = ::read(ready[0], &done, 1) == 1;
  ::close(ready[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  return got && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

TEST(CallbackSenderTest, ResultsOnlyInMemoryWhenTheProcessIsKilledAreSentByTheNextOne) {
  FakeAdmin admin;
  admin.stop();  // nobody answers: the results could only have been queued in memory
  TempDir spool;
  const auto url = admin.url();
  ASSERT_TRUE(run_then_sigkill([&](const std::string&) {
    Retries retries;
    auto* dying = new CallbackSender(options_for({url}, spool.path()), retries.timer, retries.clock);
    for (int id = 1; id <= 20; ++id) dying->push(result(id));
  }));
  EXPECT_TRUE(spool_files(spool.path()).empty());  // nothing was spooled: only the journal has them

  admin.start();
  Retries retries;
  CallbackSender next(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  next.start();
  ASSERT_TRUE(has_callbacks(admin, 20));
  next.wait_idle();
  EXPECT_EQ(next.spooled(), 0U);
  EXPECT_TRUE(spool_files(spool.path()).empty());
  expect_each_delivered_once(admin, 1, 20);
}

TEST(CallbackSenderTest, ResultsAcceptedBeforeTheProcessIsKilledAreNotSentAgain) {
  TempDir spool;
  std::optional<FakeAdmin> running;  // started after the fork (run_then_sigkill says why)
  ASSERT_TRUE(run_then_sigkill(
      [&](const std::string& url) {
        Retries retries;
        auto* dying = new CallbackSender(options_for({url}, spool.path()), retries.timer, retries.clock);
        dying->start();
        for (int id = 1; id <= 10; ++id) dying->push(result(id));
        dying->wait_idle();  // every result accepted, and acknowledged in the journal
      },
      [&] { return running.emplace().url(); }));
  FakeAdmin& admin = *running;
  ASSERT_TRUE(has_callbacks(admin, 10));

  Retries retries;
  CallbackSender next(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  next.start();
  // The next sender re-sends what it found before anything new: once 99 is in, a repeat of
  // 1..10 would be too.
  next.push(result(99));
  ASSERT_TRUE(has_callbacks(admin, 11));
  auto seen = deliveries(admin);
  EXPECT_EQ(seen.size(), 11U);
  for (int id = 1; id <= 10; ++id) EXPECT_EQ(seen[id], 1) << "log id " << id;
}

TEST(CallbackSenderTest, HasResultFromPushUntilAnAdminAcceptedIt) {
  Retries retries;
  FakeAdmin admin;
  admin.stop();
  TempDir spool;
  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.push(result(5));
  EXPECT_TRUE(sender.has_result(5));  // queued
  EXPECT_FALSE(sender.has_result(6));
  sender.start();
  sender.wait_idle();
  ASSERT_EQ(sender.spooled(), 1U);
  EXPECT_TRUE(sender.has_result(5));  // spooled
  EXPECT_EQ(sender.backlog(), 1U);
  admin.start();
  next_retry(retries, sender);
  ASSERT_TRUE(has_callbacks(admin, 1));
  sender.wait_idle();
  EXPECT_FALSE(sender.has_result(5));
  EXPECT_EQ(sender.backlog(), 0U);
}

TEST(CallbackSenderTest, ResultsPushedToASenderNeverStartedAreSpooled) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  {
    CallbackSender idle(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
    idle.push(result(1));
    idle.push(result(2));
    EXPECT_EQ(idle.queued(), 2U);
  }
  EXPECT_TRUE(admin.callbacks().empty());
  EXPECT_FALSE(spool_files(spool.path()).empty());

  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  ASSERT_TRUE(has_callbacks(admin, 2));
  sender.wait_idle();
  EXPECT_TRUE(spool_files(spool.path()).empty());
  expect_each_delivered_once(admin, 1, 2);
}

TEST(CallbackSenderTest, UsesTheSecondAdminWhenTheFirstRefuses) {
  Retries retries;
  FakeAdmin first;
  FakeAdmin second;
  first.set_refusing(true);
  TempDir spool;
  CallbackSender sender(options_for({first.url(), second.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  sender.push(result(7));

  ASSERT_TRUE(second.wait_for_result(7).has_value());
  EXPECT_GE(first.refused_calls(), 1);  // asked first
  EXPECT_TRUE(first.callbacks().empty());
  EXPECT_EQ(sender.spooled(), 0U);
}

TEST(CallbackSenderTest, UsesTheSecondAdminWhenTheFirstIsDown) {
  Retries retries;
  FakeAdmin first;
  FakeAdmin second;
  first.stop();
  TempDir spool;
  CallbackSender sender(options_for({first.url(), second.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  sender.push(result(7));

  ASSERT_TRUE(second.wait_for_result(7).has_value());
  EXPECT_EQ(sender.spooled(), 0U);
  EXPECT_TRUE(spool_files(spool.path()).empty());
}

TEST(CallbackSenderTest, SendsOnlyToTheFirstAdminWhileItAccepts) {
  Retries retries;
  FakeAdmin first;
  FakeAdmin second;
  TempDir spool;
  CallbackSender sender(options_for({first.url(), second.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  for (int id = 1; id <= 3; ++id) sender.push(result(id));

  ASSERT_TRUE(has_callbacks(first, 3));
  sender.stop(5s);
  EXPECT_TRUE(second.callback_bodies().empty());
}

TEST(CallbackSenderTest, SkipsUnreadableSpoolLinesAndDeliversTheRest) {
  Retries retries;
  FakeAdmin admin;
  admin.stop();  // until the spool was counted
  TempDir spool;
  auto line = [](std::vector<std::int64_t> ids) {
    common::protocol::CallbackBatch batch;
    for (auto id : ids) batch.callbacks.push_back(result(id));
    return common::protocol::to_json_string(batch) + "\n";
  };
  // Written by an earlier process that crashed in the middle of its last line.
  write_file(spool.path() / "callback-0000000000000001-1-0-0.spool",
             line({1}) + "not json at all\n" + line({2, 3}) + "{\"logId\":4}\n" + "\n" +
                 "[{\"logId\":5,\"logDateTim\":17000000");
  // Damaged beyond reading.
  write_file(spool.path() / "callback-0000000000000002-1-0-0.spool",
             std::string("\0\1\2garbage", 10));
  // A later, intact file: not blocked by the ones before it.
  write_file(spool.path() / "callback-0000000000000003-1-0-0.spool", line({6}));
  // Not a spool file: left alone.
  write_file(spool.path() / "notes.txt", "keep me");

  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  EXPECT_EQ(sender.spooled(), 4U);
  admin.start();
  next_retry(retries, sender);

  ASSERT_TRUE(has_callbacks(admin, 4));
  sender.wait_idle();
  EXPECT_EQ(sender.spooled(), 0U);
  EXPECT_TRUE(spool_files(spool.path()).empty());
  auto seen = deliveries(admin);
  EXPECT_EQ(seen, (std::map<std::int64_t, int>{{1, 1}, {2, 1}, {3, 1}, {6, 1}}));
  EXPECT_TRUE(fs::exists(spool.path() / "notes.txt"));
}

// An admin that accepts a given number of callback requests and refuses the ones after them.
class RationedAdmin {
 public:
  explicit RationedAdmin(int accepted_requests) : budget_(accepted_requests) {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 2;
    o.error_formatter = common::http::xxl_job_error;
    o.name = "rationed-admin";
    server_ = std::make_unique<common::http::HttpServer>(o);
    server_->post("/api/callback", [this](const auto& req, auto& res) {
      using Answer = common::protocol::ReturnT<std::string>;
      std::lock_guard lock(mutex_);
      if (budget_ == 0) {
        ++refused_;
        common::http::write_json(res, common::protocol::to_json_string(Answer::fail("try later")));
        return;
      }
      --budget_;
      for (auto& c : common::protocol::parse<common::protocol::CallbackBatch>(req.body).callbacks) {
        accepted_.push_back(c);
      }
      common::http::write_json(res, common::protocol::to_json_string(Answer::success()));
    });
    server_->start();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/"; }
  void allow(int requests) {
    std::lock_guard lock(mutex_);
    budget_ = requests;
  }
  std::vector<HandleCallbackParam> accepted() const {
    std::lock_guard lock(mutex_);
    return accepted_;
  }
  int refused() const {
    std::lock_guard lock(mutex_);
    return refused_;
  }

 private:
  mutable std::mutex mutex_;
  int budget_;
  int refused_ = 0;
  std::vector<HandleCallbackParam> accepted_;
  std::unique_ptr<common::http::HttpServer> server_;
};

TEST(CallbackSenderTest, KeepsTheUnacceptedRestOfASpoolFileAndSendsItOnce) {
  Retries retries;
  RationedAdmin admin(1);  // takes the first request of the file only
  TempDir spool;
  common::protocol::CallbackBatch batch;
  std::string content;
  for (int id = 1; id <= 250; ++id) {
    batch.callbacks.push_back(result(id));
    if (batch.callbacks.size() == 100 || id == 250) {
      content += common::protocol::to_json_string(batch) + "\n";
      batch.callbacks.clear();
    }
  }
  auto original = spool.path() / "callback-0000000000000001-1-0-0.spool";
  write_file(original, content);

  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  sender.wait_idle();
  EXPECT_GE(admin.refused(), 1);
  EXPECT_FALSE(fs::exists(original));
  EXPECT_EQ(admin.accepted().size(), 100U);
  // The 150 results not yet accepted now live in a file of their own.
  auto files = spool_files(spool.path());
  ASSERT_EQ(files.size(), 1U);
  std::ifstream in(files[0]);
  std::size_t kept = 0;
  for (std::string line; std::getline(in, line);) {
    kept += common::protocol::parse<common::protocol::CallbackBatch>(line).callbacks.size();
  }
  EXPECT_EQ(kept, 150U);
  EXPECT_EQ(sender.spooled(), 150U);

  admin.allow(1000);
  next_retry(retries, sender);
  sender.wait_idle();
  EXPECT_EQ(sender.spooled(), 0U);
  EXPECT_TRUE(spool_files(spool.path()).empty());
  std::map<std::int64_t, int> seen;
  for (const auto& c : admin.accepted()) ++seen[c.log_id];
  EXPECT_EQ(seen.size(), 250U);
  for (int id = 1; id <= 250; ++id) EXPECT_EQ(seen[id], 1) << "log id " << id;
}

TEST(CallbackSenderTest, LeavesASpoolFileLockedByAnotherSenderAlone) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  auto path = spool.path() / "callback-0000000000000001-1-0-0.spool";
  write_file(path,
             common::protocol::to_json_string(common::protocol::CallbackBatch{{result(7)}}) + "\n");
  // Another live sender is reading or writing the file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);

  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  sender.push(result(8));
  // The first pass over the spool comes before the first queued result.
  ASSERT_TRUE(admin.wait_for_result(8).has_value());
  EXPECT_EQ(deliveries(admin).count(7), 0U);
  EXPECT_TRUE(fs::exists(path));

  ::close(fd);  // that sender is gone: this one takes the file over at its next retry
  next_retry(retries, sender);
  ASSERT_TRUE(admin.wait_for_result(7).has_value());
  sender.wait_idle();
  EXPECT_FALSE(fs::exists(path));
  expect_each_delivered_once(admin, 7, 8);
}

TEST(CallbackSenderTest, StopDeliversWhatIsQueuedWhenAnAdminAccepts) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  for (int id = 1; id <= 250; ++id) sender.push(result(id));
  sender.stop(20s);

  // Nothing waits: everything arrived before stop() returned.
  EXPECT_EQ(admin.callbacks().size(), 250U);
  expect_each_delivered_once(admin, 1, 250);
  EXPECT_EQ(sender.queued(), 0U);
  EXPECT_EQ(sender.spooled(), 0U);
  EXPECT_TRUE(spool_files(spool.path()).empty());
}

TEST(CallbackSenderTest, StopWithTheAdminDownSpoolsWithinItsTimeout) {
  Retries retries;
  FakeAdmin admin;
  admin.stop();
  TempDir spool;
  CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  sender.start();
  for (int id = 1; id <= 20; ++id) sender.push(result(id));

  auto began = std::chrono::steady_clock::now();
  sender.stop(300ms);
  auto took = std::chrono::steady_clock::now() - began;
  EXPECT_LT(took, 5s);  // the bound is 300 ms; generous for a loaded machine
  EXPECT_EQ(sender.queued(), 0U);
  EXPECT_EQ(sender.spooled(), 20U);
  EXPECT_FALSE(spool_files(spool.path()).empty());

  // And they are not lost.
  admin.start();
  CallbackSender next(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  next.start();
  ASSERT_TRUE(has_callbacks(admin, 20));
  next.wait_idle();
  EXPECT_TRUE(spool_files(spool.path()).empty());
  expect_each_delivered_once(admin, 1, 20);
}

TEST(CallbackSenderTest, PushAfterStopIsSpooledForTheNextSender) {
  Retries retries;
  FakeAdmin admin;
  TempDir spool;
  {
    CallbackSender sender(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
    sender.start();
    sender.stop(1s);
    sender.push(result(9));
    EXPECT_EQ(sender.spooled(), 1U);
    EXPECT_EQ(sender.queued(), 0U);
    sender.stop(1s);  // idempotent
  }
  EXPECT_TRUE(admin.callbacks().empty());
  EXPECT_EQ(spool_files(spool.path()).size(), 1U);

  CallbackSender next(options_for({admin.url()}, spool.path()), retries.timer, retries.clock);
  next.start();
  ASSERT_TRUE(admin.wait_for_result(9).has_value());
  next.wait_idle();
  EXPECT_TRUE(spool_files(spool.path()).empty());
  expect_each_delivered_once(admin, 9, 9);
}

TEST(CallbackSenderTest, CreatesTheSpoolDirectoryWhenMissing) {
  Retries retries;
  FakeAdmin admin;
  admin.stop();
  TempDir root;
  auto dir = root.path() / "logs" / "callbacks";
  CallbackSender sender(options_for({admin.url()}, dir), retries.timer, retries.clock);
  sender.start();
  sender.push(result(1));
  sender.wait_idle();
  EXPECT_EQ(sender.spooled(), 1U);
  EXPECT_EQ(spool_files(dir).size(), 1U);
}

TEST(CallbackSenderTest, RejectsOptionsThatCannotWork) {
  Retries retries;
  TempDir spool;
  EXPECT_THROW(CallbackSender(options_for({}, spool.path()), retries.timer, retries.clock), std::invalid_argument);
  EXPECT_THROW(CallbackSender(options_for({"ftp://admin/"}, spool.path()), retries.timer, retries.clock), std::invalid_argument);
  EXPECT_THROW(CallbackSender(options_for({"http://127.0.0.1:1/"}, ""), retries.timer, retries.clock), std::invalid_argument);
  auto no_batch = options_for({"http://127.0.0.1:1/"}, spool.path());
  no_batch.max_batch = 0;
  EXPECT_THROW(CallbackSender(no_batch, retries.timer, retries.clock), std::invalid_argument);
  auto no_bytes = options_for({"http://127.0.0.1:1/"}, spool.path());
  no_bytes.max_batch_bytes = 0;
  EXPECT_THROW(CallbackSender(no_bytes, retries.timer, retries.clock), std::invalid_argument);
}

TEST(CallbackSenderTest, StartTwiceOrAfterStopThrows) {
  Retries retries;
  TempDir spool;
  CallbackSender sender(options_for({"http://127.0.0.1:1/"}, spool.path()), retries.timer, retries.clock);
  sender.start();
  EXPECT_THROW(sender.start(), std::logic_error);
  sender.stop(0ms);
  EXPECT_THROW(sender.start(), std::logic_error);
}

}  // namespace
}  // namespace cronwheel::executor
