// PgTriggerStore on a real PostgreSQL: the claim guard (racing senders, takeovers, broadcast
// rows), recording answers, retries, and the TriggerService over it.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/fire.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_trigger_store.h"
#include "admin/trigger/trigger_service.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_executor_client.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

using namespace std::chrono_literals;
using admin::TriggerStore;
using Recorded = TriggerStore::Recorded;

const std::string kNode = "node-1";
const std::string kOther = "node-2";
const std::vector<std::string> kAddresses = {"http://10.0.0.1:9999/", "http://10.0.0.2:9999/",
                                             "http://10.0.0.3:9999/"};

void prepare_all(pqxx::connection& c) {
  admin::PgStores::prepare(c);
  admin::PgTriggerStore::prepare(c);
  admin::PgCompletionStore::prepare(c);
}

class TriggerPgTest : public ::testing::Test {
 protected:
  admin::FollowUpPlanner failure_plan(admin::RunEnd end = admin::RunEnd::kTriggerFailed) {
    return admin::follow_ups_of(end, clock_.now_ms(), kNode);
  }
  TriggerPgTest() : migrated_(migrate_schema(db_)), database_(pool_options(db_, 8), &prepare_all), stores_(database_, clock_), store_(database_) {
    admin::Group g;
    g.app_name = "demo-app";
    g.title = "Demo";
    g.address_type = 1;
    g.address_list = kAddresses;
    g.access_token = "group-token";
    group_ = stores_.groups().create(g, system());

    admin::Job j;
    j.job_group = group_.id;
    j.job_desc = "demo";
    j.schedule_type = admin::ScheduleType::kCron;
    j.schedule_conf = "* * * * * ?";
    j.executor_handler = "demoHandler";
    j.executor_param = "job-param";
    j.retry_interval = 30;
    job_ = stores_.jobs().create(j, system());
  }

  static admin::Actor system() { return admin::Actor{std::nullopt, "system", ""}; }

  // A pending fire owned by `node`, as the schedule thread writes it.
  admin::JobLog pending(const std::string& node = kNode, int retries = 0, std::int64_t scheduled = 1'700'000'000'000,
                        admin::TriggerType type = admin::TriggerType::kSchedule) {
    auto id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node,"
                        " executor_fail_retry_count) VALUES ($1, $2, 'pending', $3, $4, $5, $6) RETURNING id",
                        group_.id, job_.id, admin::pg::text(type), scheduled, node, retries)[0]
          .as<std::int64_t>();
    });
    return log(id);
  }
  admin::JobLog log(std::int64_t id) { return *stores_.logs().get(id); }
  std::int64_t count(const std::string& sql) {
    return database_.read([&](pqxx::read_transaction& tx) { return tx.exec1(sql)[0].as<std::int64_t>(); });
  }
  void exec(const std::string& sql) {
    database_.transact([&](pqxx::work& tx) { tx.exec(sql); });
  }

  TriggerStore::Claim claim_of(const admin::JobLog& l, std::vector<std::string> addresses = {kAddresses[0]},
                               const std::string& node = kNode) {
    TriggerStore::Claim c;
    c.log_id = l.id;
    c.node_id = node;
    c.trigger_time = clock_.now_ms();
    c.executor_handler = "demoHandler";
    c.executor_param = "p";
    c.addresses = std::move(addresses);
    return c;
  }


  TestDatabase db_;
  bool migrated_;
  FakeClock clock_;
  admin::Database database_;
  admin::PgStores stores_;
  admin::PgTriggerStore store_;
  admin::Group group_;
  admin::Job job_;
};

// Concurrency limits (sql/0023_concurrency_limits.sql).
TEST_F(TriggerPgTest, AFireWaitsForASlotOnceAndTheFeederNoLongerReadsIt) {
  auto fire = pending(kNode, 0, 1'700'000'000'000);
  EXPECT_TRUE(store_.wait_for_slot(fire.id, kNode, "waiting for a slot: group demo-app runs at most 1 at once"));
  EXPECT_FALSE(store_.wait_for_slot(fire.id, kNode, "again")) << "already waiting";
  const auto l = log(fire.id);
  EXPECT_TRUE(l.waiting_slot);
  EXPECT_EQ(l.state, admin::FireState::kPending);
  EXPECT_EQ(l.trigger_msg, "waiting for a slot: group demo-app runs at most 1 at once");
  EXPECT_FALSE(store_.wait_for_slot(pending(kOther, 0, 1'700'000'001'000).id, kNode, "not ours")) << "another node's";
  EXPECT_EQ(store_.waiting_by_group(), (std::map<std::int64_t, std::int64_t>{{group_.id, 1}}));
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'pending' AND NOT waiting_slot AND admin_node = '" +
                  kNode + "'"),
            0);
  // A waiting fire cancelled is no longer waiting, whatever its mark says.
  exec("UPDATE job_log SET state = 'cancelled' WHERE id = " + std::to_string(fire.id));
  EXPECT_TRUE(store_.waiting_by_group().empty());
}

