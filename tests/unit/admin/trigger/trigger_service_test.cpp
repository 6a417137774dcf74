#include "admin/trigger/trigger_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/store_errors.h"
#include "admin/trigger/delivery_check.h"
#include "common/protocol/constants.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_executor_client.h"
#include "tests/support/fake_trigger_store.h"

namespace cronwheel::testing {
namespace {

using namespace std::chrono_literals;
using admin::SendOutcome;
using Result = admin::ExecutorClient::Result;
using Kind = SendOutcome::Kind;

const std::string kNode = "node-1";
const std::string kA = "http://10.0.0.1:9999/";
const std::string kB = "http://10.0.0.2:9999/";
const std::string kC = "http://10.0.0.3:9999/";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class TriggerServiceTest : public ::testing::Test {
 protected:
  TriggerServiceTest() {
    admin::Group g;
    g.app_name = "demo-app";
    g.title = "Demo";
    g.address_list = {kA, kB};
    group_ = store_.put_group(g);

    admin::Job j;
    j.job_group = group_.id;
    j.job_desc = "demo";
    j.schedule_type = admin::ScheduleType::kCron;
    j.schedule_conf = "* * * * * ?";
    j.executor_route_strategy = admin::RouteStrategy::kFirst;
    j.executor_handler = "demoHandler";
    j.executor_param = "job-param";
    j.executor_block_strategy = admin::BlockStrategy::kDiscardLater;
    j.executor_timeout = 30;
    j.glue_type = admin::GlueType::kBean;
    j.glue_updated_at = 1'690'000'000'000;
    j.trigger_status = 1;
    job_ = store_.put_job(j);
  }

  admin::TriggerService& service() {
    if (!service_) {
      admin::TriggerService::Options o;
      o.node_id = kNode;
      o.access_token = "admin-token";
      o.record_backoff = 0ms;
      o.random = [](std::size_t) { return std::size_t{0}; };
      o.finished_runs = &finished_;
      o.suspects = &suspects_;
      o.slot_waiting = [this](std::int64_t group) { slot_waits_.push_back(group); };
      service_ = std::make_unique<admin::TriggerService>(store_, client_, clock_, o);
    }
    return *service_;
  }

  admin::JobLog pending(std::function<void(admin::JobLog&)> change = {}) {
    admin::JobLog l;
    l.job_id = job_.id;
    l.state = admin::FireState::kPending;
    l.trigger_type = admin::TriggerType::kSchedule;
    l.scheduled_time = clock_.now_ms();
    l.admin_node = kNode;
    if (change) change(l);
    return store_.put_log(l);
  }

  SendOutcome send(const admin::JobLog& l) { return service().send({l.id, l.job_id, l.scheduled_time}); }
  admin::JobLog row(std::int64_t id) { return *store_.log(id); }
  std::vector<admin::JobLog> retries() {
    std::vector<admin::JobLog> out;
    for (const auto& l : store_.logs()) {
      if (l.trigger_type == admin::TriggerType::kRetry) out.push_back(l);
    }
    return out;
  }
  void set_job(std::function<void(admin::Job&)> change) { store_.update_job(job_.id, std::move(change)); }
  void set_group(std::function<void(admin::Group&)> change) {
    change(group_);
    store_.put_group(group_);
  }

  FakeClock clock_;
  FakeTriggerStore store_;
  FakeExecutorClient client_;
  admin::Group group_;
  admin::Job job_;
  admin::FinishedRuns finished_;
  admin::SuspectAddresses suspects_{clock_};
  std::vector<std::int64_t> slot_waits_;  // groups the service set a fire waiting for a slot in
  std::unique_ptr<admin::TriggerService> service_;
};

// A backfill's run is due at a historical instant: it is posted now, and filed at the executor
// under that instant, so the handler sees the logical date it runs for.
TEST_F(TriggerServiceTest, ABackfillRunIsSentNowWithItsHistoricalInstantAsLogDateTime) {
  const std::int64_t week_ago = clock_.now_ms() - 7 * 24 * 3'600'000;
  auto fire = pending([&](admin::JobLog& l) {
    l.trigger_type = admin::TriggerType::kBackfill;
    l.scheduled_time = week_ago;
    l.backfill_id = 3;
  });
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  auto runs = client_.calls("run");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].trigger.log_date_time, week_ago);
  auto l = row(fire.id);
  EXPECT_EQ(l.trigger_time, clock_.now_ms());
  EXPECT_EQ(l.scheduled_time, week_ago);
  EXPECT_TRUE(contains(l.trigger_msg, "Trigger type: BACKFILL")) << l.trigger_msg;
}

TEST_F(TriggerServiceTest, TriggersAPendingFireAndRecordsTheExecutorsAnswer) {
  auto fire = pending();
  auto outcome = send(fire);
  EXPECT_EQ(outcome.kind, Kind::kTriggered);

  auto runs = client_.calls("run");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].address, kA);
  EXPECT_EQ(runs[0].access_token, "admin-token");
  const auto& p = runs[0].trigger;
  EXPECT_EQ(p.job_id, job_.id);
  EXPECT_EQ(p.executor_handler, "demoHandler");
  EXPECT_EQ(p.executor_params, "job-param");
  EXPECT_EQ(p.executor_block_strategy, "DISCARD_LATER");
  EXPECT_EQ(p.executor_timeout, 30);
  EXPECT_EQ(p.log_id, fire.id);
  EXPECT_EQ(p.log_date_time, fire.scheduled_time);
  EXPECT_EQ(p.glue_type, "BEAN");
  EXPECT_EQ(p.glue_updatetime, 1'690'000'000'000);
  EXPECT_EQ(p.broadcast_index, 0);
  EXPECT_EQ(p.broadcast_total, 1);

  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kTriggered);
  EXPECT_EQ(l.trigger_code, 200);
  EXPECT_EQ(l.executor_address, kA);
  EXPECT_EQ(l.executor_handler, "demoHandler");
  EXPECT_EQ(l.executor_param, "job-param");
  EXPECT_EQ(l.trigger_time, clock_.now_ms());
  EXPECT_TRUE(contains(l.trigger_msg, "Route strategy: FIRST")) << l.trigger_msg;
  EXPECT_TRUE(contains(l.trigger_msg, "Addresses (automatic registration): " + kA + ", " + kB)) << l.trigger_msg;
  EXPECT_TRUE(contains(l.trigger_msg, "Address: " + kA)) << l.trigger_msg;
  EXPECT_TRUE(contains(l.trigger_msg, "Code: 200")) << l.trigger_msg;
  EXPECT_TRUE(retries().empty());
}

TEST_F(TriggerServiceTest, SendsTheGroupsOwnAccessTokenWhenItHasOne) {
  set_group([](admin::Group& g) { g.access_token = "group-token"; });
  send(pending());
  EXPECT_EQ(client_.calls("run").at(0).access_token, "group-token");
}

TEST_F(TriggerServiceTest, FireParametersOverrideTheJobs) {
  auto fire = pending([](admin::JobLog& l) {
    l.trigger_type = admin::TriggerType::kManual;
    l.executor_param = "operator-param";
  });
  send(fire);
  EXPECT_EQ(client_.calls("run").at(0).trigger.executor_params, "operator-param");
  EXPECT_EQ(row(fire.id).executor_param, "operator-param");
}

