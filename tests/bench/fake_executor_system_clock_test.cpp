// The load benchmarks' fake executor with lead dispatch on (fake_executor.h), over real HTTP on
// loopback and the operating system's clock: its fires start at their instant, it says what it
// holds, and it registers with its admins. Waits are bounded polls for what the fake does on its
// own threads; nothing is asserted about how late a fire is.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"
#include "tests/bench/fake_executor.h"

namespace cronwheel::bench {
namespace {

namespace http = common::http;
namespace protocol = common::protocol;
using namespace std::chrono_literals;

constexpr const char* kFakeToken = "fake-executor-test-token";

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Polls `done` every 5 ms for at most `limit`.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

protocol::LeadFire fire(std::int64_t log_id, std::int64_t fire_at) {
  protocol::LeadFire f;
  f.fire_at = fire_at;
  f.trigger.job_id = 7;
  f.trigger.log_id = log_id;
  f.trigger.log_date_time = fire_at;
  f.trigger.executor_handler = "fire";
  return f;
}

class LeadingFakeExecutor : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeExecutor::Options o;
    o.access_token = kFakeToken;
    o.lead = true;
    o.app_name = "fake-test";
    executor_ = std::make_unique<FakeExecutor>(o);
    executor_->start();
    http::HttpClientOptions c;
    c.access_token = kFakeToken;
    c.read_timeout = 5s;
    client_ = std::make_unique<http::HttpClient>(executor_->address(), c);
  }
  void TearDown() override { executor_->stop(0ms); }

  protocol::ReturnT<protocol::LeadAnswer> lead(std::vector<protocol::LeadFire> fires) {
    protocol::LeadRequest request;
    request.admin_time = wall_ms();
    request.fires = std::move(fires);
    return http::post_xxl_job<protocol::LeadAnswer>(*client_, protocol::kLeadPath, protocol::to_json_string(request));
  }
  protocol::ReturnT<protocol::LeadCancelAnswer> cancel(std::vector<std::int64_t> ids) {
    protocol::LeadCancelParam param;
    param.log_ids = std::move(ids);
    param.reason = "test";
    return http::post_xxl_job<protocol::LeadCancelAnswer>(*client_, protocol::kLeadCancelPath,
                                                          protocol::to_json_string(param));
  }

  std::unique_ptr<FakeExecutor> executor_;
  std::unique_ptr<http::HttpClient> client_;
};