TEST_F(TriggerPgTest, AnAdmissionGivesTheFreeSlotsInPriorityOrderToThisNode) {
  exec("UPDATE job_group SET max_running = 2 WHERE id = " + std::to_string(group_.id));
  admin::Job urgent = job_;
  urgent.id = 0;
  urgent.name = "urgent";
  urgent.priority = 10;
  urgent = stores_.jobs().create(urgent, system());
  std::vector<std::int64_t> waiting_ids;
  for (std::int64_t t : {1'000, 2'000, 3'000}) {
    auto fire = pending(kOther, 0, 1'700'000'000'000 + t);
    waiting_ids.push_back(fire.id);
  }
  const auto urgent_fire = database_.transact([&](pqxx::work& tx) {
    return tx
        .exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node)"
                      " VALUES ($1, $2, 'pending', 'API', 1700000009000, $3) RETURNING id",
                      group_.id, urgent.id, kOther)[0]
        .as<std::int64_t>();
  });
  for (auto id : waiting_ids) ASSERT_TRUE(store_.wait_for_slot(id, kOther, "waiting"));
  ASSERT_TRUE(store_.wait_for_slot(urgent_fire, kOther, "waiting"));
  // One run of the group holds a slot already.
  auto running = pending(kNode, 0, 1'699'999'000'000);
  exec("UPDATE job_log SET slot_admitted = true, state = 'triggered', trigger_time = now() WHERE id = " +
       std::to_string(running.id));

  std::vector<admin::SlotCandidate> seen;
  int limit_seen = -1;
  auto admitted = store_.admit(group_.id, kNode, 10,
                               [&](int limit, const std::map<std::int64_t, int>& held,
                                   std::vector<admin::SlotCandidate> candidates) {
                                 limit_seen = limit;
                                 seen = candidates;
                                 EXPECT_EQ(held, (std::map<std::int64_t, int>{{job_.id, 1}}));
                                 return admin::admit_waiting(limit, held, std::move(candidates));
                               });
  ASSERT_TRUE(admitted);
  EXPECT_EQ(limit_seen, 2);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].log_id, urgent_fire) << "in slot order: the urgent job first";
  EXPECT_EQ(seen[0].priority, 10);
  ASSERT_EQ(admitted->size(), 1u) << "one slot was free";
  EXPECT_EQ((*admitted)[0].log_id, urgent_fire);
  const auto row = log(urgent_fire);
  EXPECT_TRUE(row.slot_admitted);
  EXPECT_FALSE(row.waiting_slot);
  EXPECT_EQ(row.admin_node, kNode);
  // The group is full now: the next admission gives nothing.
  auto none = store_.admit(group_.id, kNode, 10, admin::admit_waiting);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(TriggerPgTest, AGroupAnotherNodeAdmitsForIsSkippedNotWaitedFor) {
  auto fire = pending(kOther);
  ASSERT_TRUE(store_.wait_for_slot(fire.id, kOther, "waiting"));
  pqxx::connection other(db_.url());
  pqxx::work holding(other);
  holding.exec("SELECT 1 FROM job_group WHERE id = " + std::to_string(group_.id) + " FOR NO KEY UPDATE");
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(store_.admit(group_.id, kNode, 10, admin::admit_waiting).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s) << "skipped, not waited for";
  // Fires of the group are still written while it is held (their foreign key's lock).
  EXPECT_GT(pending(kNode, 0, 1'700'000'050'000).id, 0);
  holding.abort();
  auto admitted = store_.admit(group_.id, kNode, 10, admin::admit_waiting);
  ASSERT_TRUE(admitted);
  EXPECT_EQ(admitted->size(), 1u);
}

TEST_F(TriggerPgTest, LoadsAPendingFireWithItsJobAndGroup) {
  auto fire = pending();
  auto loaded = store_.load_pending(fire.id, kNode);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->log, fire);
  EXPECT_EQ(loaded->job, *stores_.jobs().get(job_.id));
  EXPECT_EQ(loaded->group, *stores_.groups().get(group_.id));
}