TEST_F(TriggerServiceTest, FireAddressListReplacesTheGroupsForRouting) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kLast; });
  set_group([](admin::Group& g) { g.address_list = {"http://x:1/", "http://y:2", "http://z:3/"}; });
  auto fire = pending([](admin::JobLog& l) {
    l.trigger_type = admin::TriggerType::kManual;
    l.executor_address = " http://x:1/ ,http://y:2/, ";
  });
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  EXPECT_EQ(client_.calls("run").at(0).address, "http://y:2/");
  auto l = row(fire.id);
  EXPECT_EQ(l.executor_address, "http://y:2/");
  EXPECT_TRUE(contains(l.trigger_msg, "Addresses (the fire's own list): http://x:1/, http://y:2/")) << l.trigger_msg;
}

TEST_F(TriggerServiceTest, AddressesOutsideTheGroupAreNeverSentTo) {
  // The fire carries the group's access token: an address the group does not have (asked for
  // by a trigger, or gone from the group since) gets neither the run nor the token.
  set_group([](admin::Group& g) {
    g.address_list = {"http://y:2/"};
    g.access_token = "group-token";
  });
  auto outside = pending([](admin::JobLog& l) {
    l.trigger_type = admin::TriggerType::kManual;
    l.executor_address = "http://attacker:1/";
  });
  EXPECT_EQ(send(outside).kind, Kind::kFailed);
  EXPECT_TRUE(client_.calls("run").empty());
  EXPECT_TRUE(contains(row(outside.id).trigger_msg, "http://attacker:1/ is not an address of group"))
      << row(outside.id).trigger_msg;

  auto mixed = pending([](admin::JobLog& l) {
    l.trigger_type = admin::TriggerType::kManual;
    l.executor_address = "http://attacker:1/,http://y:2/";
  });
  EXPECT_EQ(send(mixed).kind, Kind::kTriggered);
  ASSERT_EQ(client_.calls("run").size(), 1u);
  EXPECT_EQ(client_.calls("run").at(0).address, "http://y:2/");
}

TEST_F(TriggerServiceTest, ManualGroupListIsNamedAsSuch) {
  set_group([](admin::Group& g) { g.address_type = 1; });
  auto fire = pending();
  send(fire);
  EXPECT_TRUE(contains(row(fire.id).trigger_msg, "Addresses (entered by hand)")) << row(fire.id).trigger_msg;
}

TEST_F(TriggerServiceTest, FireWithoutAnyAddressFailsNamingTheGroup) {
  set_group([](admin::Group& g) { g.address_list = {}; });
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kFailed);
  EXPECT_TRUE(client_.calls().empty());
  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kFailed);
  EXPECT_EQ(l.trigger_code, 500);
  EXPECT_EQ(l.trigger_time, clock_.now_ms());
  EXPECT_EQ(l.executor_handler, "demoHandler");
  EXPECT_TRUE(contains(l.trigger_msg, "no executor address for group demo-app")) << l.trigger_msg;
}

TEST_F(TriggerServiceTest, FailedTriggerWithRetriesLeftSchedulesARetryAfterTheInterval) {
  set_job([](admin::Job& j) { j.retry_interval = 30; });
  client_.answer("run", kA, Result::fail("job handler [demoHandler] not found."));
  auto fire = pending([](admin::JobLog& l) { l.executor_fail_retry_count = 2; });
  EXPECT_EQ(send(fire).kind, Kind::kFailed);

  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kFailed);
  EXPECT_EQ(l.trigger_code, 500);
  EXPECT_TRUE(contains(l.trigger_msg, "Msg: job handler [demoHandler] not found.")) << l.trigger_msg;
  auto retry = retries();
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].state, admin::FireState::kPending);
  EXPECT_EQ(retry[0].admin_node, kNode);
  EXPECT_EQ(retry[0].scheduled_time, clock_.now_ms() + 30'000);
  EXPECT_EQ(retry[0].executor_fail_retry_count, 1);
  EXPECT_EQ(retry[0].parent_log_id, fire.id);
  EXPECT_EQ(retry[0].executor_param, "job-param");
  EXPECT_EQ(retry[0].executor_address, "") << "a retry is routed afresh";
}

TEST_F(TriggerServiceTest, FailedTriggerWithoutRetriesLeftSchedulesNone) {
  client_.answer("run", kA, Result::fail("refused"));
  EXPECT_EQ(send(pending()).kind, Kind::kFailed);
  EXPECT_TRUE(retries().empty());
}

TEST_F(TriggerServiceTest, FireWithoutAddressIsRetriedToo) {
  set_group([](admin::Group& g) { g.address_list = {}; });
  send(pending([](admin::JobLog& l) { l.executor_fail_retry_count = 1; }));
  EXPECT_EQ(retries().size(), 1u);
}

TEST_F(TriggerServiceTest, EveryFireNoExecutorTookCountsAsAFailedRunOfItsGroup) {
  EXPECT_EQ(send(pending()).kind, Kind::kTriggered);
  client_.answer("run", kA, Result::fail("refused"));
  EXPECT_EQ(send(pending()).kind, Kind::kFailed);
  EXPECT_EQ(send(pending([](admin::JobLog& l) { l.admin_node = "node-2"; })).kind, Kind::kDropped);
  set_group([](admin::Group& g) { g.address_list = {}; });
  EXPECT_EQ(send(pending()).kind, Kind::kFailed);

  EXPECT_EQ(finished_.counts(),
            (std::vector<admin::FinishedRuns::Count>{{group_.id, admin::FireState::kFailed, 2}}));
}

TEST_F(TriggerServiceTest, FireNoLongerPendingIsDroppedUntouched) {
  auto fire = pending([](admin::JobLog& l) {
    l.state = admin::FireState::kTriggered;
    l.trigger_time = 1;
  });
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  EXPECT_TRUE(client_.calls().empty());
  EXPECT_EQ(row(fire.id), fire);
}

TEST_F(TriggerServiceTest, FireOwnedByAnotherNodeIsDroppedUntouched) {
  auto fire = pending([](admin::JobLog& l) { l.admin_node = "node-2"; });
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  EXPECT_TRUE(client_.calls().empty());
  EXPECT_EQ(row(fire.id), fire);
}

TEST_F(TriggerServiceTest, FireTakenOverBeforeItsClaimIsNotSent) {
  auto fire = pending();
  store_.before_call([&](std::string_view method) {
    if (method == "claim") store_.update_log(fire.id, [](admin::JobLog& l) { l.admin_node = "node-2"; });
  });
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  EXPECT_TRUE(client_.calls("run").empty());
  EXPECT_EQ(row(fire.id).state, admin::FireState::kPending);
  EXPECT_EQ(row(fire.id).admin_node, "node-2");
}

TEST_F(TriggerServiceTest, FireCancelledBeforeItsClaimIsNotSent) {
  auto fire = pending([](admin::JobLog& l) { l.trigger_type = admin::TriggerType::kApi; });
  store_.before_call([&](std::string_view method) {
    if (method == "claim") store_.update_log(fire.id, [](admin::JobLog& l) { l.state = admin::FireState::kCancelled; });
  });
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  EXPECT_TRUE(client_.calls("run").empty());
  EXPECT_EQ(row(fire.id).state, admin::FireState::kCancelled);
}

TEST_F(TriggerServiceTest, UnreachableDatabaseBeforeTheClaimLeavesTheFirePending) {
  auto fire = pending();
  for (auto failing : {"load_pending", "claim"}) {
    store_.before_call([&](std::string_view method) {
      if (method == failing) throw admin::StoreUnavailable("database connection lost");
    });
    EXPECT_EQ(send(fire).kind, Kind::kDropped) << failing;
    EXPECT_EQ(row(fire.id).state, admin::FireState::kPending) << failing;
    EXPECT_TRUE(client_.calls("run").empty()) << failing;
  }
  store_.before_call({});
  EXPECT_EQ(send(fire).kind, Kind::kTriggered) << "a later attempt sends it";
}

