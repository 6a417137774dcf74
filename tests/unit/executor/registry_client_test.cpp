#include "executor/src/registry_client.h"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <mutex>

#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_admin.h"
#include "tests/support/fake_clock.h"

// Real sockets on 127.0.0.1 (the fake admin picks its port) and the executor's periodic timer on
// a fake clock, driven by hand: the tests move time past an interval themselves, and every wait
// is on a condition with a generous bound.
namespace cronwheel::executor {
namespace {

using common::protocol::RegistryParam;
using testing::FakeAdmin;
using testing::FakeClock;
using namespace std::chrono_literals;

constexpr const char* kAppName = "demo-app";
constexpr const char* kAddress = "http://127.0.0.1:9999/";

constexpr auto kInterval = 30s;

RegistryClient::Options options_for(std::vector<std::string> admins,
                                    std::chrono::milliseconds interval = kInterval) {
  RegistryClient::Options options;
  options.admin_addresses = std::move(admins);
  options.app_name = kAppName;
  options.address = kAddress;
  options.interval = interval;
  options.http.connect_timeout = 5s;
  options.http.read_timeout = 10s;
  options.http.write_timeout = 10s;
  return options;
}

RegistryParam expected_param() {
  RegistryParam param;
  param.registry_group = std::string(common::protocol::kRegistryGroupExecutor);
  param.registry_key = kAppName;
  param.registry_value = kAddress;
  return param;
}

bool has_registrations(const FakeAdmin& admin, std::size_t count) {
  return admin.wait_until(
      [count](const FakeAdmin& a) { return a.registrations().size() >= count; });
}

// The recurring tasks the client's heartbeat runs on, with a manual timer.
struct Periodic {
  FakeClock clock;
  common::HierarchicalWheelTimer timer{clock, {}, {.manual = true}};
  common::RecurringTasks tasks{timer, clock};

  // Once the run under way (if any) is over, moves time by `d` and hands over what is due.
  void advance(std::chrono::milliseconds d) {
    tasks.wait_idle();
    clock.advance(d);
    timer.process_until(clock.steady_now());
  }
};

// Once the heartbeat's call is over, moves time to its next interval.
void next_interval(Periodic& periodic) { periodic.advance(kInterval); }

TEST(RegistryClientTest, RegistersAtStartWithTheAppNameAddressAndToken) {
  FakeAdmin admin(FakeAdmin::Options{.access_token = "s3cret"});
  auto options = options_for({admin.url()});
  options.access_token = "s3cret";
  Periodic periodic;
  RegistryClient client(options, periodic.tasks);
  client.start();

  ASSERT_TRUE(has_registrations(admin, 1));
  EXPECT_EQ(admin.registrations()[0], expected_param());
  EXPECT_EQ(admin.rejected_tokens(), 0);
}

TEST(RegistryClientTest, EachRegistrationSaysTheHandlersRunHereAsTheyAreThen) {
  FakeAdmin admin;
  auto options = options_for({admin.url()});
  std::vector<std::string> handlers{"echo"};
  std::mutex mutex;
  options.handler_names = [&] {
    std::lock_guard lock(mutex);
    return handlers;
  };
  Periodic periodic;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));
  EXPECT_EQ(admin.registrations()[0].handlers, std::vector<std::string>{"echo"});
  {
    std::lock_guard lock(mutex);
    handlers.push_back("reportHandler");
  }
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 2));
  EXPECT_EQ(admin.registrations()[1].handlers, (std::vector<std::string>{"echo", "reportHandler"}));
  client.stop();
  ASSERT_EQ(admin.removals().size(), 1u);
  EXPECT_TRUE(admin.removals()[0].handlers.empty()) << "a removal says nothing of handlers";
}

TEST(RegistryClientTest, AWrongTokenIsRefusedAndRetried) {
  FakeAdmin admin(FakeAdmin::Options{.access_token = "right"});
  auto options = options_for({admin.url()});
  options.access_token = "wrong";
  Periodic periodic;
  RegistryClient client(options, periodic.tasks);
  client.start();

  ASSERT_TRUE(admin.wait_until([](const FakeAdmin& a) { return a.rejected_tokens() >= 1; }));
  next_interval(periodic);
  EXPECT_TRUE(admin.wait_until([](const FakeAdmin& a) { return a.rejected_tokens() >= 2; }));
  EXPECT_TRUE(admin.registrations().empty());
}