TEST_F(TriggerPgTest, LoadSkipsFiresThatAreNotThisNodesPendingOnes) {
  auto theirs = pending(kOther);
  EXPECT_FALSE(store_.load_pending(theirs.id, kNode));
  auto sent = pending(kNode, 0, 1'700'000'001'000);
  ASSERT_EQ(store_.claim(claim_of(sent)).shards.size(), 1u);
  EXPECT_FALSE(store_.load_pending(sent.id, kNode));
  EXPECT_FALSE(store_.load_pending(999'999, kNode));
}

TEST_F(TriggerPgTest, ClaimMovesThePendingFireToSendingWithItsExecutor) {
  auto fire = pending();
  auto shards = store_.claim(claim_of(fire)).shards;
  ASSERT_EQ(shards.size(), 1u);
  EXPECT_EQ(shards[0], (TriggerStore::Shard{fire.id, kAddresses[0], 0, 1}));
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kSending);
  EXPECT_EQ(l.executor_address, kAddresses[0]);
  EXPECT_EQ(l.executor_handler, "demoHandler");
  EXPECT_EQ(l.executor_param, "p");
  EXPECT_EQ(l.trigger_time, clock_.now_ms());
  EXPECT_EQ(l.admin_node, kNode);
}

TEST_F(TriggerPgTest, TwoSendersRacingOnOnePendingFireClaimItExactlyOnce) {
  constexpr int kFires = 20;
  constexpr int kSenders = 4;
  for (int f = 0; f < kFires; ++f) {
    auto fire = pending(kNode, 0, 1'700'000'000'000 + f * 1000);
    std::latch start(kSenders);
    std::atomic<int> claimed{0};
    std::vector<std::thread> senders;
    for (int s = 0; s < kSenders; ++s) {
      senders.emplace_back([&, s] {
        auto c = claim_of(fire, {kAddresses[static_cast<std::size_t>(s) % kAddresses.size()]});
        start.arrive_and_wait();
        if (!store_.claim(c).shards.empty()) ++claimed;
      });
    }
    for (auto& t : senders) t.join();
    EXPECT_EQ(claimed.load(), 1) << "fire " << f;
    EXPECT_EQ(log(fire.id).state, admin::FireState::kSending);
  }
}

// Loads, claims and answers from many threads at once go to the database in batches; each
// row is still moved only by its own guard: fires of another node, cancelled ones and fires
// a batch names twice are left alone, every other fire is sent exactly once.
TEST_F(TriggerPgTest, ManySendersAtOnceAreGroupCommittedAndEachFireMovesOnce) {
  constexpr int kThreads = 24, kFiresEach = 40;
  std::vector<std::vector<admin::JobLog>> fires(kThreads);
  std::set<std::int64_t> theirs, cancelled;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kFiresEach; ++i) {
      const int n = t * kFiresEach + i;
      const bool other = n % 5 == 0;
      auto fire = pending(other ? kOther : kNode, 0, 1'700'000'000'000 + n * 1000);
      if (other) theirs.insert(fire.id);
      fires[static_cast<std::size_t>(t)].push_back(fire);
    }
  }
  for (const auto& f : fires[3]) {
    if (!theirs.count(f.id)) cancelled.insert(f.id);
  }
  exec("UPDATE job_log SET state = 'cancelled' WHERE id IN (" + [&] {
    std::string ids;
    for (auto id : cancelled) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    return ids;
  }() + ")");

  std::latch start(kThreads);
  std::atomic<int> loaded{0}, claimed{0}, recorded{0}, wrong{0};
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&, t] {
      start.arrive_and_wait();
      for (const auto& fire : fires[static_cast<std::size_t>(t)]) {
        auto got = store_.load_pending(fire.id, kNode);
        if (!got) continue;
        ++loaded;
        if (got->log.id != fire.id || got->job.id != job_.id || got->group.id != group_.id) ++wrong;
        // The same fire claimed twice by this thread (the second finds it sending).
        auto c = claim_of(fire);
        auto first = store_.claim(c);
        if (!store_.claim(c).shards.empty()) ++wrong;
        if (first.shards.size() != 1 || first.shards[0].log_id != fire.id) continue;
        ++claimed;
        if (store_.record_triggered(fire.id, kNode, "Code: 200 for " + std::to_string(fire.id)) == Recorded::kRecorded) {
          ++recorded;
        }
      }
    });
  }
  for (auto& t : senders) t.join();
  const int ours = kThreads * kFiresEach - static_cast<int>(theirs.size()) - static_cast<int>(cancelled.size());
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(loaded.load(), ours);
  EXPECT_EQ(claimed.load(), ours);
  EXPECT_EQ(recorded.load(), ours);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'triggered' AND trigger_code = 200"
                  " AND trigger_msg = 'Code: 200 for ' || id AND admin_node = '" + kNode + "'"),
            ours);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'pending' AND admin_node = '" + kOther + "'"),
            static_cast<std::int64_t>(theirs.size()));
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'cancelled'"), static_cast<std::int64_t>(cancelled.size()));
  // Grouped: fewer batches than calls.
  EXPECT_LT(store_.load_stats().batches, store_.load_stats().calls);
  EXPECT_LT(store_.claim_stats().batches, store_.claim_stats().calls);
  EXPECT_EQ(store_.claim_stats().calls, static_cast<std::size_t>(2 * ours));
}

