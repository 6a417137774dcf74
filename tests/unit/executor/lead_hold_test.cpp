// LeadHold alone (fake clock, a manual timer driven by hand, the dispatcher replaced by hooks that
// record what they are given), with a real JobDispatcher for what happens at the instant on a
// busy job, and the /lead, /leadCancel, /log and /run routes on a real HTTP server. No sleeps.
//
// A process that dies leaves its lead journal as it was at that moment: the tests copy a live
// hold's file under another process's name, which nobody holds a lock on, as such an orphan.
#include "executor/src/lead_hold.h"

#include <chrono>
#include <functional>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "executor/src/executor_endpoints.h"
#include "executor/src/job_dispatcher.h"
#include "executor/src/journal_file.h"
#include "executor/src/run_log.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/executor/job_test_support.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using common::protocol::HandleCallbackParam;
using common::protocol::kFailCode;
using common::protocol::kMaxLeadAheadMs;
using common::protocol::LeadAnswer;
using common::protocol::LeadCancelAnswer;
using common::protocol::LeadCancelParam;
using common::protocol::LeadFire;
using common::protocol::LeadRefusal;
using common::protocol::LeadRequest;
using common::protocol::ReturnT;
using common::protocol::TriggerParam;
using testing::FakeClock;
using testing::TempDir;

constexpr std::int64_t kStartMs = 1'700'000'000'000;

TriggerParam bean(std::int64_t log_id, std::string handler = "echo", std::int32_t job_id = 1,
                  std::string strategy = "SERIAL_EXECUTION") {
  TriggerParam t;
  t.job_id = job_id;
  t.executor_handler = std::move(handler);
  t.executor_block_strategy = std::move(strategy);
  t.log_id = log_id;
  t.log_date_time = kStartMs;
  t.glue_type = "BEAN";
  t.glue_updatetime = kStartMs;
  t.broadcast_total = 1;
  return t;
}

LeadFire fire(std::int64_t fire_at, TriggerParam trigger) { return LeadFire{fire_at, std::move(trigger)}; }

LeadRequest request(std::int64_t admin_time, std::vector<LeadFire> fires) {
  return LeadRequest{admin_time, std::move(fires)};
}

std::vector<std::int64_t> sorted(std::vector<std::int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<fs::path> lead_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with(LeadJournal::kFilePrefix)) files.push_back(entry.path());
  }
  return files;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class LeadHoldTest : public ::testing::Test {
 protected:
  LeadHoldOptions options() const {
    LeadHoldOptions o;
    o.journal_dir = dir_.path();
    o.max_clock_offset = 1000ms;
    o.max_held_fires = max_held_fires_;
    return o;
  }

  LeadHoldHooks hooks() {
    LeadHoldHooks h;
    h.clock_estimate = [this] {
      std::lock_guard lock(mutex_);
      return estimate_;
    };
    h.check = [](const TriggerParam& t) -> std::optional<std::string> {
      if (t.executor_handler == "missing") return "job handler [missing] not found.";
      return std::nullopt;
    };
    h.received = [this](const TriggerParam& t) {
      if (on_received_) on_received_();
      std::lock_guard lock(mutex_);
      return received_.contains(t.log_id);
    };
    h.run = [this](const std::vector<TriggerParam>& triggers) {
      std::vector<ReturnT<std::string>> answers;
      for (const auto& t : triggers) {
        if (on_run_) on_run_(t);
        std::lock_guard lock(mutex_);
        runs_.emplace_back(t.log_id, clock_.now_ms());
        answers.push_back(run_answer_);
      }
      return answers;
    };
    h.report = [this](HandleCallbackParam r) {
      std::lock_guard lock(mutex_);
      reports_.push_back(std::move(r));
    };
    return h;
  }

  std::unique_ptr<LeadHold> make_hold() {
    return std::make_unique<LeadHold>(options(), hooks(), timer_, clock_);
  }

  void set_estimate(std::optional<ClockSample> estimate) {
    std::lock_guard lock(mutex_);
    estimate_ = estimate;
  }
  // The admin's clock as the estimate has it.
  std::int64_t admin_now() const { return clock_.now_ms() + estimate_.value_or(ClockSample{}).offset_ms; }

  // Moves time by `d` and runs what the timer has due.
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
  }

  // log id → the executor's wall time it was started at.
  std::map<std::int64_t, std::int64_t> runs() const {
    std::lock_guard lock(mutex_);
    std::map<std::int64_t, std::int64_t> out;
    for (const auto& [id, at] : runs_) out[id] = at;
    return out;
  }
  std::size_t run_count() const {
    std::lock_guard lock(mutex_);
    return runs_.size();
  }
  std::vector<HandleCallbackParam> reports() const {
    std::lock_guard lock(mutex_);
    return reports_;
  }
  std::vector<std::int64_t> reported_ids() const {
    std::vector<std::int64_t> ids;
    for (const auto& r : reports()) ids.push_back(r.log_id);
    return sorted(ids);
  }

  TempDir dir_;
  FakeClock clock_{kStartMs};
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};  // 1 ms tick
  std::size_t max_held_fires_ = 100'000;
  mutable std::mutex mutex_;
  std::optional<ClockSample> estimate_ = ClockSample{0, 0};
  std::set<std::int64_t> received_;
  ReturnT<std::string> run_answer_ = ReturnT<std::string>::success();
  std::function<void(const TriggerParam&)> on_run_;  // called as a run is handed over
  std::function<void()> on_received_;  // called as hold() asks whether a fire was received
  std::vector<std::pair<std::int64_t, std::int64_t>> runs_;
  std::vector<HandleCallbackParam> reports_;
};

