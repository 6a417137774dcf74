// The registry monitor on a manual timer and a fake clock: registrations older than 90 s are
// dropped and automatic groups follow the live ones; manual groups are left alone.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "admin/model/registry_store.h"
#include "admin/registry/registry_monitor.h"
#include "admin/model/store_errors.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_registry_store.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;

class RegistryMonitorTest : public ::testing::Test {
 protected:
  RegistryMonitorTest() {
    automatic_ = make_group("auto-app", 0, {});
    manual_ = make_group("manual-app", 1, {"http://10.0.0.9:9999/"});
  }

  std::int64_t make_group(const std::string& app, int type, std::vector<std::string> addresses) {
    Group g;
    g.app_name = app;
    g.title = app;
    g.address_type = type;
    g.address_list = std::move(addresses);
    return stores_.groups().create(g, system_).id;
  }

  std::vector<std::string> addresses(std::int64_t group) { return stores_.groups().get(group)->address_list; }

  // Moves time and waits until the refreshes that became due are over.
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
    tasks_.wait_idle();
  }

  Actor system_{std::nullopt, "system", ""};
  testing::FakeClock clock_;
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  testing::FakeStores stores_{clock_};
  testing::FakeRegistryStore registry_{stores_, clock_};
  RegistryMonitor monitor_{registry_, tasks_, RegistryMonitor::Options{30s, 90s}};
  std::int64_t automatic_ = 0, manual_ = 0;
};

TEST_F(RegistryMonitorTest, RefreshesAtStartThenEveryInterval) {
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.2:9999/");
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.1:9999/");
  monitor_.start();
  tasks_.wait_idle();
  EXPECT_EQ(addresses(automatic_), (std::vector<std::string>{"http://10.0.0.1:9999/", "http://10.0.0.2:9999/"}));

  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.3:9999/");
  advance(29s);
  EXPECT_EQ(addresses(automatic_).size(), 2u) << "not before the interval";
  advance(1s);
  EXPECT_EQ(addresses(automatic_).size(), 3u);
}