TEST(RegistryClientTest, RegistersAgainEveryInterval) {
  FakeAdmin admin;
  Periodic periodic;
  RegistryClient client(options_for({admin.url()}), periodic.tasks);
  client.start();

  ASSERT_TRUE(has_registrations(admin, 1));
  periodic.advance(kInterval - 1s);
  periodic.tasks.wait_idle();
  EXPECT_EQ(admin.registrations().size(), 1U);  // not before the interval
  periodic.advance(1s);
  ASSERT_TRUE(has_registrations(admin, 2));
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 3));
  for (const auto& param : admin.registrations()) EXPECT_EQ(param, expected_param());
}

// The executor's clock stands still (a FakeClock) during each exchange, so an admin 500 ms ahead
// that answers at once gives offset 500, delay 0.
std::string admin_ahead(const Periodic& periodic, std::int64_t ahead_ms) {
  const auto at = std::to_string(periodic.clock.now_ms() + ahead_ms);
  return at + "," + at;
}

TEST(RegistryClientTest, RegistrationsAfterTheFirstMeasuredOneCarryTheClockEstimate) {
  FakeAdmin admin;
  Periodic periodic;
  admin.set_clock_header(admin_ahead(periodic, 500));
  auto options = options_for({admin.url()});
  options.clock = &periodic.clock;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));
  EXPECT_EQ(admin.registrations()[0], expected_param()) << "nothing measured before the first answer";

  next_interval(periodic);  // the admin's header is now 30 s behind the executor's clock: a
                            // sample of offset -29.5 s, delay 0, as good as the first and newer
  ASSERT_TRUE(has_registrations(admin, 2));
  EXPECT_EQ(admin.registrations()[1].clock_offset_ms, 500);
  EXPECT_EQ(admin.registrations()[1].clock_delay_ms, 0);
  admin.set_clock_header(admin_ahead(periodic, 30'000 + 250));
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 3));
  EXPECT_EQ(admin.registrations()[2].clock_offset_ms, -29'500);
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 4));
  EXPECT_EQ(admin.registrations()[3].clock_offset_ms, 250) << "the latest of equal delays";
  client.stop();
  ASSERT_EQ(admin.removals().size(), 1u);
  EXPECT_EQ(admin.removals()[0], expected_param()) << "a removal carries no estimate";
}

TEST(RegistryClientTest, ASlowFirstExchangeIsMeasuredAgainAtOnce) {
  FakeAdmin admin;
  Periodic periodic;
  admin.set_clock_header(admin_ahead(periodic, 0));
  // The first exchange takes 40 ms on the executor's clock (as one opening its connection may);
  // the next ones are answered at once.
  std::atomic<int> exchanges{0};
  admin.set_on_registration([&] {
    if (exchanges++ == 0) periodic.clock.advance(40ms);
  });
  auto options = options_for({admin.url()});
  options.clock = &periodic.clock;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 2));
  periodic.tasks.wait_idle();
  EXPECT_EQ(admin.registrations().size(), 2u) << "measured again once, then good enough";
  ASSERT_TRUE(client.clock_estimate());
  EXPECT_EQ(client.clock_estimate()->delay_ms, 0);
  EXPECT_EQ(admin.registrations()[1].clock_delay_ms, 40) << "the second carries the first's estimate";

  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 3));
  periodic.tasks.wait_idle();
  EXPECT_EQ(admin.registrations().size(), 3u) << "a heartbeat with a good estimate sends one";
}

TEST(RegistryClientTest, SlowExchangesAreMeasuredAgainThreeMoreTimesAtMost) {
  FakeAdmin admin;
  Periodic periodic;
  admin.set_clock_header(admin_ahead(periodic, 0));
  admin.set_on_registration([&periodic] { periodic.clock.advance(40ms); });
  auto options = options_for({admin.url()});
  options.clock = &periodic.clock;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 4));
  periodic.tasks.wait_idle();
  EXPECT_EQ(admin.registrations().size(), 4u);
  ASSERT_TRUE(client.clock_estimate());
  EXPECT_EQ(client.clock_estimate()->delay_ms, 40);
}