// ---------------------------------------------------------------------------------------------
// The instant

TEST_F(LeadHoldTest, StartsAFireAtItsInstantCorrectedByAPositiveOffsetAndHalfTheDelayNeverBefore) {
  set_estimate(ClockSample{200, 10});  // the admin is 200 ms ahead, known to ±5 ms
  auto hold = make_hold();
  const std::int64_t fire_at = admin_now() + 1000;  // 1 s ahead on the admin's clock
  auto answer = hold->hold(request(admin_now(), {fire(fire_at, bean(1))}));
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  EXPECT_EQ(answer.content->accepted, std::vector<std::int64_t>{1});
  EXPECT_TRUE(hold->holds(1));

  // fireAt - offset + ceil(10 / 2) = now + 1000 + 5.
  advance(1004ms);
  EXPECT_EQ(run_count(), 0u) << "started before its instant";
  advance(1ms);
  ASSERT_EQ(runs().size(), 1u);
  EXPECT_EQ(runs().at(1), kStartMs + 1005);
  EXPECT_FALSE(hold->holds(1));
}

TEST_F(LeadHoldTest, StartsAFireAtItsInstantCorrectedByANegativeOffsetRoundingHalfAnOddDelayUp) {
  set_estimate(ClockSample{-300, 7});  // the admin is 300 ms behind, known to ±3.5 ms
  auto hold = make_hold();
  const std::int64_t fire_at = admin_now() + 500;
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(fire_at, bean(1))})).is_success());
  advance(503ms);
  EXPECT_EQ(run_count(), 0u) << "a half millisecond of doubt must make it later, not earlier";
  advance(1ms);
  ASSERT_EQ(runs().size(), 1u);
  EXPECT_EQ(runs().at(1), kStartMs + 504);
}

TEST_F(LeadHoldTest, AFireStartsAtItsInstantHoweverLongHoldingTheRequestTook) {
  auto hold = make_hold();
  const std::int64_t at = admin_now() + 100;
  // Each fire takes 5 ms to look at (a large request on a busy machine): the instants do not move.
  on_received_ = [this] { clock_.advance(5ms); };
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(at, bean(1)), fire(at, bean(2)), fire(at + 20, bean(3))}))
                  .is_success());
  on_received_ = nullptr;
  advance(84ms);  // 15 ms went by in hold(): now at +99
  EXPECT_EQ(run_count(), 0u);
  advance(1ms);
  ASSERT_EQ(run_count(), 2u);
  EXPECT_EQ(runs().at(1), kStartMs + 100);
  advance(20ms);
  ASSERT_EQ(run_count(), 3u);
  EXPECT_EQ(runs().at(3), kStartMs + 120);
}