// One batch can hold claims of different nodes and lease margins: each is guarded by its own.
TEST_F(TriggerPgTest, ABatchChecksEachClaimsOwnNodeAndLease) {
  exec("INSERT INTO admin_node (node_id, lease_until) VALUES ('" + kNode + "', now() + interval '1 second')");
  std::vector<admin::JobLog> mine, theirs;
  for (int i = 0; i < 20; ++i) {
    mine.push_back(pending(kNode, 0, 1'700'000'000'000 + i * 1000));
    theirs.push_back(pending(kOther, 0, 1'700'000'000'000 + i * 1000 + 500));
  }
  std::latch start(40);
  std::atomic<int> mine_claimed{0}, theirs_claimed{0};
  std::vector<std::thread> senders;
  for (int i = 0; i < 20; ++i) {
    senders.emplace_back([&, i] {
      auto c = claim_of(mine[static_cast<std::size_t>(i)]);
      c.min_lease_ms = i % 2 == 0 ? 2'000 : 0;  // 1 s left: refused with a 2 s margin
      start.arrive_and_wait();
      if (!store_.claim(c).shards.empty()) ++mine_claimed;
    });
    senders.emplace_back([&, i] {
      auto c = claim_of(theirs[static_cast<std::size_t>(i)], {kAddresses[1]}, kOther);
      c.min_lease_ms = 2'000;  // kOther has no lease row: no bound
      start.arrive_and_wait();
      if (!store_.claim(c).shards.empty()) ++theirs_claimed;
    });
  }
  for (auto& t : senders) t.join();
  EXPECT_EQ(mine_claimed.load(), 10);
  EXPECT_EQ(theirs_claimed.load(), 20);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(log(mine[static_cast<std::size_t>(i)].id).state,
              i % 2 == 0 ? admin::FireState::kPending : admin::FireState::kSending);
    auto t = log(theirs[static_cast<std::size_t>(i)].id);
    EXPECT_EQ(t.state, admin::FireState::kSending);
    EXPECT_EQ(t.executor_address, kAddresses[1]);
  }
}

// The executors' answers and their results for the same runs, written at the same moment in
// batches that list the runs in opposite orders: both lock rows in id order, so neither waits
// for the other in a cycle (PostgreSQL counts no deadlock).
TEST_F(TriggerPgTest, BatchesOverTheSameRunsInOppositeOrdersNeverDeadlock) {
  admin::PgCompletionStore completions(database_);
  auto deadlocks = [&] {
    return count("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
  };
  const auto before = deadlocks();
  for (int round = 0; round < 3; ++round) {
    std::vector<TriggerStore::Accepted> answers;
    std::vector<admin::RunResult> results;
    // 2,000 runs being sent, as claims leave them.
    auto rows = database_.transact([&](pqxx::work& tx) {
      return tx.exec_params(
          "INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address,"
          " trigger_time) SELECT $1, $2, 'sending', 'SCHEDULE', $3::bigint + n * 1000, $4, $5, now()"
          " FROM generate_series(1, 2000) n RETURNING id",
          group_.id, job_.id, static_cast<std::int64_t>(1'700'000'000'000 + round * 10'000'000LL), kNode, kAddresses[0]);
    });
    for (const auto& row : rows) {
      const auto id = row[0].as<std::int64_t>();
      answers.push_back({id, kNode, "Code: 200"});
      admin::RunResult r;
      r.log_id = id;
      r.state = admin::FireState::kSucceeded;
      r.handle_time = clock_.now_ms();
      r.handle_code = 200;
      results.insert(results.begin(), r);  // the other way round
    }
    std::latch start(2);
    std::string answering_failed;
    std::thread answering([&] {
      start.arrive_and_wait();
      try {
        store_.record_triggered_all(answers);
      } catch (const std::exception& e) {
        answering_failed = e.what();
      }
    });
    start.arrive_and_wait();
    EXPECT_NO_THROW(completions.record_all(
        results, [](const admin::JobLog&, const admin::Job&, const std::vector<admin::Job>&) { return admin::FollowUps{}; }));
    answering.join();
    EXPECT_EQ(answering_failed, "");
  }
  EXPECT_EQ(deadlocks(), before);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'succeeded' AND trigger_code = 200"), 6'000);
}

TEST_F(TriggerPgTest, FireTakenOverByAnotherNodeIsNotClaimed) {
  auto fire = pending();
  exec("UPDATE job_log SET admin_node = '" + kOther + "' WHERE id = " + std::to_string(fire.id));
  EXPECT_TRUE(store_.claim(claim_of(fire)).shards.empty());
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kPending);
  EXPECT_EQ(l.admin_node, kOther);
  EXPECT_EQ(l.executor_address, "");
}