TEST(RegistryClientTest, RegistrationsOfferLeadDispatchOnlyWhileTheEstimateIsKnownAndWithinBound) {
  FakeAdmin admin;
  Periodic periodic;
  admin.set_clock_header(admin_ahead(periodic, 500));
  auto options = options_for({admin.url()});
  options.clock = &periodic.clock;
  options.lead_dispatch = true;
  options.max_clock_offset = 1000ms;
  RegistryClient client(options, periodic.tasks);
  EXPECT_FALSE(client.clock_estimate());
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));
  EXPECT_FALSE(admin.registrations()[0].lead_dispatch) << "the admin's clock is not measured yet";

  next_interval(periodic);  // the same header is now 29.5 s behind: the next estimate is beyond
  ASSERT_TRUE(has_registrations(admin, 2));
  EXPECT_TRUE(admin.registrations()[1].lead_dispatch) << "offset 500 ms, within 1000 ms";
  EXPECT_EQ(admin.registrations()[1].clock_offset_ms, 500);
  periodic.tasks.wait_idle();
  ASSERT_TRUE(client.clock_estimate());
  EXPECT_EQ(client.clock_estimate()->offset_ms, -29'500);

  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 3));
  EXPECT_FALSE(admin.registrations()[2].lead_dispatch) << "offset -29.5 s, beyond 1000 ms";
  EXPECT_EQ(admin.registrations()[2].clock_offset_ms, -29'500);
}

TEST(RegistryClientTest, RegistrationsNeverOfferLeadDispatchWhenItIsOff) {
  FakeAdmin admin;
  Periodic periodic;
  admin.set_clock_header(admin_ahead(periodic, 0));
  auto options = options_for({admin.url()});
  options.clock = &periodic.clock;
  options.lead_dispatch = false;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 2));
  EXPECT_EQ(admin.registrations()[1].clock_offset_ms, 0);
  EXPECT_FALSE(admin.registrations()[1].lead_dispatch);
}

TEST(RegistryClientTest, AnOffsetBeyondADayIsSentAsADay) {
  FakeAdmin admin;
  Periodic periodic;
  admin.set_clock_header(admin_ahead(periodic, -3LL * 24 * 3600 * 1000));
  auto options = options_for({admin.url()});
  options.clock = &periodic.clock;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 2));
  EXPECT_EQ(admin.registrations()[1].clock_offset_ms, -common::protocol::kMaxClockOffsetMs);
}

TEST(RegistryClientTest, AnAnswerWithoutOrWithAMalformedClockHeaderIsNoSample) {
  for (const std::string header : {"", "soon", "1,2,3", "-5,7"}) {
    FakeAdmin admin;
    admin.set_clock_header(header);
    Periodic periodic;
    auto options = options_for({admin.url()});
    options.clock = &periodic.clock;
    RegistryClient client(options, periodic.tasks);
    client.start();
    ASSERT_TRUE(has_registrations(admin, 1));
    next_interval(periodic);
    ASSERT_TRUE(has_registrations(admin, 2));
    EXPECT_EQ(admin.registrations()[1], expected_param()) << "'" << header << "'";
  }
}

TEST(RegistryClientTest, TheEstimateIsOfTheAdminThatLastAccepted) {
  FakeAdmin first;
  FakeAdmin second;
  Periodic periodic;
  first.set_clock_header(admin_ahead(periodic, 500));
  auto options = options_for({first.url(), second.url()});
  options.clock = &periodic.clock;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(first, 1));
  first.set_refusing(true);
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(second, 1));
  EXPECT_EQ(second.registrations()[0].clock_offset_ms, 500) << "measured against the first, sent before the switch";
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(second, 2));
  EXPECT_EQ(second.registrations()[1], expected_param()) << "the second sends no clock: the first's samples are gone";
}

TEST(RegistryClientTest, RegistersWithTheFirstAdminOnlyWhileItAccepts) {
  FakeAdmin first;
  FakeAdmin second;
  Periodic periodic;
  RegistryClient client(options_for({first.url(), second.url()}), periodic.tasks);
  client.start();

  ASSERT_TRUE(has_registrations(first, 1));
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(first, 2));
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(first, 3));
  client.stop();
  EXPECT_TRUE(second.registrations().empty());
  EXPECT_TRUE(second.removals().empty());
}

TEST(RegistryClientTest, FailsOverToTheSecondAdminWhenTheFirstIsDown) {
  FakeAdmin first;
  FakeAdmin second;
  first.stop();
  Periodic periodic;
  RegistryClient client(options_for({first.url(), second.url()}), periodic.tasks);
  client.start();

  ASSERT_TRUE(has_registrations(second, 1));
  EXPECT_EQ(second.registrations()[0], expected_param());
}

TEST(RegistryClientTest, FailsOverToTheSecondAdminWhenTheFirstRefuses) {
  FakeAdmin first;
  FakeAdmin second;
  first.set_refusing(true);
  Periodic periodic;
  RegistryClient client(options_for({first.url(), second.url()}), periodic.tasks);
  client.start();

  ASSERT_TRUE(has_registrations(second, 1));
  EXPECT_GE(first.refused_calls(), 1);  // asked first
  EXPECT_TRUE(first.registrations().empty());
}