TEST_F(LeadHoldTest, AFireDueAlreadyStartsAtOnce) {
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() - 400, bean(1))})).is_success());
  advance(0ms);
  ASSERT_EQ(runs().size(), 1u);
  EXPECT_EQ(runs().at(1), kStartMs);
}

TEST_F(LeadHoldTest, FiresOfOneInstantShareOneTimeoutAndStartTogether) {
  auto hold = make_hold();
  const std::int64_t at = admin_now() + 300;
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(at, bean(1)), fire(at, bean(2)), fire(at, bean(3)),
                                               fire(at + 1, bean(4))}))
                  .is_success());
  EXPECT_EQ(timer_.pending_timeouts(), 2u);
  advance(300ms);
  EXPECT_EQ(run_count(), 3u);
  advance(1ms);
  EXPECT_EQ(run_count(), 4u);
}

// ---------------------------------------------------------------------------------------------
// Refusals

TEST_F(LeadHoldTest, RefusesTheWholeRequestWhileTheAdminsClockIsNotMeasured) {
  set_estimate(std::nullopt);
  auto hold = make_hold();
  auto answer = hold->hold(request(kStartMs, {fire(kStartMs + 100, bean(1))}));
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg, "lead dispatch refused: this executor has not measured the admin's clock yet");
  EXPECT_FALSE(hold->holds(1));
  EXPECT_EQ(timer_.pending_timeouts(), 0u);
}

TEST_F(LeadHoldTest, RefusesTheWholeRequestWhenTheOffsetIsBeyondTheBoundNamingBothNumbers) {
  set_estimate(ClockSample{1500, 2});
  auto hold = make_hold();
  auto answer = hold->hold(request(admin_now(), {fire(admin_now() + 100, bean(1))}));
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_NE(answer.msg.find("1500"), std::string::npos) << answer.msg;
  EXPECT_NE(answer.msg.find("1000"), std::string::npos) << answer.msg;
  EXPECT_NE(answer.msg.find("max-clock-offset"), std::string::npos) << answer.msg;
  EXPECT_EQ(hold->held_count(), 0u);
}

TEST_F(LeadHoldTest, RefusesTheWholeRequestWhenItsAdminTimeDisagreesWithTheEstimate) {
  set_estimate(ClockSample{100, 2});
  auto hold = make_hold();
  // Sent 1.5 s ago by the admin's clock: delayed that long, or a clock stepped since.
  auto answer = hold->hold(request(admin_now() - 1500, {fire(admin_now() + 100, bean(1))}));
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_NE(answer.msg.find("adminTime"), std::string::npos) << answer.msg;
  EXPECT_EQ(hold->held_count(), 0u);
  // Within the bound, it is taken.
  EXPECT_TRUE(hold->hold(request(admin_now() - 900, {fire(admin_now() + 100, bean(1))})).is_success());
}

TEST_F(LeadHoldTest, RefusesSingleFiresTooFarAheadUnknownOrWithABadLogDateTimeAndHoldsTheRest) {
  auto hold = make_hold();
  auto bad_time = bean(4);
  bad_time.log_date_time = 100;  // 1970: would name a log directory of its own
  auto answer = hold->hold(request(admin_now(), {fire(admin_now() + kMaxLeadAheadMs + 1, bean(1)),
                                                 fire(admin_now() + kMaxLeadAheadMs, bean(2)),
                                                 fire(admin_now() + 10, bean(3, "missing")),
                                                 fire(admin_now() + 10, bad_time)}));
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  EXPECT_EQ(answer.content->accepted, std::vector<std::int64_t>{2});
  ASSERT_EQ(answer.content->refused.size(), 3u);
  std::map<std::int64_t, std::string> refused;
  for (const auto& r : answer.content->refused) refused[r.log_id] = r.msg;
  EXPECT_NE(refused[1].find("ahead"), std::string::npos) << refused[1];
  EXPECT_EQ(refused[3], "job handler [missing] not found.");
  EXPECT_NE(refused[4].find("logDateTime"), std::string::npos) << refused[4];
  EXPECT_EQ(hold->held_count(), 1u);
}

