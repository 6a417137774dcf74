#pragma once

// The alarm store's contract (admin/model/alarm_store.h) as one typed GoogleTest suite, run
// against FakeAlarmStore (tests/unit/admin/alarm/fake_alarm_store_test.cpp, label unit) and
// PgAlarmStore (tests/integration/alarm_store_pgtest.cpp, label db).
//
// A binary includes this header once and instantiates the suite with a fixture type F:
//
//   struct F {
//     F();                                   // fresh, empty stores
//     admin::AlarmStore& alarms();
//     admin::AlarmChannelStore& channels();  // the same store's channels
//     admin::Job put_job(admin::Job);        // creates it in a group of the fixture's; with its id
//     admin::JobLog put_log(admin::JobLog);  // every column as given (alarm_status too); with its id
//     int alarm_status(std::int64_t run_id);
//     void remove_job(std::int64_t job_id);  // deletes the job (and its runs)
//     // As a node that claimed (-1) or decided the run at `alarm_time`.
//     void set_alarm(std::int64_t run_id, int status, std::int64_t alarm_time);
//     // Executors' registrations: put_job's group has the app name "alarm-app".
//     std::int64_t put_registration(std::string app_name, std::string address,
//                                   std::optional<std::int64_t> offset_ms, std::int64_t delay_ms);
//     void set_clock_offset(std::int64_t registration_id, std::optional<std::int64_t> offset_ms);
//     int clock_alarm_status(std::int64_t registration_id);
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Fake, AlarmContract, F);

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/alarm_store.h"
#include "admin/model/records.h"

namespace cronwheel::testing {

namespace alarm_contract {

using namespace cronwheel::admin;

constexpr std::int64_t kNow = 1'800'000'000'000;
constexpr std::int64_t kQuiet = 300'000;
constexpr std::int64_t kStale = 600'000;

inline AlarmStore::ClaimRequest request(std::int64_t now = kNow) {
  AlarmStore::ClaimRequest r;
  r.now = now;
  r.quiet_ms = kQuiet;
  r.stale_ms = kStale;
  return r;
}

template <class F>
class AlarmContract : public ::testing::Test {
 protected:
  Job job(const std::string& recipients = "ops@example.com") {
    Job j;
    j.job_desc = "nightly report";
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = "0 0 2 * * ?";
    j.executor_handler = "report";
    j.alarm_email = recipients;
    return f_.put_job(j);
  }
  JobLog run(const Job& j, FireState state, int retries_left = 0, int alarm_status = kAlarmUndecided,
             TriggerType type = TriggerType::kSchedule) {
    JobLog l;
    l.job_group = j.job_group;
    l.job_id = j.id;
    l.state = state;
    l.trigger_type = type;
    l.scheduled_time = kNow - 60'000 + static_cast<std::int64_t>(++runs_) * 1'000;
    l.admin_node = "node-a";
    l.executor_address = "http://10.0.0.5:9999/";
    l.executor_handler = j.executor_handler;
    l.executor_fail_retry_count = retries_left;
    if (state != FireState::kCancelled && state != FireState::kPending) l.trigger_time = l.scheduled_time + 5;
    if (state == FireState::kFailed || state == FireState::kSucceeded || state == FireState::kLost) {
      l.trigger_code = 200;
      l.handle_time = l.scheduled_time + 100;
      l.handle_code = state == FireState::kSucceeded ? 200 : 500;
      l.handle_msg = state == FireState::kSucceeded ? "ok" : "disk full";
    }
    l.alarm_status = alarm_status;
    return f_.put_log(l);
  }
  AlarmChannel channel(const std::string& name, std::vector<std::int64_t> groups, std::vector<std::int64_t> jobs) {
    AlarmChannel c;
    c.name = name;
    c.kind = AlarmChannelKind::kWebhook;
    c.target = "https://hooks.example.com/" + name;
    c.secret = "s3cret-" + name;
    c.groups = std::move(groups);
    c.jobs = std::move(jobs);
    return f_.channels().create_channel(c, Actor{std::nullopt, "system", ""});
  }
  static std::vector<std::int64_t> ids(const std::vector<JobLog>& runs) {
    std::vector<std::int64_t> out;
    for (const auto& r : runs) out.push_back(r.id);
    return out;
  }