TEST_F(TriggerPgTest, CancelledFireIsNotClaimed) {
  auto fire = pending(kNode, 0, 1'700'000'000'000, admin::TriggerType::kApi);
  ASSERT_TRUE(stores_.logs().cancel_pending(fire.id, system()));
  EXPECT_TRUE(store_.claim(claim_of(fire)).shards.empty());
  EXPECT_EQ(log(fire.id).state, admin::FireState::kCancelled);
}

TEST_F(TriggerPgTest, BroadcastClaimInsertsOneSendingRowPerShardOnce) {
  auto fire = pending(kNode, 2);
  constexpr int kSenders = 4;
  std::latch start(kSenders);
  std::atomic<int> claimed{0};
  std::vector<TriggerStore::Shard> shards;
  std::mutex mutex;
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s) {
    senders.emplace_back([&] {
      auto c = claim_of(fire, kAddresses);
      start.arrive_and_wait();
      auto got = store_.claim(c).shards;
      if (got.empty()) return;
      ++claimed;
      std::lock_guard lock(mutex);
      shards = got;
    });
  }
  for (auto& t : senders) t.join();
  ASSERT_EQ(claimed.load(), 1);
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0].log_id, fire.id);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(job_.id)), 3);
  for (int i = 0; i < 3; ++i) {
    const auto& s = shards[static_cast<std::size_t>(i)];
    EXPECT_EQ(s.shard_index, i);
    EXPECT_EQ(s.shard_total, 3);
    EXPECT_EQ(s.address, kAddresses[static_cast<std::size_t>(i)]);
    auto l = log(s.log_id);
    EXPECT_EQ(l.state, admin::FireState::kSending);
    EXPECT_EQ(l.shard_index, i);
    EXPECT_EQ(l.shard_total, 3);
    EXPECT_EQ(l.executor_address, kAddresses[static_cast<std::size_t>(i)]);
    EXPECT_EQ(l.trigger_type, admin::TriggerType::kSchedule);
    EXPECT_EQ(l.scheduled_time, fire.scheduled_time);
    EXPECT_EQ(l.admin_node, kNode);
    EXPECT_EQ(l.executor_fail_retry_count, 2);
    EXPECT_EQ(l.executor_param, "p");
    EXPECT_EQ(l.trigger_time, clock_.now_ms());
  }
}

TEST_F(TriggerPgTest, BroadcastLeavesAnExistingScheduledShardAlone) {
  auto fire = pending();
  // Shard 1 of this scheduled fire exists already (written by an earlier expansion).
  exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, shard_index,"
       " shard_total) VALUES (" + std::to_string(group_.id) + ", " + std::to_string(job_.id) + ", 'pending', 'SCHEDULE', " +
       std::to_string(fire.scheduled_time) + ", '" + kNode + "', 1, 3)");
  auto shards = store_.claim(claim_of(fire, kAddresses)).shards;
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0].shard_index, 0);
  EXPECT_EQ(shards[1].shard_index, 2);
  EXPECT_EQ(count("SELECT count(*) FROM job_log"), 3);
}