TEST_F(LeadHoldTest, RefusesTimesThatAreNoTimesWithoutOverflowing) {
  auto hold = make_hold();
  auto whole = hold->hold(request(INT64_MIN, {fire(admin_now() + 10, bean(1))}));
  EXPECT_EQ(whole.code, kFailCode);
  EXPECT_NE(whole.msg.find("adminTime"), std::string::npos) << whole.msg;
  auto answer = hold->hold(request(admin_now(), {fire(INT64_MIN, bean(2)), fire(INT64_MAX, bean(3))}));
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  EXPECT_TRUE(answer.content->accepted.empty());
  ASSERT_EQ(answer.content->refused.size(), 2u);
  EXPECT_NE(answer.content->refused[0].msg.find("fireAt"), std::string::npos);
  EXPECT_EQ(hold->held_count(), 0u);
}

TEST_F(LeadHoldTest, RefusesFiresBeyondMaxHeldFiresNamingTheLimitAndTheOption) {
  max_held_fires_ = 2;
  auto hold = make_hold();
  auto answer = hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(1)), fire(admin_now() + 10, bean(2)),
                                                 fire(admin_now() + 10, bean(3))}));
  ASSERT_TRUE(answer.is_success());
  EXPECT_EQ(answer.content->accepted, (std::vector<std::int64_t>{1, 2}));
  ASSERT_EQ(answer.content->refused.size(), 1u);
  EXPECT_EQ(answer.content->refused[0].log_id, 3);
  EXPECT_NE(answer.content->refused[0].msg.find("2 fires"), std::string::npos) << answer.content->refused[0].msg;
  EXPECT_NE(answer.content->refused[0].msg.find("max-held-fires"), std::string::npos);
  advance(10ms);  // both start: there is room again
  EXPECT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(3))})).content->refused.empty());
}

// ---------------------------------------------------------------------------------------------
// Resends and cancel

TEST_F(LeadHoldTest, ResendingTheSameFiresHoldsNothingTwiceAndRunsEachOnce) {
  auto hold = make_hold();
  const auto req = request(admin_now(), {fire(admin_now() + 100, bean(1)), fire(admin_now() + 200, bean(2))});
  ASSERT_EQ(hold->hold(req).content->accepted, (std::vector<std::int64_t>{1, 2}));
  ASSERT_EQ(hold->hold(req).content->accepted, (std::vector<std::int64_t>{1, 2})) << "a resend is accepted";
  EXPECT_EQ(hold->held_count(), 2u);
  EXPECT_EQ(timer_.pending_timeouts(), 2u);
  advance(150ms);
  ASSERT_EQ(hold->hold(req).content->accepted, (std::vector<std::int64_t>{1, 2})) << "also once one started";
  advance(100ms);
  EXPECT_EQ(run_count(), 2u);
  advance(500ms);
  EXPECT_EQ(run_count(), 2u);
  EXPECT_TRUE(reports().empty());
}

TEST_F(LeadHoldTest, AFireThisProcessReceivedOtherwiseIsAcceptedAndNotHeld) {
  received_.insert(7);  // came by /run already
  auto hold = make_hold();
  auto answer = hold->hold(request(admin_now(), {fire(admin_now() + 100, bean(7))}));
  EXPECT_EQ(answer.content->accepted, std::vector<std::int64_t>{7});
  EXPECT_FALSE(hold->holds(7));
  advance(200ms);
  EXPECT_EQ(run_count(), 0u);
}