  F f_;
  int runs_ = 0;
};

TYPED_TEST_SUITE_P(AlarmContract);

TYPED_TEST_P(AlarmContract, AFailedRunWithNoRetryLeftIsClaimedWithItsJob) {
  auto& f = this->f_;
  auto j = this->job();
  auto failed = this->run(j, FireState::kFailed);
  auto claims = f.alarms().claim(request());
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].job.id, j.id);
  EXPECT_EQ(claims[0].job.alarm_email, "ops@example.com");
  EXPECT_EQ(claims[0].claimed_at, kNow);
  EXPECT_EQ(claims[0].previous_alarm_at, 0);
  EXPECT_EQ(claims[0].runs_total, 1);
  ASSERT_EQ(claims[0].runs.size(), 1u);
  EXPECT_EQ(claims[0].runs[0].id, failed.id);
  EXPECT_EQ(claims[0].runs[0].handle_msg, "disk full");
  EXPECT_EQ(f.alarm_status(failed.id), kAlarmClaimed);
  // Claimed runs are not claimed again while their claim is fresh.
  EXPECT_TRUE(f.alarms().claim(request(kNow + kQuiet)).empty());
}

TYPED_TEST_P(AlarmContract, LostRunsAndRunsCancelledAsMisfiresCallForAnAlarm) {
  auto& f = this->f_;
  auto j = this->job();
  auto lost = this->run(j, FireState::kLost);
  auto skipped = this->run(j, FireState::kCancelled, 0, kAlarmUndecided, TriggerType::kMisfire);
  auto late = this->run(j, FireState::kCancelled, 3);  // a retry count means nothing to a cancel
  auto claims = f.alarms().claim(request());
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(this->ids(claims[0].runs), (std::vector<std::int64_t>{lost.id, skipped.id, late.id}));
  EXPECT_EQ(claims[0].runs_total, 3);
}

TYPED_TEST_P(AlarmContract, RunsThatCallForNoAlarmAreDecidedSoAndNeverClaimed) {
  auto& f = this->f_;
  auto j = this->job();
  auto silent = this->job("");
  auto retried = this->run(j, FireState::kFailed, 2);    // a retry follows
  auto unwatched = this->run(silent, FireState::kFailed);  // nobody to tell
  auto fine = this->run(j, FireState::kSucceeded);
  auto running = this->run(j, FireState::kTriggered);
  auto operator_cancel = this->run(j, FireState::kCancelled, 0, kAlarmNotNeeded);
  EXPECT_TRUE(f.alarms().claim(request()).empty());
  EXPECT_EQ(f.alarm_status(retried.id), kAlarmNotNeeded);
  EXPECT_EQ(f.alarm_status(unwatched.id), kAlarmNotNeeded);
  EXPECT_EQ(f.alarm_status(fine.id), kAlarmUndecided);
  EXPECT_EQ(f.alarm_status(running.id), kAlarmUndecided);
  EXPECT_EQ(f.alarm_status(operator_cancel.id), kAlarmNotNeeded);
}

TYPED_TEST_P(AlarmContract, AJobIsClaimedAtMostOncePerQuietPeriodThenWithEverythingSince) {
  auto& f = this->f_;
  auto j = this->job();
  this->run(j, FireState::kFailed);
  ASSERT_EQ(f.alarms().claim(request()).size(), 1u);
  auto second = this->run(j, FireState::kFailed);
  auto third = this->run(j, FireState::kLost);
  EXPECT_TRUE(f.alarms().claim(request(kNow + kQuiet - 1)).empty());
  EXPECT_EQ(f.alarm_status(second.id), kAlarmUndecided);
  auto later = f.alarms().claim(request(kNow + kQuiet));
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].previous_alarm_at, kNow);
  EXPECT_EQ(this->ids(later[0].runs), (std::vector<std::int64_t>{second.id, third.id}));
}