TEST_F(RegistryMonitorTest, ExecutorsThatStopRenewingDropOutAfterNinetySeconds) {
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.1:9999/");
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.2:9999/");
  monitor_.start();
  tasks_.wait_idle();

  // 10.0.0.1 keeps its 30 s heartbeat; 10.0.0.2 went away.
  for (int i = 0; i < 3; ++i) {
    registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.1:9999/");
    advance(30s);
  }
  EXPECT_EQ(addresses(automatic_), (std::vector<std::string>{"http://10.0.0.1:9999/"}));
  EXPECT_EQ(registry_.live(90'000).size(), 1u);
  EXPECT_EQ(addresses(manual_), (std::vector<std::string>{"http://10.0.0.9:9999/"})) << "manual lists untouched";
}

TEST_F(RegistryMonitorTest, ManualGroupsKeepTheirListWhateverRegisters) {
  registry_.upsert("EXECUTOR", "manual-app", "http://10.0.0.7:9999/");
  EXPECT_EQ(monitor_.refresh_once(), 0);
  EXPECT_EQ(addresses(manual_), (std::vector<std::string>{"http://10.0.0.9:9999/"}));
}

TEST_F(RegistryMonitorTest, RefreshCountsOnlyGroupsWhoseListChanged) {
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.1:9999/");
  EXPECT_EQ(monitor_.refresh_once(), 1);
  EXPECT_EQ(monitor_.refresh_once(), 0);
}

TEST_F(RegistryMonitorTest, WakeRefreshesNowWithoutMovingTheNextRefresh) {
  monitor_.start();
  tasks_.wait_idle();
  advance(10s);
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.1:9999/");  // a new executor
  monitor_.wake();
  tasks_.wait_idle();
  EXPECT_EQ(addresses(automatic_), (std::vector<std::string>{"http://10.0.0.1:9999/"}));
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.2:9999/");
  advance(19s);
  EXPECT_EQ(addresses(automatic_).size(), 1u);
  advance(1s);  // 30 s after the start, as if there had been no wake
  EXPECT_EQ(addresses(automatic_).size(), 2u);
}

TEST_F(RegistryMonitorTest, StopCancelsTheNextRefreshAndIsIdempotent) {
  monitor_.start();
  tasks_.wait_idle();
  monitor_.stop();
  monitor_.stop();
  EXPECT_EQ(timer_.pending_timeouts(), 0u);
  registry_.upsert("EXECUTOR", "auto-app", "http://10.0.0.1:9999/");
  advance(60s);
  EXPECT_TRUE(addresses(automatic_).empty());
}

// spdlog's default logger, captured for one test and restored after it.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100)), previous_(spdlog::default_logger()) {
    sink_->set_pattern("%l %v");
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink_));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }

  // Warnings containing `text`.
  int warnings(std::string_view text) const {
    int n = 0;
    for (const auto& line : sink_->last_formatted()) {
      n += line.rfind("warning ", 0) == 0 && line.find(text) != std::string::npos ? 1 : 0;
    }
    return n;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(RegistryMonitorTest, KeepsTheLiveExecutorsClockOffsetsUntilTheyExpireOrLeave) {
  const std::vector<std::string> none;
  registry_.register_capped("EXECUTOR", "auto-app", "http://10.0.0.2:9999/", none, ClockEstimate{-40, 3}, 9, 90'000);
  registry_.register_capped("EXECUTOR", "auto-app", "http://10.0.0.1:9999/", none, ClockEstimate{7, 2}, 9, 90'000);
  registry_.register_capped("EXECUTOR", "auto-app", "http://10.0.0.3:9999/", none, std::nullopt, 9, 90'000);
  EXPECT_TRUE(monitor_.clock_offsets().empty()) << "nothing read before the first refresh";
  monitor_.refresh_once();
  using Offsets = std::vector<RegistryMonitor::ClockOffset>;
  EXPECT_EQ(monitor_.clock_offsets(), (Offsets{{"auto-app", "http://10.0.0.1:9999/", {7, 2}},
                                               {"auto-app", "http://10.0.0.2:9999/", {-40, 3}}}))
      << "by address; an executor that said none (XXL-JOB's) has none";
  registry_.remove("EXECUTOR", "auto-app", "http://10.0.0.1:9999/");
  monitor_.refresh_once();
  EXPECT_EQ(monitor_.clock_offsets(), (Offsets{{"auto-app", "http://10.0.0.2:9999/", {-40, 3}}}));
  clock_.advance(91s);
  monitor_.refresh_once();
  EXPECT_TRUE(monitor_.clock_offsets().empty()) << "expired";
}

TEST_F(RegistryMonitorTest, KnowsWhichLiveExecutorsTakeLeadDispatchFromTheirLastRegistration) {
  const std::vector<std::string> none;
  const std::string lead = "http://10.0.0.1:9999/", plain = "http://10.0.0.2:9999/", xxl = "http://10.0.0.3:9999/";
  registry_.register_capped("EXECUTOR", "auto-app", lead, none, ClockEstimate{7, 2, true}, 9, 90'000);
  registry_.register_capped("EXECUTOR", "auto-app", plain, none, ClockEstimate{7, 2, false}, 9, 90'000);
  registry_.register_capped("EXECUTOR", "auto-app", xxl, none, std::nullopt, 9, 90'000);
  EXPECT_FALSE(monitor_.takes_lead(lead)) << "nothing read before the first refresh";
  monitor_.refresh_once();
  EXPECT_TRUE(monitor_.takes_lead(lead));
  EXPECT_FALSE(monitor_.takes_lead(plain)) << "it did not say so";
  EXPECT_FALSE(monitor_.takes_lead(xxl)) << "XXL-JOB's executors never do";
  EXPECT_FALSE(monitor_.takes_lead("http://10.0.0.9:9999/"));
  // It stops saying so (its clock drifted beyond its bound): known at the next refresh.
  registry_.register_capped("EXECUTOR", "auto-app", lead, none, ClockEstimate{2'000, 2, false}, 9, 90'000);
  monitor_.refresh_once();
  EXPECT_FALSE(monitor_.takes_lead(lead));
  registry_.register_capped("EXECUTOR", "auto-app", lead, none, ClockEstimate{7, 2, true}, 9, 90'000);
  monitor_.refresh_once();
  EXPECT_TRUE(monitor_.takes_lead(lead));
  clock_.advance(91s);
  monitor_.refresh_once();
  EXPECT_FALSE(monitor_.takes_lead(lead)) << "expired";
}

TEST_F(RegistryMonitorTest, WarnsOnceWhenAnExecutorsClockIsMoreThanASecondOff) {
  CapturedLog log;
  const std::vector<std::string> none;
  const std::string address = "http://10.0.0.2:9999/";
  auto say = [&](std::int64_t offset_ms) {
    registry_.register_capped("EXECUTOR", "auto-app", address, none, ClockEstimate{offset_ms, 5}, 9, 90'000);
    monitor_.refresh_once();
  };
  say(1'000);
  EXPECT_EQ(log.warnings(address), 0) << "a second exactly is not more than a second";
  say(-1'001);
  EXPECT_EQ(log.warnings("the clock of executor auto-app at " + address + " is 1001 ms ahead of the admin's"), 1);
  say(-5'000);
  say(-4'000);
  EXPECT_EQ(log.warnings(address), 1) << "not on every heartbeat while it stays off";
  say(200);
  say(2'500);
  EXPECT_EQ(log.warnings("is 2500 ms behind the admin's"), 1) << "again after it came back";
  EXPECT_EQ(log.warnings(address), 2);
}

// A store whose database is down: the monitor logs and tries again at the next interval.
class UnavailableRegistry final : public RegistryStore {
 public:
  bool upsert(std::string_view, std::string_view, std::string_view) override { return false; }
  Registered register_capped(std::string_view, std::string_view, std::string_view, const std::vector<std::string>&,
                             const std::optional<ClockEstimate>&, std::size_t, std::int64_t) override {
    return Registered::kRenewed;
  }
  bool remove(std::string_view, std::string_view, std::string_view) override { return false; }
  std::vector<std::string> live_addresses(std::string_view, std::int64_t) override { return {}; }
  std::vector<RegistryEntry> live(std::int64_t) override { return {}; }
  int refresh(std::int64_t) override {
    ++calls;
    throw StoreUnavailable("database connection lost");
  }
  std::atomic<int> calls{0};
};

TEST(RegistryMonitorFailures, ARefreshThatFailsIsTriedAgainAtTheNextInterval) {
  testing::FakeClock clock;
  common::HierarchicalWheelTimer timer(clock, {}, {.manual = true});
  common::RecurringTasks tasks(timer, clock);
  UnavailableRegistry store;
  RegistryMonitor monitor(store, tasks, RegistryMonitor::Options{30s, 90s});
  monitor.start();
  tasks.wait_idle();
  EXPECT_EQ(store.calls.load(), 1);

  clock.advance(29s);
  timer.process_until(clock.steady_now());
  tasks.wait_idle();
  EXPECT_EQ(store.calls.load(), 1) << "no sooner than the interval";
  clock.advance(1s);
  timer.process_until(clock.steady_now());
  tasks.wait_idle();
  EXPECT_EQ(store.calls.load(), 2);
}

TEST(RegistryMonitorOptions, RejectsNonPositiveDurations) {
  testing::FakeClock clock;
  common::HierarchicalWheelTimer timer(clock, {}, {.manual = true});
  common::RecurringTasks tasks(timer, clock);
  UnavailableRegistry store;
  EXPECT_THROW(RegistryMonitor(store, tasks, RegistryMonitor::Options{0s, 90s}), std::invalid_argument);
  EXPECT_THROW(RegistryMonitor(store, tasks, RegistryMonitor::Options{30s, 0s}), std::invalid_argument);
}

}  // namespace
}  // namespace cronwheel::admin