TEST_F(LeadHoldTest, CancelSaysCancelledStartedOrUnknownAndACancelledFireNeverRuns) {
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 100, bean(1)), fire(admin_now() + 500, bean(2)),
                                               fire(admin_now() + 500, bean(3))}))
                  .is_success());
  advance(100ms);  // 1 starts
  auto answer = hold->cancel(LeadCancelParam{{1, 2, 99}, "job stopped"});
  EXPECT_EQ(answer.cancelled, std::vector<std::int64_t>{2});
  EXPECT_EQ(answer.started, std::vector<std::int64_t>{1});
  EXPECT_EQ(answer.unknown, std::vector<std::int64_t>{99});
  EXPECT_FALSE(hold->holds(2));
  EXPECT_EQ(hold->cancel(LeadCancelParam{{2}, ""}).unknown, std::vector<std::int64_t>{2}) << "cancelled once";
  advance(1000ms);
  auto started = runs();
  EXPECT_TRUE(started.contains(1));
  EXPECT_FALSE(started.contains(2)) << "a cancelled fire ran";
  EXPECT_TRUE(started.contains(3));
  hold->stop();
  EXPECT_TRUE(reports().empty()) << "nothing is reported of a cancelled fire";
}

TEST_F(LeadHoldTest, CancellingEveryFireOfAnInstantCancelsItsTimeout) {
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 100, bean(1))})).is_success());
  EXPECT_EQ(timer_.pending_timeouts(), 1u);
  EXPECT_EQ(hold->cancel(LeadCancelParam{{1}, ""}).cancelled, std::vector<std::int64_t>{1});
  EXPECT_EQ(timer_.pending_timeouts(), 0u);
}

// ---------------------------------------------------------------------------------------------
// At the instant

TEST_F(LeadHoldTest, AFireBeingHandedToTheDispatcherStillCountsAsHeldSoLogNeverSaysUnknown) {
  auto hold = make_hold();
  std::vector<bool> held_while_handed;
  on_run_ = [&](const TriggerParam& t) { held_while_handed.push_back(hold->holds(t.log_id)); };
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(1))})).is_success());
  advance(10ms);
  EXPECT_EQ(held_while_handed, std::vector<bool>{true});
  EXPECT_FALSE(hold->holds(1)) << "the dispatcher has it now";
}

TEST_F(LeadHoldTest, ARunThatThrowsAtTheInstantIsReportedFailed) {
  on_run_ = [](const TriggerParam&) { throw std::runtime_error("out of threads"); };
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(1))})).is_success());
  advance(10ms);
  ASSERT_EQ(reports().size(), 1u);
  EXPECT_EQ(reports()[0].handle_code, kFailCode);
  EXPECT_NE(reports()[0].handle_msg.find("out of threads"), std::string::npos);
}

TEST_F(LeadHoldTest, ARefusalAtTheInstantIsReportedAsAFailedResultWithTheReason) {
  run_answer_ = ReturnT<std::string>::fail("job 1 has 64 runs queued already (max-queued-runs-per-job); run refused");
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(1))})).is_success());
  advance(10ms);
  ASSERT_EQ(reports().size(), 1u);
  const auto r = reports()[0];
  EXPECT_EQ(r.log_id, 1);
  EXPECT_EQ(r.log_date_time, kStartMs);
  EXPECT_EQ(r.handle_code, kFailCode);
  EXPECT_EQ(r.handle_msg, run_answer_.msg);
  EXPECT_FALSE(r.not_started) << "it was delivered: a failed run, not a fire to send again";
}