TYPED_TEST_P(AlarmContract, FinishRecordsTheOutcomeOfTheClaimedRuns) {
  auto& f = this->f_;
  auto j = this->job();
  auto k = this->job();
  auto a = this->run(j, FireState::kFailed);
  auto b = this->run(j, FireState::kFailed);
  auto c = this->run(k, FireState::kFailed);
  ASSERT_EQ(f.alarms().claim(request()).size(), 2u);
  EXPECT_EQ(f.alarms().finish(j.id, kNow, AlarmOutcome::kSent, kNow + 10), 2);
  EXPECT_EQ(f.alarms().finish(k.id, kNow, AlarmOutcome::kFailed, kNow + 10), 1);
  EXPECT_EQ(f.alarm_status(a.id), kAlarmSent);
  EXPECT_EQ(f.alarm_status(b.id), kAlarmSent);
  EXPECT_EQ(f.alarm_status(c.id), kAlarmFailed);
  // Decided runs are never claimed or finished again.
  EXPECT_EQ(f.alarms().finish(j.id, kNow, AlarmOutcome::kFailed, kNow + 20), 0);
  EXPECT_TRUE(f.alarms().claim(request(kNow + kStale + kQuiet)).empty());
  EXPECT_EQ(f.alarm_status(c.id), kAlarmFailed);
}

TYPED_TEST_P(AlarmContract, AClaimNeverFinishedIsClaimedAgainOnceStale) {
  auto& f = this->f_;
  auto j = this->job();
  auto fresh = this->run(j, FireState::kFailed);
  f.set_alarm(fresh.id, kAlarmClaimed, kNow - kStale);  // claimed exactly stale_ms ago: not yet
  EXPECT_TRUE(f.alarms().claim(request()).empty());
  auto claims = f.alarms().claim(request(kNow + 1));
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(this->ids(claims[0].runs), (std::vector<std::int64_t>{fresh.id}));
  // The node that claimed it first finishes late: the run belongs to the new claim.
  EXPECT_EQ(f.alarms().finish(j.id, kNow - kStale, AlarmOutcome::kSent, kNow + 2), 0);
  EXPECT_EQ(f.alarm_status(fresh.id), kAlarmClaimed);
  EXPECT_EQ(f.alarms().finish(j.id, kNow + 1, AlarmOutcome::kSent, kNow + 2), 1);
}

TYPED_TEST_P(AlarmContract, AStaleClaimOfAJobWithoutRecipientsNowIsDecidedNoAlarm) {
  auto& f = this->f_;
  auto j = this->job("");
  auto r = this->run(j, FireState::kFailed);
  f.set_alarm(r.id, kAlarmClaimed, kNow - kStale - 1);
  EXPECT_TRUE(f.alarms().claim(request()).empty());
  EXPECT_EQ(f.alarm_status(r.id), kAlarmNotNeeded);
}

TYPED_TEST_P(AlarmContract, AClaimListsTheOldestRunsAndCountsThemAll) {
  auto& f = this->f_;
  auto j = this->job();
  std::vector<std::int64_t> all;
  for (int i = 0; i < 5; ++i) all.push_back(this->run(j, FireState::kFailed).id);
  auto r = request();
  r.runs_listed = 2;
  auto claims = f.alarms().claim(r);
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].runs_total, 5);
  EXPECT_EQ(this->ids(claims[0].runs), (std::vector<std::int64_t>{all[0], all[1]}));
  for (auto id : all) EXPECT_EQ(f.alarm_status(id), kAlarmClaimed);
  EXPECT_EQ(f.alarms().finish(j.id, kNow, AlarmOutcome::kSent, kNow + 1), 5);
}

TYPED_TEST_P(AlarmContract, MaxJobsBoundsAClaimAndTheRestComeNext) {
  auto& f = this->f_;
  auto a = this->job();
  auto b = this->job();
  auto c = this->job();
  for (const auto& j : {a, b, c}) this->run(j, FireState::kFailed);
  auto r = request();
  r.max_jobs = 2;
  auto first = f.alarms().claim(r);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].job.id, a.id);
  EXPECT_EQ(first[1].job.id, b.id);
  auto second = f.alarms().claim(r);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].job.id, c.id);
}