TEST_F(TriggerServiceTest, UnreachableDatabaseWhileRecordingTheAnswerIsRetried) {
  auto fire = pending();
  int failures = 2;
  store_.before_call([&](std::string_view method) {
    if (method == "record_triggered" && failures-- > 0) throw admin::StoreUnavailable("database connection lost");
  });
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  EXPECT_EQ(row(fire.id).state, admin::FireState::kTriggered);
  EXPECT_EQ(client_.calls("run").size(), 1u) << "the executor is called once";
}

TEST_F(TriggerServiceTest, ShardingBroadcastSendsOneShardToEveryAddress) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kShardingBroadcast; });
  set_group([](admin::Group& g) { g.address_list = {kA, kB, kC}; });
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);

  auto runs = client_.calls("run");
  ASSERT_EQ(runs.size(), 3u);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(runs[i].address, (std::vector<std::string>{kA, kB, kC})[i]);
    EXPECT_EQ(runs[i].trigger.broadcast_index, i);
    EXPECT_EQ(runs[i].trigger.broadcast_total, 3);
    EXPECT_EQ(runs[i].trigger.log_date_time, fire.scheduled_time);
    ids.push_back(runs[i].trigger.log_id);
  }
  EXPECT_EQ(ids[0], fire.id) << "the fire's own row is shard 0";
  auto logs = store_.logs();
  ASSERT_EQ(logs.size(), 3u);
  for (const auto& l : logs) {
    EXPECT_EQ(l.state, admin::FireState::kTriggered);
    EXPECT_EQ(l.shard_total, 3);
    EXPECT_EQ(l.scheduled_time, fire.scheduled_time);
    EXPECT_EQ(l.trigger_type, admin::TriggerType::kSchedule);
    EXPECT_EQ(l.executor_address, (std::vector<std::string>{kA, kB, kC})[static_cast<std::size_t>(l.shard_index)]);
    EXPECT_TRUE(contains(l.trigger_msg, "Shard: " + std::to_string(l.shard_index) + " of 3")) << l.trigger_msg;
  }
}

TEST_F(TriggerServiceTest, OneFailedShardFailsOnlyItsOwnRow) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kShardingBroadcast; });
  client_.answer("run", kB, Result::fail("busy"));
  auto fire = pending([](admin::JobLog& l) { l.executor_fail_retry_count = 1; });
  EXPECT_EQ(send(fire).kind, Kind::kFailed);
  EXPECT_EQ(row(fire.id).state, admin::FireState::kTriggered);
  auto retry = retries();
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].shard_index, 1);
  EXPECT_EQ(retry[0].shard_total, 2);
  EXPECT_EQ(row(*retry[0].parent_log_id).state, admin::FireState::kFailed);
}

TEST_F(TriggerServiceTest, ShardOfAnExpandedBroadcastIsSentAloneToTheAddressAtItsIndex) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kShardingBroadcast; });
  set_group([](admin::Group& g) { g.address_list = {kA, kB, kC}; });
  auto retry = pending([](admin::JobLog& l) {
    l.trigger_type = admin::TriggerType::kRetry;
    l.shard_index = 2;
    l.shard_total = 3;
  });
  EXPECT_EQ(send(retry).kind, Kind::kTriggered);
  auto runs = client_.calls("run");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].address, kC);
  EXPECT_EQ(runs[0].trigger.broadcast_index, 2);
  EXPECT_EQ(runs[0].trigger.broadcast_total, 3);
  EXPECT_EQ(store_.logs().size(), 1u) << "not expanded again";
}

TEST_F(TriggerServiceTest, ShardPutBackToPendingGoesToTheExecutorItWasSentTo) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kShardingBroadcast; });
  auto shard = pending([&](admin::JobLog& l) {
    l.shard_index = 1;
    l.shard_total = 2;
    l.executor_address = kB;
  });
  EXPECT_EQ(send(shard).kind, Kind::kTriggered);
  ASSERT_EQ(client_.calls("run").size(), 1u);
  EXPECT_EQ(client_.calls("run")[0].address, kB);
}

TEST_F(TriggerServiceTest, ShardBeyondTheCurrentListFails) {
  auto shard = pending([](admin::JobLog& l) {
    l.trigger_type = admin::TriggerType::kRetry;
    l.shard_index = 5;
    l.shard_total = 6;
  });
  EXPECT_EQ(send(shard).kind, Kind::kFailed);
  EXPECT_TRUE(contains(row(shard.id).trigger_msg, "no executor for shard 5")) << row(shard.id).trigger_msg;
}

TEST_F(TriggerServiceTest, FailoverWithNoLiveExecutorFailsWithEveryBeat) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kFailover; });
  client_.answer("beat", kA, Result::fail("connection refused A"));
  client_.answer("beat", kB, Result::fail("connection refused B"));
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kFailed);
  auto msg = row(fire.id).trigger_msg;
  EXPECT_TRUE(contains(msg, "connection refused A")) << msg;
  EXPECT_TRUE(contains(msg, "connection refused B")) << msg;
  EXPECT_TRUE(client_.calls("run").empty());
}

TEST_F(TriggerServiceTest, FailoverExplainsItsChoiceInTheTriggerMessage) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kFailover; });
  client_.answer("beat", kA, Result::fail("connection refused A"));
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  auto msg = row(fire.id).trigger_msg;
  EXPECT_TRUE(contains(msg, "Routing:\nbeat " + kA + ": code 500, msg: connection refused A\nbeat " + kB + ": code 200"))
      << msg;
  EXPECT_EQ(client_.calls("run").at(0).address, kB);
}

TEST_F(TriggerServiceTest, UnansweredRunThatTheExecutorHasIsTriggered) {
  client_.answer("run", kA, Result::fail("no answer within the read timeout", common::protocol::kTimeoutCode));
  auto fire = pending([](admin::JobLog& l) { l.executor_fail_retry_count = 3; });
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  auto logs = client_.calls("log");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].address, kA);
  EXPECT_EQ(logs[0].log.log_id, fire.id);
  EXPECT_EQ(logs[0].log.log_date_time, fire.scheduled_time);
  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kTriggered);
  EXPECT_TRUE(contains(l.trigger_msg, "Delivery check: the executor has run")) << l.trigger_msg;
  EXPECT_TRUE(retries().empty());
  EXPECT_EQ(client_.calls("run").size(), 1u);
}

TEST_F(TriggerServiceTest, UnansweredRunThatTheExecutorLacksFailsAndIsRetried) {
  client_.answer("run", kA, Result::fail("connection closed before a complete answer", common::protocol::kTimeoutCode));
  client_.answer_log(kA, FakeExecutorClient::no_such_log());
  auto fire = pending([](admin::JobLog& l) { l.executor_fail_retry_count = 1; });
  EXPECT_EQ(send(fire).kind, Kind::kFailed);
  EXPECT_EQ(row(fire.id).state, admin::FireState::kFailed);
  EXPECT_EQ(retries().size(), 1u);
}