TEST_F(TriggerPgTest, ClaimIsRefusedWhileTheNodesLeaseIsEnding) {
  exec("INSERT INTO admin_node (node_id, lease_until) VALUES ('" + kNode + "', now() + interval '1 second')");
  auto fire = pending();
  auto c = claim_of(fire);
  c.min_lease_ms = 2000;
  EXPECT_TRUE(store_.claim(c).shards.empty());
  EXPECT_EQ(log(fire.id).state, admin::FireState::kPending);

  exec("UPDATE admin_node SET lease_until = now() + interval '60 seconds' WHERE node_id = '" + kNode + "'");
  auto claimed = store_.claim(c);
  ASSERT_EQ(claimed.shards.size(), 1u);
  ASSERT_TRUE(claimed.lease_left_ms);
  EXPECT_GT(*claimed.lease_left_ms, 50'000);
  EXPECT_LE(*claimed.lease_left_ms, 60'000);
}

TEST_F(TriggerPgTest, ClaimByANodeWithoutALeaseRowHasNoLeaseBound) {
  auto fire = pending();
  auto c = claim_of(fire);
  c.min_lease_ms = 2000;
  auto claimed = store_.claim(c);
  EXPECT_EQ(claimed.shards.size(), 1u);
  EXPECT_FALSE(claimed.lease_left_ms);
}

TEST_F(TriggerPgTest, ReleasedClaimIsPendingAgainWithItsExecutorAndShard) {
  auto fire = pending();
  auto shards = store_.claim(claim_of(fire, kAddresses)).shards;
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_TRUE(store_.release_claim(shards[2].log_id, kNode, "not sent in time"));
  auto l = log(shards[2].log_id);
  EXPECT_EQ(l.state, admin::FireState::kPending);
  EXPECT_FALSE(l.trigger_time);
  EXPECT_EQ(l.executor_address, kAddresses[2]);
  EXPECT_EQ(l.shard_index, 2);
  EXPECT_EQ(l.shard_total, 3);
  EXPECT_EQ(l.trigger_msg, "not sent in time");
  EXPECT_FALSE(store_.release_claim(shards[2].log_id, kNode, "again")) << "only a sending row is released";
  EXPECT_FALSE(store_.release_claim(shards[1].log_id, kOther, "x")) << "only by its owner";
  EXPECT_TRUE(store_.load_pending(shards[2].log_id, kNode));
}

TEST_F(TriggerPgTest, RecordTriggeredMovesSendingToTriggered) {
  auto fire = pending();
  store_.claim(claim_of(fire));
  EXPECT_EQ(store_.record_triggered(fire.id, kNode, "Code: 200"), Recorded::kRecorded);
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kTriggered);
  EXPECT_EQ(l.trigger_code, 200);
  EXPECT_EQ(l.trigger_msg, "Code: 200");
}

TEST_F(TriggerPgTest, RecordingKeepsAnEarlierNoteOfTheRow) {
  auto fire = pending();
  exec("UPDATE job_log SET trigger_msg = 'taken over from node-9' WHERE id = " + std::to_string(fire.id));
  store_.claim(claim_of(fire));
  ASSERT_EQ(store_.record_triggered(fire.id, kNode, "Code: 200"), Recorded::kRecorded);
  EXPECT_EQ(log(fire.id).trigger_msg, "taken over from node-9\nCode: 200");
}

TEST_F(TriggerPgTest, RecordTriggeredAfterTheResultKeepsTheResult) {
  auto fire = pending();
  store_.claim(claim_of(fire));
  exec("UPDATE job_log SET state = 'succeeded', handle_code = 200, handle_time = now() WHERE id = " +
       std::to_string(fire.id));
  EXPECT_EQ(store_.record_triggered(fire.id, kNode, "Code: 200"), Recorded::kResultFirst);
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kSucceeded);
  EXPECT_EQ(l.trigger_code, 200);
  EXPECT_EQ(l.handle_code, 200);
}

TEST_F(TriggerPgTest, RecordingOnARowTakenOverWritesNothing) {
  auto fire = pending();
  store_.claim(claim_of(fire));
  exec("UPDATE job_log SET admin_node = '" + kOther + "' WHERE id = " + std::to_string(fire.id));
  EXPECT_EQ(store_.record_triggered(fire.id, kNode, "x"), Recorded::kNotOurs);
  TriggerStore::Failure f;
  f.log_id = fire.id;
  f.node_id = kNode;
  f.now = clock_.now_ms();
  f.trigger_msg = "x";
  EXPECT_EQ(store_.record_failed(f, failure_plan()).recorded, Recorded::kNotOurs);
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kSending);
  EXPECT_EQ(l.trigger_code, 0);
}