TYPED_TEST_P(AlarmContract, ChannelsAreCreatedReadUpdatedAndRemoved) {
  auto& f = this->f_;
  auto j = this->job();
  auto created = this->channel("payments", {j.job_group}, {j.id});
  EXPECT_GT(created.id, 0);
  EXPECT_EQ(created.name, "payments");
  EXPECT_EQ(created.kind, AlarmChannelKind::kWebhook);
  EXPECT_EQ(created.secret, "s3cret-payments");
  EXPECT_EQ(created.groups, std::vector<std::int64_t>{j.job_group});
  EXPECT_EQ(created.jobs, std::vector<std::int64_t>{j.id});
  EXPECT_EQ(f.channels().get_channel(created.id), created);

  auto second = this->channel("ops", {}, {});
  auto changed = created;
  changed.name = "payments-mail";
  changed.kind = AlarmChannelKind::kEmail;
  changed.target = "pay@example.com, oncall@example.com";
  changed.secret = "";
  changed.jobs = {};
  auto updated = f.channels().update_channel(changed, Actor{std::nullopt, "system", ""});
  EXPECT_EQ(updated.name, "payments-mail");
  EXPECT_EQ(updated.kind, AlarmChannelKind::kEmail);
  EXPECT_EQ(updated.target, "pay@example.com, oncall@example.com");
  EXPECT_TRUE(updated.jobs.empty());
  EXPECT_EQ(updated.created_at, created.created_at);
  auto all = f.channels().list_channels();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], updated);
  EXPECT_EQ(all[1], second);

  f.channels().remove_channel(created.id, Actor{std::nullopt, "system", ""});
  EXPECT_FALSE(f.channels().get_channel(created.id));
  EXPECT_THROW(f.channels().remove_channel(created.id, Actor{std::nullopt, "system", ""}), NotFound);
  EXPECT_THROW(f.channels().update_channel(changed, Actor{std::nullopt, "system", ""}), NotFound);
}

TYPED_TEST_P(AlarmContract, AChannelNeedsAFreeNameAndGroupsAndJobsThatExist) {
  auto& f = this->f_;
  auto j = this->job();
  this->channel("payments", {}, {});
  auto conflict_field = [&](const std::string& name, std::vector<std::int64_t> groups, std::vector<std::int64_t> jobs) {
    try {
      this->channel(name, std::move(groups), std::move(jobs));
    } catch (const Conflict& e) {
      return e.field();
    }
    return std::string("(created)");
  };
  EXPECT_EQ(conflict_field("payments", {}, {}), "name");
  EXPECT_EQ(conflict_field("other", {j.job_group + 1000}, {}), "groups");
  EXPECT_EQ(conflict_field("other", {}, {j.id, j.id + 1000}), "jobs");
  EXPECT_EQ(f.channels().list_channels().size(), 1u);
}

TYPED_TEST_P(AlarmContract, AJobWithoutAddressesAlarmsThroughTheChannelsOfItsGroupOrItself) {
  auto& f = this->f_;
  auto by_group = this->job("");
  auto by_job = this->job("");
  auto nobody = this->job("");
  auto group_channel = this->channel("team", {by_group.job_group}, {});
  this->run(by_group, FireState::kFailed);
  auto lonely = this->run(nobody, FireState::kFailed);
  auto claims = f.alarms().claim(request());
  // by_group and nobody share the fixture's group, so the group's channel takes both.
  ASSERT_EQ(claims.size(), 2u);
  for (const auto& claim : claims) {
    ASSERT_EQ(claim.channels.size(), 1u);
    EXPECT_EQ(claim.channels[0].name, "team");
    EXPECT_EQ(claim.channels[0].secret, "s3cret-team");
  }
  EXPECT_EQ(f.alarm_status(lonely.id), kAlarmClaimed);

  // Without the group's channel, only a channel naming the job itself takes its alarms.
  f.channels().remove_channel(group_channel.id, Actor{std::nullopt, "system", ""});
  this->channel("just-one", {}, {by_job.id});
  auto mine = this->run(by_job, FireState::kFailed);
  auto unwatched = this->run(nobody, FireState::kFailed);
  auto later = f.alarms().claim(request(kNow + kQuiet));
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].job.id, by_job.id);
  ASSERT_EQ(later[0].channels.size(), 1u);
  EXPECT_EQ(later[0].channels[0].name, "just-one");
  EXPECT_EQ(f.alarm_status(mine.id), kAlarmClaimed);
  EXPECT_EQ(f.alarm_status(unwatched.id), kAlarmNotNeeded);
}