// It may be running, or may never have arrived: not failed, not retried (a retry could run it
// twice); it waits for its result, unconfirmed, and the lost-result check settles it.
TEST_F(TriggerServiceTest, UnansweredRunWithSilentExecutorWaitsForItsResultUnconfirmed) {
  client_.answer("run", kA, Result::fail("no answer within the read timeout", common::protocol::kTimeoutCode));
  client_.answer_log(kA, FakeExecutorClient::LogAnswer::fail("cannot connect"));
  auto fire = pending([](admin::JobLog& l) { l.executor_fail_retry_count = 3; });
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kTriggered);
  EXPECT_EQ(l.trigger_code, 500);
  EXPECT_TRUE(contains(l.trigger_msg, "delivery unknown: executor " + kA + " answered neither /run nor /log"))
      << l.trigger_msg;
  EXPECT_TRUE(retries().empty()) << "a retry could run it twice";
  EXPECT_EQ(client_.calls("run").size(), 1u);
}

TEST_F(TriggerServiceTest, RefusedRunIsNotCheckedWithTheExecutor) {
  client_.answer("run", kA, Result::fail("cannot connect"));
  send(pending());
  EXPECT_TRUE(client_.calls("log").empty());
}

TEST_F(TriggerServiceTest, ResultArrivingBeforeTheRunAnswerIsKept) {
  auto fire = pending();
  client_.on_call([&](const FakeExecutorClient::Call& c) -> std::optional<Result> {
    if (c.kind == "run") {
      store_.update_log(fire.id, [](admin::JobLog& l) {
        l.state = admin::FireState::kSucceeded;
        l.handle_code = 200;
        l.handle_time = 5;
      });
    }
    return std::nullopt;
  });
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kSucceeded);
  EXPECT_EQ(l.trigger_code, 200);
  EXPECT_TRUE(contains(l.trigger_msg, "Code: 200"));
}

TEST_F(TriggerServiceTest, RunTakenOverDuringTheCallIsLeftToItsNewOwner) {
  auto fire = pending();
  client_.on_call([&](const FakeExecutorClient::Call& c) -> std::optional<Result> {
    if (c.kind == "run") store_.update_log(fire.id, [](admin::JobLog& l) { l.admin_node = "node-2"; });
    return std::nullopt;
  });
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kSending);
  EXPECT_EQ(l.trigger_code, 0);
}

TEST_F(TriggerServiceTest, FailedTriggerOfAFixDelayJobSetsItsNextTime) {
  set_job([](admin::Job& j) {
    j.schedule_type = admin::ScheduleType::kFixDelay;
    j.schedule_conf = "10";
    j.trigger_next_time = admin::kAwaitingCompletion;
  });
  client_.answer("run", kA, Result::fail("refused"));
  send(pending());
  EXPECT_EQ(store_.job(job_.id)->trigger_next_time, clock_.now_ms() + 10'000);
}

TEST_F(TriggerServiceTest, ShardsNotPostedBeforeTheSendDeadlineGoBackToPending) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kShardingBroadcast; });
  set_group([](admin::Group& g) { g.address_list = {kA, kB, kC}; });
  client_.on_call([&](const FakeExecutorClient::Call& c) -> std::optional<Result> {
    if (c.kind == "run") clock_.advance(8s);  // the first shard's executor takes 8 s to answer
    return std::nullopt;
  });
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  ASSERT_EQ(client_.calls("run").size(), 1u);
  EXPECT_EQ(row(fire.id).state, admin::FireState::kTriggered);
  std::vector<admin::JobLog> released;
  for (const auto& l : store_.logs()) {
    if (l.id != fire.id) released.push_back(l);
  }
  ASSERT_EQ(released.size(), 2u);
  for (const auto& l : released) {
    EXPECT_EQ(l.state, admin::FireState::kPending);
    EXPECT_FALSE(l.trigger_time);
    EXPECT_TRUE(contains(l.trigger_msg, "Not sent: too late after the claim by node-1")) << l.trigger_msg;
  }
  // A later attempt sends the shard alone, to its executor.
  client_.on_call({});
  EXPECT_EQ(send(released[1]).kind, Kind::kTriggered);
  auto runs = client_.calls("run");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].address, kC);
  EXPECT_EQ(runs[1].trigger.broadcast_index, 2);
  EXPECT_EQ(runs[1].trigger.broadcast_total, 3);
  EXPECT_EQ(store_.logs().size(), 3u);
}

TEST_F(TriggerServiceTest, FireIsNotClaimedWhileTheNodesLeaseIsEnding) {
  store_.set_lease_left(kNode, 1'500);
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  EXPECT_EQ(row(fire.id).state, admin::FireState::kPending);
  EXPECT_TRUE(client_.calls("run").empty());
}

TEST_F(TriggerServiceTest, PostsStartNoLaterThanTheLeaseAllows) {
  set_job([](admin::Job& j) { j.executor_route_strategy = admin::RouteStrategy::kShardingBroadcast; });
  store_.set_lease_left(kNode, 4'000);  // minus the 2 s margin: 2 s to post
  client_.on_call([&](const FakeExecutorClient::Call& c) -> std::optional<Result> {
    if (c.kind == "run") clock_.advance(2s);
    return std::nullopt;
  });
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  EXPECT_EQ(client_.calls("run").size(), 1u);
  EXPECT_EQ(store_.logs().size(), 2u);
  for (const auto& l : store_.logs()) EXPECT_EQ(l.state, l.id == fire.id ? admin::FireState::kTriggered : admin::FireState::kPending);
}

TEST_F(TriggerServiceTest, ConcurrentSendsOfOneFireCallTheExecutorOnce) {
  auto fire = pending();
  service();
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::atomic<int> triggered{0}, dropped{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      auto outcome = send(fire);
      (outcome.kind == Kind::kTriggered ? triggered : dropped)++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(triggered.load(), 1);
  EXPECT_EQ(dropped.load(), kThreads - 1);
  EXPECT_EQ(client_.calls("run").size(), 1u);
}

TEST(DeliveryCheck, TellsAKnownQueuedUnknownAndSilentRunApart) {
  FakeExecutorClient client;
  using K = admin::DeliveryCheck::Kind;
  EXPECT_EQ(admin::check_delivery(client, kA, "t", 1, 2).kind, K::kDelivered);

  common::protocol::LogResult queued;  // a cronwheel executor's answer for a queued run
  queued.from_line_num = 1;
  queued.to_line_num = 0;
  client.answer_log(kA, FakeExecutorClient::LogAnswer::success(queued));
  EXPECT_EQ(admin::check_delivery(client, kA, "t", 1, 2).kind, K::kDelivered);

  client.answer_log(kA, FakeExecutorClient::no_such_log());
  EXPECT_EQ(admin::check_delivery(client, kA, "t", 1, 2).kind, K::kNotDelivered);

  client.answer_log(kA, FakeExecutorClient::LogAnswer::fail("cannot connect"));
  auto silent = admin::check_delivery(client, kA, "t", 1, 2);
  EXPECT_EQ(silent.kind, K::kUnknown);
  EXPECT_TRUE(contains(silent.message, "cannot connect")) << silent.message;

  auto calls = client.calls("log");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].access_token, "t");
  EXPECT_EQ(calls[0].log.log_id, 1);
  EXPECT_EQ(calls[0].log.log_date_time, 2);
  EXPECT_EQ(calls[0].log.from_line_num, 1);
}

TEST(SplitAddresses, TrimsAndDropsEmptyEntries) {
  EXPECT_EQ(admin::split_addresses(""), std::vector<std::string>{});
  EXPECT_EQ(admin::split_addresses(" , ,"), std::vector<std::string>{});
  EXPECT_EQ(admin::split_addresses("http://a/"), std::vector<std::string>{"http://a/"});
  EXPECT_EQ(admin::split_addresses(" http://a/ ,http://b/,\thttp://c/ "),
            (std::vector<std::string>{"http://a/", "http://b/", "http://c/"}));
}


// A fire whose second has passed goes out at once, even when handed on with a later instant
// (a manual trigger the ring handed on before the coming second): its trigger time is now, so
// its result can never come before it.
TEST_F(TriggerServiceTest, AFireOfAPastSecondIsClaimedWithTheTimeItIsPostedAt) {
  auto late = pending([&](admin::JobLog& l) { l.scheduled_time = clock_.now_ms() - 1500; });
  const std::int64_t coming_second = (clock_.now_ms() / 1000 + 1) * 1000;
  auto prepared = service().prepare({{late.id, late.job_id, late.scheduled_time}}, coming_second);
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_EQ(row(late.id).trigger_time, clock_.now_ms());
}

// An executor that refuses the connection provably never got the run: the next address takes it.
TEST_F(TriggerServiceTest, ARunNotDeliveredForARefusedConnectionGoesToTheNextAddress) {
  client_.answer("run", kA, Result::fail("connection refused", admin::kNotReachedCode));
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  auto runs = client_.calls("run");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].address, kA);
  EXPECT_EQ(runs[1].address, kB);
  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kTriggered);
  EXPECT_EQ(l.executor_address, kB) << "the row names the executor that has the run";
  EXPECT_TRUE(contains(l.trigger_msg, "Not reached: " + std::string(kA))) << l.trigger_msg;
  EXPECT_TRUE(suspects_.suspect(kA));

  // The next fire is routed around the suspect at once (FIRST would pick kA).
  auto next = pending();
  EXPECT_EQ(send(next).kind, Kind::kTriggered);
  EXPECT_EQ(client_.calls("run").back().address, kB);
  EXPECT_EQ(client_.calls("run").size(), 3u);
  // Until it registers again.
  suspects_.cleared(kA);
  client_.answer("run", kA, Result::success());
  send(pending());
  EXPECT_EQ(client_.calls("run").back().address, kA);
}