TEST_F(LeadHoldTest, ADiscardLaterFireWhoseJobIsBusyAtTheInstantIsReportedFailedWithTheReason) {
  test::Signals signals;
  auto handlers = std::make_shared<HandlerRegistry>();
  handlers->set("block", [&signals](JobContext& ctx) {
    signals.started(ctx.log_id());
    signals.wait_release(ctx.stop_token());
  });
  std::mutex results_mutex;
  std::vector<HandleCallbackParam> results;
  auto report = [&](HandleCallbackParam r) {
    std::lock_guard lock(results_mutex);
    results.push_back(std::move(r));
  };
  DispatcherHooks dispatcher_hooks;
  dispatcher_hooks.open_log = [](const TriggerParam&) -> std::unique_ptr<RunLogWriter> {
    struct Discard final : RunLogWriter {
      void append(std::string_view) override {}
    };
    return std::make_unique<Discard>();
  };
  dispatcher_hooks.finish_log = [](const TriggerParam&) {};
  dispatcher_hooks.report = report;
  JobDispatcher dispatcher({}, std::move(dispatcher_hooks), handlers, clock_);

  LeadHoldHooks h = hooks();
  h.check = [&dispatcher](const TriggerParam& t) { return dispatcher.check(t); };
  h.run = [&dispatcher](const std::vector<TriggerParam>& t) { return dispatcher.run_all(t); };
  h.report = report;
  LeadHold hold(options(), std::move(h), timer_, clock_);

  ASSERT_TRUE(dispatcher.run(bean(1, "block", 7, "DISCARD_LATER")).is_success());
  ASSERT_TRUE(signals.wait_started(1));
  ASSERT_TRUE(hold.hold(request(admin_now(), {fire(admin_now() + 50, bean(2, "block", 7, "DISCARD_LATER"))}))
                  .content->accepted.size() == 1);
  advance(50ms);
  {
    std::lock_guard lock(results_mutex);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].log_id, 2);
    EXPECT_EQ(results[0].handle_code, kFailCode);
    EXPECT_EQ(results[0].handle_msg, "block strategy effect：Discard Later");
  }
  hold.stop();
  signals.release();
  dispatcher.stop(test::kBound);
}

// ---------------------------------------------------------------------------------------------
// Stop, restart and the journal

TEST_F(LeadHoldTest, StopReportsEveryHeldFireNotStartedAndTheJournalGoes) {
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(1)), fire(admin_now() + 5000, bean(2)),
                                               fire(admin_now() + 9000, bean(3))}))
                  .is_success());
  advance(10ms);
  hold->stop();
  EXPECT_EQ(reported_ids(), (std::vector<std::int64_t>{2, 3}));
  for (const auto& r : reports()) {
    EXPECT_EQ(r.handle_code, kFailCode);
    EXPECT_EQ(r.handle_msg, "not started: executor stopping before the fire's instant");
    EXPECT_EQ(r.not_started, "executor stopping before the fire's instant");
    EXPECT_EQ(r.log_date_time, kStartMs);
  }
  EXPECT_EQ(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(4))})).code, kFailCode);
  advance(10'000ms);
  EXPECT_EQ(run_count(), 1u);
  EXPECT_TRUE(lead_files(dir_.path()).empty()) << "a clean stop leaves no journal";
}

TEST_F(LeadHoldTest, TheJournalIsEmptiedWhenNothingIsHeld) {
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(1))})).is_success());
  auto files = lead_files(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_GT(fs::file_size(files[0]), 0u) << "written before hold() returned";
  advance(10ms);
  EXPECT_EQ(fs::file_size(files[0]), 0u);
}