TYPED_TEST_P(AlarmContract, AChannelForgetsAJobThatWasDeleted) {
  auto& f = this->f_;
  auto kept = this->job();
  auto gone = this->job();
  auto c = this->channel("jobs", {}, {kept.id, gone.id});
  f.remove_job(gone.id);
  EXPECT_EQ(f.channels().get_channel(c.id)->jobs, std::vector<std::int64_t>{kept.id});
}

// ---------------------------------------------------------------------------------------------
// Executor clocks

constexpr std::int64_t kBound = 1'000;

inline std::vector<std::int64_t> registration_ids(const std::vector<ClockAlarmClaim>& claims) {
  std::vector<std::int64_t> out;
  for (const auto& c : claims) out.push_back(c.registration_id);
  return out;
}

TYPED_TEST_P(AlarmContract, AnExecutorWhoseClockIsOffBeyondTheBoundIsClaimedOnceWithItsGroupsChannels) {
  auto& f = this->f_;
  auto j = this->job();
  auto group_channel = this->channel("ops", {j.job_group}, {});
  this->channel("one-job", {}, {j.id});  // takes a job's alarms, not its executors'
  const auto behind = f.put_registration("alarm-app", "http://10.0.0.5:9999/", 1'500, 4);
  const auto ahead = f.put_registration("alarm-app", "http://10.0.0.6:9999/", -2'000, 2);
  const auto close = f.put_registration("alarm-app", "http://10.0.0.7:9999/", 1'000, 2);
  const auto unmeasured = f.put_registration("alarm-app", "http://10.0.0.8:9999/", std::nullopt, 0);
  const auto elsewhere = f.put_registration("other-app", "http://10.0.0.9:9999/", 5'000, 2);

  auto claims = f.alarms().claim_clock_alarms(kNow, kBound, kStale, 100);
  ASSERT_EQ(registration_ids(claims), (std::vector<std::int64_t>{behind, ahead}));
  EXPECT_EQ(claims[0].app_name, "alarm-app");
  EXPECT_EQ(claims[0].address, "http://10.0.0.5:9999/");
  EXPECT_EQ(claims[0].offset_ms, 1'500);
  EXPECT_EQ(claims[0].delay_ms, 4);
  EXPECT_EQ(claims[0].claimed_at, kNow);
  EXPECT_EQ(claims[0].channels, std::vector<AlarmChannel>{group_channel});
  EXPECT_EQ(claims[1].offset_ms, -2'000);
  EXPECT_EQ(f.clock_alarm_status(behind), kAlarmClaimed);
  for (auto id : {close, unmeasured, elsewhere}) EXPECT_EQ(f.clock_alarm_status(id), 0);
  EXPECT_TRUE(f.alarms().claim_clock_alarms(kNow + 1'000, kBound, kStale, 100).empty()) << "claimed once";
}

TYPED_TEST_P(AlarmContract, AClockAlarmWithoutAChannelWaitsForOneAndLimitBoundsAClaim) {
  auto& f = this->f_;
  auto j = this->job();
  const auto first = f.put_registration("alarm-app", "http://10.0.0.5:9999/", 3'000, 1);
  const auto second = f.put_registration("alarm-app", "http://10.0.0.6:9999/", 3'000, 1);
  EXPECT_TRUE(f.alarms().claim_clock_alarms(kNow, kBound, kStale, 100).empty());
  EXPECT_EQ(f.clock_alarm_status(first), 0);
  this->channel("ops", {j.job_group}, {});
  EXPECT_EQ(registration_ids(f.alarms().claim_clock_alarms(kNow + 1, kBound, kStale, 1)),
            std::vector<std::int64_t>{first});
  EXPECT_EQ(registration_ids(f.alarms().claim_clock_alarms(kNow + 2, kBound, kStale, 1)),
            std::vector<std::int64_t>{second});
}

TYPED_TEST_P(AlarmContract, AClockBackWithinTheBoundClearsItsAlarmSoALaterDriftAlarmsAgain) {
  auto& f = this->f_;
  auto j = this->job();
  this->channel("ops", {j.job_group}, {});
  const auto r = f.put_registration("alarm-app", "http://10.0.0.5:9999/", 1'500, 1);
  auto claims = f.alarms().claim_clock_alarms(kNow, kBound, kStale, 100);
  ASSERT_EQ(claims.size(), 1u);
  f.alarms().finish_clock_alarm(r, kNow, AlarmOutcome::kSent);
  EXPECT_EQ(f.clock_alarm_status(r), kAlarmSent);
  EXPECT_TRUE(f.alarms().claim_clock_alarms(kNow + kStale * 2, kBound, kStale, 100).empty()) << "sent: not again";

  f.set_clock_offset(r, 200);
  EXPECT_TRUE(f.alarms().claim_clock_alarms(kNow + 1, kBound, kStale, 100).empty());
  EXPECT_EQ(f.clock_alarm_status(r), 0);
  f.set_clock_offset(r, -1'200);
  EXPECT_EQ(registration_ids(f.alarms().claim_clock_alarms(kNow + 2, kBound, kStale, 100)),
            std::vector<std::int64_t>{r});
  f.alarms().finish_clock_alarm(r, kNow + 2, AlarmOutcome::kFailed);
  EXPECT_EQ(f.clock_alarm_status(r), kAlarmFailed);
}

TYPED_TEST_P(AlarmContract, AClockAlarmNeverFinishedIsClaimedAgainOnceStaleAndTheOldClaimCannotFinishIt) {
  auto& f = this->f_;
  auto j = this->job();
  this->channel("ops", {j.job_group}, {});
  const auto r = f.put_registration("alarm-app", "http://10.0.0.5:9999/", 1'500, 1);
  ASSERT_EQ(f.alarms().claim_clock_alarms(kNow, kBound, kStale, 100).size(), 1u);
  EXPECT_TRUE(f.alarms().claim_clock_alarms(kNow + kStale, kBound, kStale, 100).empty());
  auto again = f.alarms().claim_clock_alarms(kNow + kStale + 1, kBound, kStale, 100);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].claimed_at, kNow + kStale + 1);
  f.alarms().finish_clock_alarm(r, kNow, AlarmOutcome::kSent);
  EXPECT_EQ(f.clock_alarm_status(r), kAlarmClaimed) << "the first claim was taken over";
  f.alarms().finish_clock_alarm(r, kNow + kStale + 1, AlarmOutcome::kSent);
  EXPECT_EQ(f.clock_alarm_status(r), kAlarmSent);
}

REGISTER_TYPED_TEST_SUITE_P(AlarmContract, AFailedRunWithNoRetryLeftIsClaimedWithItsJob,
                            ChannelsAreCreatedReadUpdatedAndRemoved, AChannelNeedsAFreeNameAndGroupsAndJobsThatExist,
                            AJobWithoutAddressesAlarmsThroughTheChannelsOfItsGroupOrItself,
                            AChannelForgetsAJobThatWasDeleted,
                            LostRunsAndRunsCancelledAsMisfiresCallForAnAlarm,
                            RunsThatCallForNoAlarmAreDecidedSoAndNeverClaimed,
                            AJobIsClaimedAtMostOncePerQuietPeriodThenWithEverythingSince,
                            FinishRecordsTheOutcomeOfTheClaimedRuns, AClaimNeverFinishedIsClaimedAgainOnceStale,
                            AStaleClaimOfAJobWithoutRecipientsNowIsDecidedNoAlarm,
                            AClaimListsTheOldestRunsAndCountsThemAll, MaxJobsBoundsAClaimAndTheRestComeNext,
                            AnExecutorWhoseClockIsOffBeyondTheBoundIsClaimedOnceWithItsGroupsChannels,
                            AClockAlarmWithoutAChannelWaitsForOneAndLimitBoundsAClaim,
                            AClockBackWithinTheBoundClearsItsAlarmSoALaterDriftAlarmsAgain,
                            AClockAlarmNeverFinishedIsClaimedAgainOnceStaleAndTheOldClaimCannotFinishIt);

}  // namespace alarm_contract

}  // namespace cronwheel::testing