TEST_F(TriggerServiceTest, ARunFailsOnlyWhenNoAddressOfItsGroupTakesIt) {
  client_.answer("run", kA, Result::fail("connection refused", admin::kNotReachedCode));
  client_.answer("run", kB, Result::fail("connection refused", admin::kNotReachedCode));
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kFailed);
  EXPECT_EQ(client_.calls("run").size(), 2u);
  EXPECT_EQ(row(fire.id).state, admin::FireState::kFailed);
}

TEST_F(TriggerServiceTest, AnExecutorThatAnsweredARefusalIsNotFailedOver) {
  client_.answer("run", kA, Result::fail("job handler not found"));
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kFailed);
  EXPECT_EQ(client_.calls("run").size(), 1u) << "it was reached: its answer stands";
  EXPECT_FALSE(suspects_.suspect(kA));
}

// Prepared ahead of the instant: load and claim for the lot, then only the POST.
TEST_F(TriggerServiceTest, PreparedFiresAreClaimedAheadAndPostedWhenDelivered) {
  const std::int64_t due = clock_.now_ms() + 300;
  auto a = pending([&](admin::JobLog& l) { l.scheduled_time = due; });
  auto b = pending([&](admin::JobLog& l) { l.scheduled_time = due; });
  std::vector<std::string> calls;
  store_.before_call([&](std::string_view method) { calls.emplace_back(method); });

  auto prepared = service().prepare({{a.id, a.job_id, a.scheduled_time}, {b.id, b.job_id, b.scheduled_time}}, due);

  ASSERT_EQ(prepared.size(), 2u);
  for (const auto& p : prepared) {
    EXPECT_FALSE(p.ended);
    EXPECT_TRUE(p.send);
  }
  EXPECT_EQ(prepared[0].fire.log_id, a.id);
  EXPECT_EQ(prepared[1].fire.log_id, b.id);
  EXPECT_TRUE(client_.calls("run").empty());  // nothing posted yet
  EXPECT_EQ(row(a.id).state, admin::FireState::kSending);
  EXPECT_EQ(row(a.id).trigger_time, due);  // the instant it is posted at, not the claim's
  EXPECT_EQ(row(a.id).executor_address, kA);

  calls.clear();
  clock_.advance(300ms);
  EXPECT_EQ(service().deliver(prepared[1]).kind, Kind::kTriggered);
  EXPECT_EQ(service().deliver(prepared[0]).kind, Kind::kTriggered);
  service().flush();  // accepted answers are written by the recorder thread
  EXPECT_EQ(calls, (std::vector<std::string>{"record_triggered", "record_triggered"}));  // no load, no claim
  auto runs = client_.calls("run");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].trigger.log_id, b.id);
  EXPECT_EQ(runs[1].trigger.log_id, a.id);
  EXPECT_EQ(runs[1].trigger.log_date_time, a.scheduled_time);
  auto l = row(a.id);
  EXPECT_EQ(l.state, admin::FireState::kTriggered);
  EXPECT_TRUE(contains(l.trigger_msg, "Route strategy: FIRST")) << l.trigger_msg;
  EXPECT_TRUE(contains(l.trigger_msg, "Address: " + kA)) << l.trigger_msg;
  EXPECT_TRUE(contains(l.trigger_msg, "Code: 200")) << l.trigger_msg;
}

TEST_F(TriggerServiceTest, PrepareSettlesWhatCannotGoAndLeavesWhatMustAskExecutorsToDelivery) {
  auto mine = pending();
  auto theirs = pending([](admin::JobLog& l) { l.admin_node = "node-2"; });
  auto nowhere = pending([](admin::JobLog& l) { l.executor_address = "http://10.9.9.9:9999/"; });
  admin::Job failover = job_;
  failover.id = 0;
  failover.name.clear();
  failover.executor_route_strategy = admin::RouteStrategy::kFailover;
  failover = store_.put_job(failover);
  auto asks = pending([&](admin::JobLog& l) { l.job_id = failover.id; });

  auto prepared = service().prepare({{mine.id, mine.job_id, mine.scheduled_time},
                                     {theirs.id, theirs.job_id, theirs.scheduled_time},
                                     {nowhere.id, nowhere.job_id, nowhere.scheduled_time},
                                     {asks.id, asks.job_id, asks.scheduled_time}},
                                    clock_.now_ms());

  ASSERT_EQ(prepared.size(), 4u);
  EXPECT_TRUE(prepared[0].send);
  ASSERT_TRUE(prepared[1].ended);
  EXPECT_EQ(prepared[1].ended->kind, Kind::kDropped);
  EXPECT_EQ(row(theirs.id).state, admin::FireState::kPending);
  ASSERT_TRUE(prepared[2].ended);
  EXPECT_EQ(prepared[2].ended->kind, Kind::kFailed);
  EXPECT_EQ(row(nowhere.id).state, admin::FireState::kFailed);
  EXPECT_FALSE(prepared[3].ended);  // FAILOVER beats executors first: sent whole when delivered
  EXPECT_FALSE(prepared[3].send);
  EXPECT_EQ(row(asks.id).state, admin::FireState::kPending);
  EXPECT_TRUE(client_.calls("beat").empty());

  EXPECT_EQ(service().deliver(prepared[3]).kind, Kind::kTriggered);
  service().flush();
  EXPECT_EQ(client_.calls("beat").size(), 1u);
  EXPECT_EQ(row(asks.id).state, admin::FireState::kTriggered);
}