TEST(RegistryClientTest, RetriesAtTheNextIntervalWhenNoAdminAccepts) {
  FakeAdmin admin;
  admin.set_refusing(true);
  Periodic periodic;
  RegistryClient client(options_for({admin.url()}), periodic.tasks);
  client.start();

  ASSERT_TRUE(admin.wait_until([](const FakeAdmin& a) { return a.refused_calls() >= 1; }));
  admin.set_refusing(false);
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 1));
}

TEST(RegistryClientTest, KeepsRegisteringAcrossAnAdminRestart) {
  FakeAdmin admin;
  Periodic periodic;
  RegistryClient client(options_for({admin.url()}), periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));

  admin.stop();
  next_interval(periodic);  // refused: nobody listens
  periodic.tasks.wait_idle();
  admin.start();
  EXPECT_EQ(admin.registrations().size(), 1U);
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 2));
  next_interval(periodic);
  ASSERT_TRUE(has_registrations(admin, 3));
}

TEST(RegistryClientTest, StopRemovesTheRegistration) {
  FakeAdmin admin(FakeAdmin::Options{.access_token = "s3cret"});
  auto options = options_for({admin.url()});
  options.access_token = "s3cret";
  Periodic periodic;
  RegistryClient client(options, periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));

  client.stop();
  // Done when stop() returns, and nothing is registered after it.
  ASSERT_EQ(admin.removals().size(), 1U);
  EXPECT_EQ(admin.removals()[0], expected_param());
  auto registrations = admin.registrations().size();
  client.stop();  // idempotent
  EXPECT_EQ(admin.removals().size(), 1U);
  EXPECT_EQ(admin.registrations().size(), registrations);
  EXPECT_EQ(admin.rejected_tokens(), 0);
}

TEST(RegistryClientTest, RemovalFailsOverToTheSecondAdmin) {
  FakeAdmin first;
  FakeAdmin second;
  Periodic periodic;
  RegistryClient client(options_for({first.url(), second.url()}), periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(first, 1));

  first.set_refusing(true);
  client.stop();
  EXPECT_TRUE(first.removals().empty());
  ASSERT_EQ(second.removals().size(), 1U);
  EXPECT_EQ(second.removals()[0], expected_param());
}

TEST(RegistryClientTest, StopInterruptsTheWaitForTheNextInterval) {
  FakeAdmin admin;
  Periodic periodic;
  RegistryClient client(options_for({admin.url()}, 1h), periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));

  auto began = std::chrono::steady_clock::now();
  client.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 10s);  // not an hour
  EXPECT_EQ(admin.removals().size(), 1U);
}

TEST(RegistryClientTest, StopWithoutStartSendsNothing) {
  FakeAdmin admin;
  {
    Periodic periodic;
    RegistryClient client(options_for({admin.url()}), periodic.tasks);
    client.stop();
  }
  EXPECT_TRUE(admin.registrations().empty());
  EXPECT_TRUE(admin.removals().empty());
}

TEST(RegistryClientTest, StopWithEveryAdminDownReturns) {
  FakeAdmin admin;
  Periodic periodic;
  RegistryClient client(options_for({admin.url()}), periodic.tasks);
  client.start();
  ASSERT_TRUE(has_registrations(admin, 1));
  admin.stop();

  auto began = std::chrono::steady_clock::now();
  client.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 10s);
  EXPECT_TRUE(admin.removals().empty());
}

TEST(RegistryClientTest, RejectsOptionsThatCannotWork) {
  Periodic periodic;
  EXPECT_THROW(RegistryClient(options_for({}), periodic.tasks), std::invalid_argument);
  EXPECT_THROW(RegistryClient(options_for({"not a url"}), periodic.tasks), std::invalid_argument);
  EXPECT_THROW(RegistryClient(options_for({"http://127.0.0.1:1/"}, 0ms), periodic.tasks),
               std::invalid_argument);
}

TEST(RegistryClientTest, StartTwiceOrAfterStopThrows) {
  Periodic periodic;
  RegistryClient client(options_for({"http://127.0.0.1:1/"}), periodic.tasks);
  client.start();
  EXPECT_THROW(client.start(), std::logic_error);
  client.stop();
  EXPECT_THROW(client.start(), std::logic_error);
}

}  // namespace
}  // namespace cronwheel::executor