TEST_F(LeadingFakeExecutor, StartsEachLeadFireAtItsInstantNeverBefore) {
  const std::int64_t at = wall_ms() + 300;
  auto answer = lead({fire(1, at), fire(2, at), fire(3, at + 100)});
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  ASSERT_TRUE(answer.content);
  EXPECT_EQ(answer.content->accepted, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_TRUE(answer.content->refused.empty());
  ASSERT_TRUE(eventually([&] { return executor_->received() == 3; }));
  for (const auto& r : executor_->receipts()) {
    EXPECT_TRUE(r.by_lead);
    EXPECT_GE(r.received_us, (r.log_id == 3 ? at + 100 : at) * 1000) << "run " << r.log_id << " started early";
  }
  EXPECT_EQ(executor_->received_by_lead(), 3u);
  EXPECT_EQ(executor_->received_by_run(), 0u);
  EXPECT_EQ(executor_->lead_requests(), 1u);
}

TEST_F(LeadingFakeExecutor, HoldsALogIdHandedOverTwiceOnce) {
  const std::int64_t at = wall_ms() + 200;
  ASSERT_TRUE(lead({fire(10, at)}).is_success());
  auto again = lead({fire(10, at)});
  ASSERT_TRUE(again.is_success()) << again.msg;
  EXPECT_EQ(again.content->accepted, (std::vector<std::int64_t>{10}));
  ASSERT_TRUE(eventually([&] { return executor_->received() >= 1; }));
  std::this_thread::sleep_for(100ms);  // a second start would come at the same tick
  EXPECT_EQ(executor_->received(), 1u);
  // Handed over again once started: still accepted, never started twice.
  ASSERT_TRUE(lead({fire(10, wall_ms())}).is_success());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(executor_->received(), 1u);
}

TEST_F(LeadingFakeExecutor, CancelSaysCancelledStartedOrUnknown) {
  const std::int64_t now = wall_ms();
  ASSERT_TRUE(lead({fire(20, now + 30'000), fire(21, now)}).is_success());
  ASSERT_TRUE(eventually([&] { return executor_->received() == 1; }));
  auto answer = cancel({20, 21, 22});
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  EXPECT_EQ(answer.content->cancelled, (std::vector<std::int64_t>{20}));
  EXPECT_EQ(answer.content->started, (std::vector<std::int64_t>{21}));
  EXPECT_EQ(answer.content->unknown, (std::vector<std::int64_t>{22}));
  // Cancelled: no longer held, so a second cancel does not know it.
  EXPECT_EQ(cancel({20}).content->unknown, (std::vector<std::int64_t>{20}));
}

TEST_F(LeadingFakeExecutor, RefusesAFireFurtherAheadThanTheProtocolAllows) {
  auto answer = lead({fire(30, wall_ms() + protocol::kMaxLeadAheadMs + 10'000), fire(31, wall_ms() + 1'000)});
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  EXPECT_EQ(answer.content->accepted, (std::vector<std::int64_t>{31}));
  ASSERT_EQ(answer.content->refused.size(), 1u);
  EXPECT_EQ(answer.content->refused[0].log_id, 30);
}

TEST_F(LeadingFakeExecutor, RefusesAMalformedLeadRequestWithoutStartingAnything) {
  auto answer = http::post_xxl_job<protocol::LeadAnswer>(*client_, protocol::kLeadPath, R"({"adminTime":1,"fires":7})");
  EXPECT_FALSE(answer.is_success());
  EXPECT_EQ(executor_->lead_requests(), 0u);
  EXPECT_EQ(executor_->received(), 0u);
}

TEST(FakeExecutorWithoutLead, HasNoLeadRoute) {
  FakeExecutor::Options o;
  FakeExecutor executor(o);
  executor.start();
  http::HttpClient client(executor.address());
  auto result = client.post_json(protocol::kLeadPath, R"({"adminTime":1,"fires":[]})");
  EXPECT_EQ(result.status, 404);
  executor.stop(0ms);
}

TEST(FakeExecutorRegistration, RegistersWithLeadDispatchAndRemovesItAtStop) {
  std::mutex mutex;
  std::vector<std::pair<std::string, protocol::RegistryParam>> seen;
  http::HttpServerOptions so;
  so.host = "127.0.0.1";
  http::HttpServer admin(so);
  auto record = [&](const std::string& path) {
    return [&, path](const http::Request& req, http::Response& res) {
      {
        std::lock_guard lock(mutex);
        seen.emplace_back(path, protocol::parse<protocol::RegistryParam>(req.body));
      }
      http::write_json(res, protocol::to_json_string(protocol::ReturnT<std::string>::success()));
    };
  };
  admin.post("/api/registry", record("registry"));
  admin.post("/api/registryRemove", record("remove"));
  admin.start();

  FakeExecutor::Options o;
  o.lead = true;
  o.app_name = "fake-app";
  o.admin_urls = {"http://127.0.0.1:" + std::to_string(admin.port()) + "/"};
  FakeExecutor executor(o);
  executor.start();
  const std::string address = executor.address();
  ASSERT_TRUE(eventually([&] { return executor.registrations() >= 1; }));
  executor.stop(0ms);
  admin.stop();

  std::lock_guard lock(mutex);
  ASSERT_GE(seen.size(), 2u);
  const auto& [path, p] = seen.front();
  EXPECT_EQ(path, "registry");
  EXPECT_EQ(p.registry_group, "EXECUTOR");
  EXPECT_EQ(p.registry_key, "fake-app");
  EXPECT_EQ(p.registry_value, address);
  EXPECT_EQ(p.clock_offset_ms, 0);
  EXPECT_EQ(p.clock_delay_ms, 0);
  EXPECT_TRUE(p.lead_dispatch);
  EXPECT_EQ(seen.back().first, "remove");
  EXPECT_EQ(seen.back().second.registry_value, address);
}

}  // namespace
}  // namespace cronwheel::bench