TEST_F(TriggerServiceTest, APreparedFireReleasedGoesBackToPendingWithItsExecutor) {
  auto fire = pending();
  auto prepared = service().prepare({{fire.id, fire.job_id, fire.scheduled_time}}, clock_.now_ms());
  ASSERT_TRUE(prepared[0].send);
  service().release(prepared[0]);
  auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kPending);
  EXPECT_EQ(l.executor_address, kA);
  EXPECT_TRUE(contains(l.trigger_msg, "back to pending")) << l.trigger_msg;
  EXPECT_TRUE(client_.calls("run").empty());
}

TEST_F(TriggerServiceTest, APreparedFireDeliveredAfterItsSendDeadlineIsNotPosted) {
  auto fire = pending();
  auto prepared = service().prepare({{fire.id, fire.job_id, fire.scheduled_time}}, clock_.now_ms());
  clock_.advance(9s);  // past the 8 s send deadline
  EXPECT_EQ(service().deliver(prepared[0]).kind, Kind::kDropped);
  EXPECT_TRUE(client_.calls("run").empty());
  EXPECT_EQ(row(fire.id).state, admin::FireState::kPending);
}

// The answers of delivered fires are written in the background, together; the service writes
// what is queued before it goes away.
TEST_F(TriggerServiceTest, AcceptedAnswersOfDeliveredFiresAreWrittenTogetherAndBeforeTheServiceEnds) {
  std::vector<admin::PendingFire> fires;
  for (int i = 0; i < 5; ++i) {
    auto l = pending();
    fires.push_back({l.id, l.job_id, l.scheduled_time});
  }
  auto prepared = service().prepare(fires, clock_.now_ms());
  std::atomic<bool> hold{true};
  store_.before_call([&](std::string_view method) {
    while (method == "record_triggered" && hold.load()) std::this_thread::sleep_for(1ms);
  });
  for (const auto& p : prepared) EXPECT_EQ(service().deliver(p).kind, Kind::kTriggered);
  EXPECT_EQ(client_.calls("run").size(), 5u);  // posted without waiting for the database
  hold = false;
  service_.reset();  // the destructor writes what is queued
  for (const auto& f : fires) EXPECT_EQ(row(f.log_id).state, admin::FireState::kTriggered);
}

TEST_F(TriggerServiceTest, UnreachableDatabaseWhilePreparingLeavesTheFiresPending) {
  for (auto failing : {"load_pending", "claim"}) {
    auto fire = pending();
    store_.before_call([&](std::string_view method) {
      if (method == failing) throw admin::StoreUnavailable("database connection lost");
    });
    auto prepared = service().prepare({{fire.id, fire.job_id, fire.scheduled_time}}, clock_.now_ms());
    ASSERT_TRUE(prepared[0].ended) << failing;
    EXPECT_EQ(prepared[0].ended->kind, Kind::kDropped);
    EXPECT_EQ(row(fire.id).state, admin::FireState::kPending) << failing;
    store_.before_call({});
  }
  EXPECT_TRUE(client_.calls("run").empty());
}

// Concurrency limits (admin/model/slots.h): a fire of a limited group or job holds a slot
// before it goes out.
TEST_F(TriggerServiceTest, AFireOfALimitedGroupWithoutASlotWaitsForOneAndIsNotSent) {
  set_group([](admin::Group& g) { g.max_running = 2; });
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  EXPECT_TRUE(client_.calls("run").empty());
  const auto l = row(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kPending);
  EXPECT_TRUE(l.waiting_slot);
  EXPECT_TRUE(contains(l.trigger_msg, "waiting for a slot: group demo-app runs at most 2 at once")) << l.trigger_msg;
  EXPECT_EQ(slot_waits_, (std::vector<std::int64_t>{group_.id})) << "the node's dispatcher is woken";
  // Sent again before it is admitted: it stays waiting, once.
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  EXPECT_EQ(slot_waits_.size(), 1u);
  EXPECT_TRUE(client_.calls("run").empty());
}

TEST_F(TriggerServiceTest, AFireOfAJobWithALimitWaitsToo) {
  set_job([](admin::Job& j) { j.max_concurrent = 1; });
  auto fire = pending();
  EXPECT_EQ(send(fire).kind, Kind::kDropped);
  const auto l = row(fire.id);
  EXPECT_TRUE(l.waiting_slot);
  EXPECT_TRUE(contains(l.trigger_msg, "waiting for a slot: job " + std::to_string(job_.id) + " runs at most 1 at once"))
      << l.trigger_msg;
}

TEST_F(TriggerServiceTest, AFireHoldingASlotIsSent) {
  set_group([](admin::Group& g) { g.max_running = 2; });
  auto fire = pending([](admin::JobLog& l) { l.slot_admitted = true; });
  EXPECT_EQ(send(fire).kind, Kind::kTriggered);
  EXPECT_EQ(client_.calls("run").size(), 1u);
  EXPECT_TRUE(slot_waits_.empty());
}

// ---- Lead dispatch ----

class LeadDispatchTest : public TriggerServiceTest {
 protected:
  admin::TriggerService& leading(std::vector<std::string> leads) {
    admin::TriggerService::Options o;
    o.node_id = kNode;
    o.access_token = "admin-token";
    o.record_backoff = 0ms;
    o.random = [](std::size_t) { return std::size_t{0}; };
    o.takes_lead = [leads](const std::string& address) {
      return std::find(leads.begin(), leads.end(), address) != leads.end();
    };
    service_ = std::make_unique<admin::TriggerService>(store_, client_, clock_, o);
    return *service_;
  }
  // Fires due at the coming second, prepared ahead of it.
  std::vector<admin::PreparedFire> prepared(int n) {
    instant_ = (clock_.now_ms() / 1000 + 1) * 1000;
    std::vector<admin::PendingFire> fires;
    for (int i = 0; i < n; ++i) {
      auto l = pending([&](admin::JobLog& r) { r.scheduled_time = instant_; });
      fires.push_back({l.id, l.job_id, l.scheduled_time});
    }
    return service().prepare(fires, instant_);
  }
  std::int64_t instant_ = 0;
};

TEST_F(LeadDispatchTest, FiresOfAnExecutorThatTakesLeadAreHandedOverInOneRequestAndRecordedTriggeredAtTheirInstant) {
  leading({kA});
  auto fires = prepared(3);
  ASSERT_EQ(fires.size(), 3u);
  const auto key = service().lead_key(fires[0]);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(service().lead_key(fires[1]), key) << "same executor, same token: one request";
  const std::vector<std::int64_t> at(3, instant_);
  auto outcomes = service().lead(fires, at);
  service().flush();
  auto calls = client_.calls("lead");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].address, kA);
  EXPECT_EQ(calls[0].access_token, "admin-token");
  EXPECT_EQ(calls[0].lead.admin_time, clock_.now_ms());
  ASSERT_EQ(calls[0].lead.fires.size(), 3u);
  EXPECT_TRUE(client_.calls("run").empty()) << "nothing posted at the instant";
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(calls[0].lead.fires[i].fire_at, instant_);
    EXPECT_EQ(calls[0].lead.fires[i].trigger.log_id, fires[i].fire.log_id);
    EXPECT_EQ(calls[0].lead.fires[i].trigger.executor_handler, "demoHandler");
    ASSERT_TRUE(outcomes[i].has_value());
    EXPECT_EQ(outcomes[i]->kind, Kind::kTriggered);
    const auto l = row(fires[i].fire.log_id);
    EXPECT_EQ(l.state, admin::FireState::kTriggered);
    EXPECT_EQ(l.trigger_time, instant_) << "it starts at its instant, not when it was handed over";
    EXPECT_TRUE(contains(l.trigger_msg, "Lead: handed over")) << l.trigger_msg;
  }
}