TEST_F(TriggerPgTest, FailedSendWithRetriesLeftInsertsOneRetry) {
  auto fire = pending(kNode, 2);
  store_.claim(claim_of(fire));
  TriggerStore::Failure f;
  f.log_id = fire.id;
  f.node_id = kNode;
  f.now = clock_.now_ms();
  f.trigger_msg = "refused";
  constexpr int kRacers = 3;
  std::latch start(kRacers);
  std::atomic<int> recorded{0};
  std::vector<std::thread> racers;
  for (int i = 0; i < kRacers; ++i) {
    racers.emplace_back([&] {
      start.arrive_and_wait();
      if (store_.record_failed(f, failure_plan()).recorded == Recorded::kRecorded) ++recorded;
    });
  }
  for (auto& t : racers) t.join();
  EXPECT_EQ(recorded.load(), 1);
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kFailed);
  EXPECT_EQ(l.trigger_code, 500);
  EXPECT_EQ(l.trigger_msg, "refused");
  ASSERT_EQ(count("SELECT count(*) FROM job_log WHERE trigger_type = 'RETRY'"), 1);
  auto retry_id = count("SELECT id FROM job_log WHERE trigger_type = 'RETRY'");
  auto retry = log(retry_id);
  EXPECT_EQ(retry.state, admin::FireState::kPending);
  EXPECT_EQ(retry.admin_node, kNode);
  EXPECT_EQ(retry.scheduled_time, clock_.now_ms() + 30'000);
  EXPECT_EQ(retry.executor_fail_retry_count, 1);
  EXPECT_EQ(retry.parent_log_id, fire.id);
  EXPECT_EQ(retry.executor_param, "p");
  EXPECT_EQ(retry.executor_handler, "demoHandler");  // the job's handler, as a retry after a result has
  EXPECT_EQ(retry.executor_address, "");
  EXPECT_EQ(retry.job_group, group_.id);
}

TEST_F(TriggerPgTest, FailureWithoutRetryOrRetriesLeftInsertsNone) {
  auto fire = pending(kNode, 0);
  store_.claim(claim_of(fire));
  TriggerStore::Failure f;
  f.log_id = fire.id;
  f.node_id = kNode;
  f.now = clock_.now_ms();
  auto failed = store_.record_failed(f, failure_plan());
  EXPECT_EQ(failed.recorded, Recorded::kRecorded);
  EXPECT_TRUE(failed.fires.empty());

  auto unknown = pending(kNode, 3, 1'700'000'001'000);
  store_.claim(claim_of(unknown));
  EXPECT_EQ(store_.record_unconfirmed(unknown.id, kNode, "delivery unknown"), Recorded::kRecorded);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE trigger_type = 'RETRY'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'triggered' AND trigger_code = 500 AND id = " +
                  std::to_string(unknown.id)),
            1);
}

TEST_F(TriggerPgTest, PendingFireFailsWithItsTriggerTimeHandlerAndParameters) {
  auto fire = pending(kNode, 1);
  TriggerStore::Failure f;
  f.log_id = fire.id;
  f.node_id = kNode;
  f.from = admin::FireState::kPending;
  f.now = clock_.now_ms();
  f.trigger_msg = "no executor address for group demo-app";
  f.executor_handler = "demoHandler";
  f.executor_param = "job-param";
  auto failed = store_.record_failed(f, failure_plan());
  ASSERT_EQ(failed.recorded, Recorded::kRecorded);
  ASSERT_EQ(failed.fires.size(), 1u);
  EXPECT_EQ(failed.fires[0].executor_param, "job-param");
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kFailed);
  EXPECT_EQ(l.trigger_time, clock_.now_ms());
  EXPECT_EQ(l.executor_handler, "demoHandler");
  EXPECT_EQ(l.executor_param, "job-param");
  EXPECT_EQ(l.trigger_msg, "no executor address for group demo-app");
}