TEST_F(LeadHoldTest, AfterACrashTheNextProcessReportsExactlyTheUnstartedUncancelledFires) {
  auto hold = make_hold();
  ASSERT_TRUE(hold->hold(request(admin_now(), {fire(admin_now() + 10, bean(1)), fire(admin_now() + 500, bean(2)),
                                               fire(admin_now() + 500, bean(3)), fire(admin_now() + 900, bean(4))}))
                  .is_success());
  advance(10ms);                                        // 1 started
  hold->cancel(LeadCancelParam{{2}, "job deleted"});     // 2 cancelled
  // The process dies now: its journal is as it is, and no process holds it.
  auto files = lead_files(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  std::string content = read_text(files[0]);
  content += with_checksum("h 5 " + std::to_string(kStartMs));  // ...and 5, held
  std::string torn = with_checksum("h 6 " + std::to_string(kStartMs));
  torn[2] = '7';  // a damaged line: its checksum no longer matches
  content += torn;
  content += "h 8 17000";  // cut short by the crash
  hold->stop();
  hold.reset();
  {
    std::lock_guard lock(mutex_);
    reports_.clear();
  }
  const fs::path orphan = dir_.path() / "lead-0000001700000000000-999999-00000000deadbeef-0.journal";
  std::ofstream(orphan, std::ios::binary) << content;

  auto next = make_hold();
  EXPECT_EQ(next->recover(), 3u);
  EXPECT_EQ(reported_ids(), (std::vector<std::int64_t>{3, 4, 5})) << "never the started 1 nor the cancelled 2";
  for (const auto& r : reports()) {
    EXPECT_EQ(r.handle_code, kFailCode);
    EXPECT_EQ(r.handle_msg, "not started: executor restarted before the fire's instant");
    EXPECT_EQ(r.not_started, "executor restarted before the fire's instant");
    EXPECT_EQ(r.log_date_time, kStartMs);
  }
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_EQ(next->recover(), 0u) << "reported once";
}

TEST_F(LeadHoldTest, ALiveHoldsJournalIsNoOrphan) {
  auto live = make_hold();
  ASSERT_TRUE(live->hold(request(admin_now(), {fire(admin_now() + 100, bean(1))})).is_success());
  auto other = make_hold();
  EXPECT_EQ(other->recover(), 0u);
  EXPECT_TRUE(reports().empty());
  EXPECT_TRUE(live->holds(1));
}

TEST_F(LeadHoldTest, ABigJournalIsCompactedToWhatIsHeld) {
  auto o = options();
  o.journal_compact_bytes = 2048;
  LeadHold hold(o, hooks(), timer_, clock_);
  ASSERT_TRUE(hold.hold(request(admin_now(), {fire(admin_now() + 50'000, bean(1))})).is_success());
  for (std::int64_t id = 2; id < 400; ++id) {
    ASSERT_TRUE(hold.hold(request(admin_now(), {fire(admin_now() + 10, bean(id))})).is_success());
    advance(10ms);
  }
  auto files = lead_files(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_LT(fs::file_size(files[0]), 4096u);
  EXPECT_NE(read_text(files[0]).find("h 1 "), std::string::npos) << "the held fire is kept";
}

// ---------------------------------------------------------------------------------------------
// The routes

class LeadEndpointTest : public LeadHoldTest {
 protected:
  void SetUp() override {
    handlers_->set("echo", [](JobContext&) {});
    DispatcherHooks dispatcher_hooks;
    dispatcher_hooks.open_log = [this](const TriggerParam& t) { return logs_.open(t.log_date_time, t.log_id); };
    dispatcher_hooks.finish_log = [this](const TriggerParam& t) { logs_.mark_finished(t.log_date_time, t.log_id); };
    dispatcher_hooks.report = [](HandleCallbackParam) {};
    dispatcher_ = std::make_unique<JobDispatcher>(DispatcherOptions{}, std::move(dispatcher_hooks), handlers_, clock_);
    hold_ = make_hold();

    common::http::HttpServerOptions server_options;
    server_options.host = "127.0.0.1";
    server_options.port = 0;
    server_options.worker_threads = 2;
    server_options.error_formatter = executor_error;
    server_ = std::make_unique<common::http::HttpServer>(server_options);
    EndpointHooks endpoint_hooks;
    endpoint_hooks.now_ms = [this] { return clock_.now_ms(); };
    endpoint_hooks.lead = hold_.get();
    add_executor_endpoints(*server_, *dispatcher_, logs_, "s3cret", std::move(endpoint_hooks));
    server_->start();
  }
  void TearDown() override {
    server_->stop();
    hold_->stop();
    dispatcher_->stop(test::kBound);
  }

  common::http::HttpResult post(std::string_view path, const std::string& body, std::string token = "s3cret") {
    common::http::HttpClientOptions client_options;
    client_options.access_token = std::move(token);
    common::http::HttpClient client("http://127.0.0.1:" + std::to_string(server_->port()) + "/", client_options);
    return client.post_json(path, body);
  }

  std::string lead_body(std::int64_t log_id, std::int64_t ahead_ms) {
    return common::protocol::to_json_string(
        request(admin_now(), {fire(admin_now() + ahead_ms, bean(log_id))}));
  }

  TempDir log_dir_;
  RunLogStore logs_{log_dir_.path(), 30, 1 << 20};
  std::shared_ptr<HandlerRegistry> handlers_ = std::make_shared<HandlerRegistry>();
  std::unique_ptr<JobDispatcher> dispatcher_;
  std::unique_ptr<LeadHold> hold_;
  std::unique_ptr<common::http::HttpServer> server_;
};

TEST_F(LeadEndpointTest, LeadWithAWrongTokenIsRefusedAndHoldsNothing) {
  for (const std::string path : {"lead", "leadCancel"}) {
    auto raw = post(path, path == "lead" ? lead_body(1, 100) : "{\"logIds\":[1]}", "guess");
    EXPECT_EQ(raw.status, 200);
    auto answer = common::protocol::parse<ReturnT<std::string>>(raw.body);
    EXPECT_EQ(answer.code, kFailCode) << path;
    EXPECT_EQ(answer.msg, "The access token is wrong.") << path;
  }
  EXPECT_EQ(hold_->held_count(), 0u);
}

TEST_F(LeadEndpointTest, AMalformedLeadIsAnsweredCode500NamingTheField) {
  auto raw = post("lead", "{\"adminTime\":1,\"fires\":[{\"fireAt\":\"soon\",\"trigger\":{}}]}");
  auto answer = common::protocol::parse<ReturnT<std::string>>(raw.body);
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_NE(answer.msg.find("fireAt"), std::string::npos) << answer.msg;
  auto cancel = common::protocol::parse<ReturnT<std::string>>(post("leadCancel", "{\"logIds\":\"all\"}").body);
  EXPECT_EQ(cancel.code, kFailCode);
  EXPECT_NE(cancel.msg.find("logIds"), std::string::npos) << cancel.msg;
}

TEST_F(LeadEndpointTest, LeadAnswersTheHoldsAnswerAndLeadCancelTakesAFireBack) {
  auto answer = common::protocol::parse<ReturnT<LeadAnswer>>(post("lead", lead_body(1, 100)).body);
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  EXPECT_EQ(answer.content->accepted, std::vector<std::int64_t>{1});
  set_estimate(std::nullopt);
  auto refused = common::protocol::parse<ReturnT<LeadAnswer>>(post("lead", lead_body(2, 100)).body);
  EXPECT_EQ(refused.code, kFailCode);
  EXPECT_EQ(refused.msg, "lead dispatch refused: this executor has not measured the admin's clock yet");
  auto cancel = common::protocol::parse<ReturnT<LeadCancelAnswer>>(post("leadCancel", "{\"logIds\":[1,2]}").body);
  ASSERT_TRUE(cancel.is_success());
  EXPECT_EQ(cancel.content->cancelled, std::vector<std::int64_t>{1});
  EXPECT_EQ(cancel.content->unknown, std::vector<std::int64_t>{2});
}

TEST_F(LeadEndpointTest, LogSaysActiveForAHeldFireAndRunOfItDoesNotRunItAgain) {
  ASSERT_TRUE(common::protocol::parse<ReturnT<LeadAnswer>>(post("lead", lead_body(1, 5000)).body).is_success());
  auto log = common::protocol::parse<ReturnT<common::protocol::LogResult>>(
      post("log", "{\"logDateTim\":" + std::to_string(kStartMs) + ",\"logId\":1,\"fromLineNum\":1}").body);
  ASSERT_TRUE(log.is_success()) << log.msg;
  EXPECT_EQ(log.content->run_state, common::protocol::kRunStateActive);
  EXPECT_FALSE(log.content->is_end);

  auto run = common::protocol::parse<ReturnT<std::string>>(
      post("run", common::protocol::to_json_string(bean(1))).body);
  EXPECT_TRUE(run.is_success()) << run.msg;
  EXPECT_NE(run.msg.find("received already"), std::string::npos) << run.msg;
  EXPECT_FALSE(dispatcher_->is_active(1)) << "held, not queued";
  EXPECT_TRUE(hold_->holds(1));
}

}  // namespace
}  // namespace cronwheel::executor