// The trigger pools count their room per request: prepare() asks them of each fire once it knows
// the executor (with the key of its hand-over request), before claiming; a fire refused is not
// written at all, and a fire that failed routing is not asked.
TEST_F(LeadDispatchTest, PrepareAsksAdmitWithTheLeadKeyBeforeTheClaimAndLeavesARefusedFireUntouched) {
  leading({kA});
  instant_ = (clock_.now_ms() / 1000 + 1) * 1000;
  admin::Job failover = job_;
  failover.id = 0;
  failover.name.clear();
  failover.executor_route_strategy = admin::RouteStrategy::kFailover;
  failover = store_.put_job(failover);
  std::vector<admin::JobLog> rows;
  for (int i = 0; i < 3; ++i) rows.push_back(pending([&](admin::JobLog& r) { r.scheduled_time = instant_; }));
  rows.push_back(pending([&](admin::JobLog& r) {
    r.scheduled_time = instant_;
    r.job_id = failover.id;
  }));
  rows.push_back(pending([&](admin::JobLog& r) {
    r.scheduled_time = instant_;
    r.executor_address = "http://10.9.9.9:9999/";  // not in the group: fails its routing
  }));
  std::vector<admin::PendingFire> fires;
  for (const auto& r : rows) fires.push_back({r.id, r.job_id, r.scheduled_time});
  const admin::JobLog untouched = row(rows[1].id);
  std::vector<std::pair<std::size_t, std::optional<std::string>>> asked;
  auto prepared = service().prepare(fires, instant_, [&](std::size_t i, const std::optional<std::string>& key) {
    asked.emplace_back(i, key);
    return i != 1 && i != 3;
  });

  ASSERT_EQ(prepared.size(), 5u);
  ASSERT_EQ(asked.size(), 4u) << "the fire without an executor is not asked";
  const auto key = service().lead_key(prepared[0]);
  ASSERT_TRUE(key.has_value());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(asked[i].first, i);
    EXPECT_EQ(asked[i].second, key) << "asked with the key lead_key() answers once claimed";
  }
  EXPECT_EQ(asked[3], (std::pair<std::size_t, std::optional<std::string>>{3, std::nullopt})) << "sent whole: no key";
  EXPECT_TRUE(prepared[0].send);
  EXPECT_TRUE(prepared[2].send);
  for (std::size_t i : {1u, 3u}) {
    EXPECT_TRUE(prepared[i].refused);
    EXPECT_FALSE(prepared[i].send);
    EXPECT_FALSE(prepared[i].ended);
  }
  EXPECT_EQ(row(rows[1].id), untouched) << "refused before its claim: not written";
  EXPECT_EQ(row(rows[3].id).state, admin::FireState::kPending);
  ASSERT_TRUE(prepared[4].ended);
  EXPECT_FALSE(prepared[4].refused);
  EXPECT_EQ(prepared[4].ended->kind, Kind::kFailed);
}

// A workflow node's run counts in the hand-off histogram when its executor accepts it, whichever
// way it went: several due at once for a lead executor go in one hand-over.
TEST_F(LeadDispatchTest, AWorkflowNodeHandedOverCountsAsAHandOffAsOnePostedDoes) {
  leading({kA});
  auto child = [&] {
    auto l = pending([&](admin::JobLog& r) {
      r.trigger_type = admin::TriggerType::kWorkflow;
      r.parent_log_id = 1;
      r.scheduled_time = clock_.now_ms() - 40;  // its parent's end, recorded 40 ms ago
    });
    return admin::PendingFire{l.id, l.job_id, l.scheduled_time};
  };
  ASSERT_EQ(service().send(child()).kind, Kind::kTriggered);
  EXPECT_EQ(service().workflow_handoff().count, 1u);
  auto fires = service().prepare({child(), child()}, clock_.now_ms());
  auto outcomes = service().lead(fires, {fires[0].fire.scheduled_time, fires[1].fire.scheduled_time});
  ASSERT_EQ(client_.calls("lead").size(), 1u);
  ASSERT_TRUE(outcomes[0] && outcomes[1]);
  EXPECT_EQ(outcomes[1]->kind, Kind::kTriggered);
  const auto handoff = service().workflow_handoff();
  EXPECT_EQ(handoff.count, 3u);
  EXPECT_NEAR(handoff.sum, 3 * 0.040, 1e-9);
  auto plain = pending();
  ASSERT_EQ(send(plain).kind, Kind::kTriggered);
  EXPECT_EQ(service().workflow_handoff().count, 3u) << "a scheduled fire is no hand-off";
}

// Fires already due (a node behind, or its feeder's late fires) go in one request too, each with
// its instant, which has passed: the executor starts them at once. Their trigger time is their
// claim, the run's message says how late they were handed over.
TEST_F(LeadDispatchTest, FiresAlreadyDueAreHandedOverForTheExecutorToStartAtOnce) {
  leading({kA});
  instant_ = (clock_.now_ms() / 1000 - 2) * 1000;
  std::vector<admin::PendingFire> due;
  for (int i = 0; i < 2; ++i) {
    auto l = pending([&](admin::JobLog& r) { r.scheduled_time = instant_; });
    due.push_back({l.id, l.job_id, l.scheduled_time});
  }
  auto fires = service().prepare(due, clock_.now_ms());
  ASSERT_EQ(fires.size(), 2u);
  auto outcomes = service().lead(fires, {instant_, instant_});
  service().flush();
  auto calls = client_.calls("lead");
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(calls[0].lead.fires.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(calls[0].lead.fires[i].fire_at, instant_);
    ASSERT_TRUE(outcomes[i].has_value());
    EXPECT_EQ(outcomes[i]->kind, Kind::kTriggered);
    const auto l = row(fires[i].fire.log_id);
    EXPECT_EQ(l.state, admin::FireState::kTriggered);
    EXPECT_EQ(l.trigger_time, clock_.now_ms()) << "claimed and handed over now";
    EXPECT_TRUE(contains(l.trigger_msg, "Lead: handed over " + std::to_string(clock_.now_ms() - instant_) +
                                            " ms after its instant, with others due; the executor starts it at once"))
        << l.trigger_msg;
  }
  EXPECT_TRUE(client_.calls("run").empty());
}

TEST_F(LeadDispatchTest, AnExecutorThatDoesNotTakeLeadHasNoLeadKey) {
  leading({kB});  // FIRST routes to kA
  auto fires = prepared(1);
  EXPECT_FALSE(service().lead_key(fires[0]).has_value());
  admin::TriggerService::Options plain;
  plain.node_id = kNode;
  service_ = std::make_unique<admin::TriggerService>(store_, client_, clock_, plain);
  auto more = prepared(1);
  EXPECT_FALSE(service().lead_key(more[0]).has_value()) << "lead dispatch off";
}