TEST_F(TriggerPgTest, FailedTriggerSetsTheNextTimeOfAFixDelayJobAwaitingIt) {
  exec("UPDATE job_info SET schedule_type = 'FIX_DELAY', schedule_conf = '10' WHERE id = " + std::to_string(job_.id));
  exec("UPDATE job_schedule SET trigger_status = 1, trigger_next_time = " + std::to_string(admin::kAwaitingCompletion) +
       " WHERE job_id = " + std::to_string(job_.id));
  auto fire = pending();
  store_.claim(claim_of(fire));
  TriggerStore::Failure f;
  f.log_id = fire.id;
  f.node_id = kNode;
  f.now = clock_.now_ms();
  store_.record_failed(f, failure_plan());
  EXPECT_EQ(stores_.jobs().get(job_.id)->trigger_next_time, clock_.now_ms() + 10'000);

  // A job stopped meanwhile keeps its stop.
  exec("UPDATE job_schedule SET trigger_status = 0, trigger_next_time = 0 WHERE job_id = " + std::to_string(job_.id));
  auto second = pending(kNode, 0, 1'700'000'001'000);
  store_.claim(claim_of(second));
  f.log_id = second.id;
  store_.record_failed(f, failure_plan());
  EXPECT_EQ(stores_.jobs().get(job_.id)->trigger_next_time, 0);
}

TEST_F(TriggerPgTest, SendersOfOneFireOnARealDatabaseCallTheExecutorOnce) {
  FakeExecutorClient client;
  auto make = [&](const std::string& node) {
    admin::TriggerService::Options o;
    o.node_id = node;
    return std::make_unique<admin::TriggerService>(store_, client, clock_, o);
  };
  auto ring = make(kNode);
  auto feeder = make(kNode);
  auto other_node = make(kOther);
  auto fire = pending();
  std::latch start(3);
  std::atomic<int> triggered{0};
  std::vector<std::thread> senders;
  for (auto* sender : {ring.get(), feeder.get(), other_node.get()}) {
    senders.emplace_back([&, sender] {
      start.arrive_and_wait();
      if (sender->send({fire.id, fire.job_id, fire.scheduled_time}).kind == admin::SendOutcome::Kind::kTriggered) {
        ++triggered;
      }
    });
  }
  for (auto& t : senders) t.join();
  EXPECT_EQ(triggered.load(), 1);
  auto runs = client.calls("run");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].access_token, "group-token");
  EXPECT_EQ(runs[0].address, kAddresses[0]);
  auto l = log(fire.id);
  EXPECT_EQ(l.state, admin::FireState::kTriggered);
  EXPECT_EQ(l.trigger_code, 200);
  EXPECT_NE(l.trigger_msg.find("Addresses (entered by hand)"), std::string::npos) << l.trigger_msg;
}

// A second's fires prepared ahead on the real database: read and claimed together (one
// statement each), then each posted at the instant; a fire another node took meanwhile is
// neither claimed nor posted, and a prepared fire given back is pending again.
TEST_F(TriggerPgTest, FiresPreparedAheadAreClaimedTogetherAndPostedOnce) {
  FakeExecutorClient client;
  admin::TriggerService::Options o;
  o.node_id = kNode;
  admin::TriggerService service(store_, client, clock_, o);
  std::vector<admin::PendingFire> fires;
  // Fires of the coming second, handed on ahead of it: each is posted, and triggered, at `due`.
  const std::int64_t due = (clock_.now_ms() / 1000 + 1) * 1000;
  for (int i = 0; i < 50; ++i) {
    auto l = pending(kNode, 0, due - 50 + i);
    fires.push_back({l.id, l.job_id, l.scheduled_time});
  }
  exec("UPDATE job_log SET admin_node = '" + kOther + "' WHERE id = " + std::to_string(fires[7].log_id));

  auto prepared = service.prepare(fires, due);

  ASSERT_EQ(prepared.size(), fires.size());
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'sending' AND trigger_time = " + admin::pg::ts(std::to_string(due))),
            49);
  ASSERT_TRUE(prepared[7].ended);
  EXPECT_EQ(prepared[7].ended->kind, admin::SendOutcome::Kind::kDropped);
  EXPECT_TRUE(client.calls("run").empty());
  service.release(prepared[3]);
  EXPECT_EQ(log(fires[3].log_id).state, admin::FireState::kPending);

  int triggered = 0;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    if (i == 3 || i == 7) continue;
    triggered += service.deliver(prepared[i]).kind == admin::SendOutcome::Kind::kTriggered;
  }
  EXPECT_EQ(triggered, 48);
  service.flush();
  EXPECT_EQ(client.calls("run").size(), 48u);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'triggered' AND trigger_code = 200"), 48);
  EXPECT_EQ(log(fires[7].log_id).state, admin::FireState::kPending);
}

TEST_F(TriggerPgTest, BroadcastThroughTheServiceTriggersEveryShard) {
  exec("UPDATE job_info SET executor_route_strategy = 'SHARDING_BROADCAST' WHERE id = " + std::to_string(job_.id));
  FakeExecutorClient client;
  admin::TriggerService::Options o;
  o.node_id = kNode;
  admin::TriggerService service(store_, client, clock_, o);
  auto fire = pending();
  EXPECT_EQ(service.send({fire.id, fire.job_id, fire.scheduled_time}).kind, admin::SendOutcome::Kind::kTriggered);
  EXPECT_EQ(client.calls("run").size(), 3u);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE state = 'triggered' AND shard_total = 3"), 3);
  // Sending the same fire again does nothing.
  EXPECT_EQ(service.send({fire.id, fire.job_id, fire.scheduled_time}).kind, admin::SendOutcome::Kind::kDropped);
  EXPECT_EQ(client.calls("run").size(), 3u);
}

}  // namespace
}  // namespace cronwheel::testing