TEST_F(LeadDispatchTest, FiresTheExecutorRefusedOrDidNotAnswerForAreLeftToTheirInstantUntouched) {
  leading({kA});
  for (const auto& refusal : {Result::fail("lead dispatch refused: clock unknown"),
                              Result::fail("timed out", common::protocol::kTimeoutCode),
                              Result::fail("connection refused", admin::kNotReachedCode)}) {
    client_.answer("lead", kA, refusal);
    auto fires = prepared(2);
    auto outcomes = service().lead(fires, {instant_, instant_});
    service().flush();
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_FALSE(outcomes[i].has_value()) << refusal.msg;
      EXPECT_EQ(row(fires[i].fire.log_id).state, admin::FireState::kSending) << "still claimed, for /run at its instant";
    }
    // Delivered at the instant as any prepared fire: /run, answered success by an executor that
    // holds it after all.
    EXPECT_EQ(service().deliver(fires[0]).kind, Kind::kTriggered);
  }
  // One fire refused, the other accepted.
  client_.answer("lead", kA, Result::success());
  auto fires = prepared(2);
  const std::int64_t refused = fires[1].fire.log_id;
  client_.on_lead([refused](const FakeExecutorClient::Call& c) -> std::optional<FakeExecutorClient::LeadResult> {
    common::protocol::LeadAnswer answer;
    for (const auto& f : c.lead.fires) {
      if (f.trigger.log_id == refused) {
        answer.refused.push_back({f.trigger.log_id, "50 fires held already"});
      } else {
        answer.accepted.push_back(f.trigger.log_id);
      }
    }
    return FakeExecutorClient::LeadResult::success(answer);
  });
  auto outcomes = service().lead(fires, {instant_, instant_});
  service().flush();
  ASSERT_TRUE(outcomes[0].has_value());
  EXPECT_EQ(outcomes[0]->kind, Kind::kTriggered);
  EXPECT_FALSE(outcomes[1].has_value());
  EXPECT_EQ(row(refused).state, admin::FireState::kSending);
}

TEST_F(LeadDispatchTest, AFirePastItsSendDeadlineIsNotHandedOverButGoesBackToPending) {
  leading({kA});
  auto fires = prepared(2);
  clock_.advance(9s);  // past the 8 s send deadline
  auto outcomes = service().lead(fires, {instant_, instant_});
  EXPECT_TRUE(client_.calls("lead").empty());
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(outcomes[i].has_value());
    EXPECT_EQ(outcomes[i]->kind, Kind::kDropped);
    EXPECT_EQ(row(fires[i].fire.log_id).state, admin::FireState::kPending);
  }
}

// A burst handed over seconds ahead: only the fires whose every executor takes lead dispatch are
// claimed, each for its own second; every other one is left pending and untouched for its second.
TEST_F(LeadDispatchTest, PrepareLeadClaimsOnlyFiresWhoseExecutorsAllTakeLeadEachForItsOwnSecond) {
  leading({kA, kB});
  const std::int64_t second = (clock_.now_ms() / 1000 + 3) * 1000;
  auto due = pending([&](admin::JobLog& l) { l.scheduled_time = second; });
  auto between = pending([&](admin::JobLog& l) { l.scheduled_time = second + 400; });  // due at the next second
  auto theirs = pending([&](admin::JobLog& l) {
    l.scheduled_time = second;
    l.admin_node = "node-2";
  });
  admin::Job broadcast = job_;
  broadcast.id = 0;
  broadcast.name.clear();
  broadcast.executor_route_strategy = admin::RouteStrategy::kShardingBroadcast;
  broadcast = store_.put_job(broadcast);
  auto shards = pending([&](admin::JobLog& l) {
    l.job_id = broadcast.id;
    l.scheduled_time = second;
  });
  auto elsewhere = pending([&](admin::JobLog& l) {
    l.scheduled_time = second;
    l.executor_address = "http://10.9.9.9:9999/";  // not in the group: fails at its second, not now
  });
  auto as_row = [](const admin::JobLog& l) { return admin::PendingFire{l.id, l.job_id, l.scheduled_time}; };
  const auto before_shards = row(shards.id), before_elsewhere = row(elsewhere.id);

  auto prepared = service().prepare_lead({as_row(due), as_row(between), as_row(theirs), as_row(shards), as_row(elsewhere)});

  ASSERT_EQ(prepared.size(), 5u);
  EXPECT_TRUE(prepared[0].send && prepared[1].send);
  EXPECT_EQ(row(due.id).state, admin::FireState::kSending);
  EXPECT_EQ(row(due.id).trigger_time, second) << "claimed for its own second";
  EXPECT_EQ(row(between.id).trigger_time, second + 1000) << "never before its scheduled time";
  EXPECT_TRUE(service().lead_key(prepared[0]).has_value());
  ASSERT_TRUE(prepared[2].ended.has_value()) << "not this node's: settled, dropped";
  EXPECT_EQ(prepared[2].ended->kind, Kind::kDropped);
  for (std::size_t i : {3u, 4u}) {
    EXPECT_FALSE(prepared[i].ended.has_value()) << i;
    EXPECT_FALSE(prepared[i].send) << i;
  }
  EXPECT_EQ(row(shards.id), before_shards) << "a broadcast is left for its second, untouched";
  EXPECT_EQ(row(elsewhere.id), before_elsewhere) << "left untouched, to fail at its second";
  EXPECT_TRUE(client_.calls("run").empty());

  // A group with one executor that does not take lead dispatch: nothing is claimed ahead.
  leading({kA});
  auto mixed = pending([&](admin::JobLog& l) { l.scheduled_time = second; });
  const auto before_mixed = row(mixed.id);
  auto left = service().prepare_lead({as_row(mixed)});
  ASSERT_EQ(left.size(), 1u);
  EXPECT_FALSE(left[0].ended.has_value());
  EXPECT_FALSE(left[0].send);
  EXPECT_EQ(row(mixed.id), before_mixed);
}

TEST_F(LeadDispatchTest, PrepareLeadReadsNothingWhileNoExecutorTakesLead) {
  admin::TriggerService::Options o;
  o.node_id = kNode;
  o.takes_lead = [](const std::string&) { return true; };
  o.any_takes_lead = [] { return false; };
  service_ = std::make_unique<admin::TriggerService>(store_, client_, clock_, o);
  auto fire = pending([&](admin::JobLog& l) { l.scheduled_time = clock_.now_ms() + 3000; });
  std::vector<std::string> calls;
  store_.before_call([&](std::string_view method) { calls.emplace_back(method); });
  auto prepared = service().prepare_lead({{fire.id, fire.job_id, fire.scheduled_time}});
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_FALSE(prepared[0].ended.has_value());
  EXPECT_FALSE(prepared[0].send);
  EXPECT_TRUE(calls.empty());
}

TEST_F(LeadDispatchTest, PrepareLeadLeavesEveryFireUntouchedWhenTheDatabaseIsUnreachable) {
  leading({kA, kB});
  for (auto failing : {"load_pending", "claim"}) {
    auto fire = pending([&](admin::JobLog& l) { l.scheduled_time = clock_.now_ms() + 3000; });
    store_.before_call([&](std::string_view method) {
      if (method == failing) throw admin::StoreUnavailable("database connection lost");
    });
    auto prepared = service().prepare_lead({{fire.id, fire.job_id, fire.scheduled_time}});
    ASSERT_EQ(prepared.size(), 1u);
    EXPECT_FALSE(prepared[0].ended.has_value()) << failing << ": left for its second, not dropped";
    EXPECT_FALSE(prepared[0].send) << failing;
    EXPECT_EQ(row(fire.id).state, admin::FireState::kPending) << failing;
    store_.before_call({});
  }
}

}  // namespace
}  // namespace cronwheel::testing
