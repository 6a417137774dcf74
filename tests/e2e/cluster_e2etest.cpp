// The production topology as separate processes on one PostgreSQL database: two cronwheel-admin
// nodes and two cronwheel-executor processes of one automatic group. It proves the scheduling
// core's promise (docs/scheduling.md) end to end: every scheduled second of every job runs
// exactly once, whichever node decides and sends it, and still exactly once when a node is
// killed with SIGKILL while it owns fires. Exactly once is read twice: in job_log (one row per
// scheduled second and shard, succeeded) and in the executors' run logs (each row started once).
// Child jobs, retries, kill and timeout show in the logs API.
//
// Every wait is a poll with a deadline; the only sleeps wait for wall-clock time itself to pass
// (the measured window). Every process is started through tests/support/process.h and stopped
// by its pid, by TearDown or, on a failed assertion, by its destructor.

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::Process;
using testing::eventually;
using testing::TestDatabase;

// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
constexpr auto kBound = 30s;
// For the results still outstanding once the jobs are stopped: the fires decided up to the
// pre-read window (5 s) ahead, each run and called back. Generous: a fire still pending or
// sending after it counts as lost.
constexpr auto kDrainBound = 60s;
constexpr const char* kAppName = "e2e-cluster";
constexpr const char* kToken = "e2e-cluster-token";
const std::array<std::string, 2> kNodeIds = {"e2e-admin-1", "e2e-admin-2"};

// Short leases so a killed node's fires are taken over within about two seconds.
const std::vector<std::string> kSchedulingFlags = {"--heartbeat-ms", "500", "--lease-ms", "2000",
                                                   "--registry-refresh-ms", "500"};

const std::vector<std::string> kRouteStrategies = {
    "FIRST", "LAST", "ROUND", "RANDOM", "CONSISTENT_HASH", "LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED",
    "FAILOVER", "BUSYOVER", "SHARDING_BROADCAST"};

using testing::now_ms;

// The last `n` characters of a process's output: enough to see why it failed, short enough to read.
std::string tail(const std::string& text, std::size_t n = 4000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// One job_log row as the checks need it.
struct FireRow {
  std::int64_t id = 0;
  std::int64_t job_id = 0;
  std::int64_t scheduled_time = 0;
  int shard_index = 0;
  int shard_total = 1;
  std::string state;
  std::string trigger_type;
  std::string admin_node;
  std::string executor_address;
  std::int64_t trigger_time = 0;  // epoch ms; 0 while not sent
  std::string message;            // handle_msg, or trigger_msg when there is no result
};

// A cron job of the measured run: started at `first_fire`, its last decided fire `last_fire`
// (trigger_last_time once stopped), stopped by a POST jobs/{id}/stop answered at `stopped_at`.
struct ClusterJob {
  std::int64_t id = 0;
  std::string strategy;
  std::int64_t first_fire = 0;
  std::int64_t last_fire = 0;
  std::int64_t stopped_at = 0;
};

// A stop cancels the fires decided and not yet sent; one being sent at the stop goes out. A node
// claims a fire at most `prepare_ahead` (800 ms) before its instant, so a fire due more than this
// after the stop was answered was claimed after the stop had committed and cancelled it.
constexpr std::int64_t kClaimAheadMs = 1'000;

// Whether `r` is a fire of `job` its stop cancelled, pending or held by its executor. Fires due
// before the stop can be among them (late, on a loaded machine), but not by more than the misfire
// threshold (5 s): FIRE_ONCE_NOW coalesces later ones.
bool cancelled_by_stop(const FireRow& r, const ClusterJob& job) {
  return r.state == "cancelled" && r.message.find("Cancelled: job stopped by") != std::string::npos &&
         job.stopped_at != 0 && r.scheduled_time >= job.stopped_at - 10'000;
}

// What the rows of a time range say about exactly-once delivery.
struct Verdict {
  std::size_t expected = 0;  // (job, second, shard) triples the schedule asks for
  std::size_t rows = 0;      // scheduled rows in the range
  std::map<std::string, std::size_t> states;
  std::map<std::string, std::size_t> by_node;  // succeeded rows per admin node
  std::vector<std::string> missing, duplicated, not_succeeded, unexpected;
  std::vector<std::int64_t> delays;  // trigger_time - scheduled_time of sent rows, ms
  // Fires decided before their job's stop and cancelled by it (cancelled_by_stop).
  std::size_t stopped = 0;
  // Fires that went out more than the misfire threshold late (a node killed while holding them,
  // or a machine so loaded the takeover came late) and that FIRE_ONCE_NOW rightly coalesced into
  // a newer fire of the same job that ran: accounted for, not lost.
  std::size_t coalesced = 0;

  bool exactly_once() const {
    return missing.empty() && duplicated.empty() && not_succeeded.empty() && unexpected.empty();
  }

  std::int64_t delay_percentile(double p) {
    if (delays.empty()) return 0;
    std::sort(delays.begin(), delays.end());
    return delays[std::min(delays.size() - 1, static_cast<std::size_t>(p * static_cast<double>(delays.size())))];
  }

  // One compact paragraph: counts per state and node, then the first few of each problem.
  std::string summary() {
    std::ostringstream s;
    s << expected << " fires expected, " << rows << " rows, " << coalesced << " coalesced, " << stopped
      << " cancelled by the stop; states:";
    for (const auto& [state, n] : states) s << " " << state << "=" << n;
    s << "; succeeded per node:";
    for (const auto& [node, n] : by_node) s << " " << node << "=" << n;
    s << "; trigger delay p50 " << delay_percentile(0.5) << " ms, p99 " << delay_percentile(0.99) << " ms, max "
      << (delays.empty() ? 0 : *std::max_element(delays.begin(), delays.end())) << " ms";
    auto list = [&s](const char* what, const std::vector<std::string>& items) {
      if (items.empty()) return;
      s << "\n  " << items.size() << " " << what << ":";
      for (std::size_t i = 0; i < items.size() && i < 8; ++i) s << "\n    " << items[i];
      if (items.size() > 8) s << "\n    ...";
    };
    list("missing (job, second, shard)", missing);
    list("duplicated (job, second, shard)", duplicated);
    list("not succeeded", not_succeeded);
    list("unexpected rows", unexpected);
    return s.str();
  }
};

// The run a fire was coalesced into by FIRE_ONCE_NOW ("... (run 123, scheduled 4000 ms after
// this one), so this one is coalesced into it"), or 0 when `r` is no such fire.
std::int64_t coalesced_into(const FireRow& r) {
  if (r.state != "cancelled" || r.message.find("coalesced into it") == std::string::npos) return 0;
  const auto at = r.message.find("(run ");
  if (at == std::string::npos) return 0;
  return std::atoll(r.message.c_str() + at + 5);
}

std::string describe(const FireRow& r) {
  std::ostringstream s;
  s << "log " << r.id << " job " << r.job_id << " at " << r.scheduled_time << " shard " << r.shard_index << "/"
    << r.shard_total << " " << r.trigger_type << " " << r.state << " node " << r.admin_node << " executor "
    << r.executor_address;
  if (r.state != "succeeded" && !r.message.empty()) {
    std::string m = r.message.substr(r.message.size() > 160 ? r.message.size() - 160 : 0);
    std::replace(m.begin(), m.end(), '\n', ' ');
    s << ": " << m;
  }
  return s.str();
}

// Checks the scheduled rows against the jobs' schedules over [from, to] (epoch ms, inclusive):
// each job, for each second of its run inside the range, has exactly one row per shard (a
// SHARDING_BROADCAST job one per executor: shard 0 and 1 of `executors`, on different
// executors, every other job shard 0 of 1), and every one succeeded, or was coalesced by
// FIRE_ONCE_NOW into a newer fire of its job that succeeded, or was cancelled by its job's stop.
// Rows of the range outside a job's run, off a second, or of a trigger type other than
// SCHEDULE/MISFIRE are unexpected, as is a fire that ran although it was due more than
// kClaimAheadMs after its job's stop.
Verdict check_exactly_once(const std::vector<FireRow>& rows, const std::vector<ClusterJob>& jobs, std::int64_t from,
                           std::int64_t to, int executors) {
  Verdict v;
  std::map<std::int64_t, const ClusterJob*> by_id;
  for (const auto& j : jobs) by_id[j.id] = &j;
  std::map<std::tuple<std::int64_t, std::int64_t, int>, std::vector<const FireRow*>> fires;
  std::map<std::int64_t, const FireRow*> by_log;
  for (const auto& r : rows) by_log[r.id] = &r;
  for (const auto& r : rows) {
    if (r.scheduled_time < from || r.scheduled_time > to) continue;
    ++v.rows;
    ++v.states[r.state];
    auto job = by_id.find(r.job_id);
    const bool scheduled = r.trigger_type == "SCHEDULE" || r.trigger_type == "MISFIRE";
    if (job == by_id.end() || !scheduled || r.scheduled_time % 1000 != 0 ||
        r.scheduled_time < job->second->first_fire || r.scheduled_time > job->second->last_fire) {
      v.unexpected.push_back(describe(r));
      continue;
    }
    fires[{r.job_id, r.scheduled_time, r.shard_index}].push_back(&r);
  }
  for (const auto& job : jobs) {
    const bool broadcast = job.strategy == "SHARDING_BROADCAST";
    const int shards = broadcast ? executors : 1;
    const std::int64_t first = std::max(job.first_fire, (from + 999) / 1000 * 1000);
    const std::int64_t last = std::min(job.last_fire, to);
    for (std::int64_t t = first; t <= last; t += 1000) {
      // A broadcast is one row until it is claimed: its stop-cancelled fire has no other shards.
      if (broadcast) {
        auto zero = fires.find({job.id, t, 0});
        bool others = false;
        for (int shard = 1; shard < shards; ++shard) others = others || fires.count({job.id, t, shard}) > 0;
        if (zero != fires.end() && zero->second.size() == 1 && !others && cancelled_by_stop(*zero->second[0], job)) {
          v.expected += static_cast<std::size_t>(shards);
          ++v.stopped;
          continue;
        }
      }
      // The executors of the shards that ran: each its own. A shard not yet started at its job's
      // stop is cancelled by it while another may have started (a broadcast's shards are posted
      // one after the other, and one can be sent back to pending in between).
      std::set<std::string> addresses;
      std::vector<const FireRow*> ran;
      for (int shard = 0; shard < shards; ++shard) {
        ++v.expected;
        const std::string key = "(" + std::to_string(job.id) + " " + job.strategy + ", " + std::to_string(t) +
                                ", " + std::to_string(shard) + ")";
        auto it = fires.find({job.id, t, shard});
        if (it == fires.end()) {
          v.missing.push_back(key);
          continue;
        }
        if (it->second.size() > 1) {
          std::string ids;
          for (const auto* r : it->second) ids += " " + std::to_string(r->id);
          v.duplicated.push_back(key + ": logs" + ids);
        }
        for (const auto* r : it->second) {
          if (cancelled_by_stop(*r, job)) {
            ++v.stopped;
            continue;
          }
          if (r->state != "cancelled" && job.stopped_at != 0 && r->scheduled_time > job.stopped_at + kClaimAheadMs) {
            v.unexpected.push_back(describe(*r) + " (due " + std::to_string(r->scheduled_time - job.stopped_at) +
                                   " ms after its job's stop was answered, yet not cancelled)");
            continue;
          }
          if (const std::int64_t kept_id = coalesced_into(*r); kept_id != 0) {
            const auto kept = by_log.find(kept_id);
            if (kept != by_log.end() && kept->second->job_id == r->job_id &&
                kept->second->scheduled_time > r->scheduled_time && kept->second->state == "succeeded") {
              ++v.coalesced;
            } else {
              v.not_succeeded.push_back(describe(*r) + " (coalesced into a run that did not succeed)");
            }
            continue;
          }
          addresses.insert(r->executor_address);
          ran.push_back(r);
          if (r->state != "succeeded" || r->shard_total != shards) {
            v.not_succeeded.push_back(describe(*r));
          } else {
            ++v.by_node[r->admin_node];
          }
          if (r->trigger_time > 0) v.delays.push_back(r->trigger_time - r->scheduled_time);
        }
      }
      if (broadcast && addresses.size() != ran.size()) {
        std::string which;
        for (const auto* r : ran) which += "; " + describe(*r);
        v.not_succeeded.push_back("(" + std::to_string(job.id) + ", " + std::to_string(t) + "): " +
                                  std::to_string(ran.size()) + " broadcast shards ran on " +
                                  std::to_string(addresses.size()) + " executor(s)" + which);
      }
    }
  }
  return v;
}

// Two admin nodes (distinct --node-id, short leases) and two executors of one automatic group,
// both executors knowing both admins.
class ClusterE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("cronwheel-cluster-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);

    // Both nodes start at once, as a deployment starts them: migrations and the bootstrap user
    // are made by whichever gets there first.
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      AdminProcess::Options options;
      options.db_url = db_.url();
      options.args = {"--node-id", kNodeIds[i], "--access-token", kToken};
      options.args.insert(options.args.end(), kSchedulingFlags.begin(), kSchedulingFlags.end());
      admins_[i] = std::make_unique<AdminProcess>(options);
    }
    for (auto& admin : admins_) {
      ASSERT_GT(admin->wait_until_listening(), 0) << admin->process().out() << admin->process().err();
    }
    who_ = admins_[0]->login();
    ASSERT_FALSE(who_.cookie.empty());

    auto group = admins_[0]->post("groups", who_, {{"appName", kAppName}, {"title", "Cluster"}, {"addressType", 0}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_id_ = group.body["id"].get<std::int64_t>();

    // Each executor knows both nodes, in a different order: it registers with and calls back the
    // first that answers, so whichever node dies, one executor loses its first choice and turns
    // to the survivor.
    start_executor(admins_[0]->url() + "," + admins_[1]->url(), 0);
    start_executor(admins_[1]->url() + "," + admins_[0]->url(), 1);
    for (const auto& address : executor_addresses_) ASSERT_FALSE(address.empty());

    // Routing needs both executors in the group's list (the registry refresh writes it).
    std::vector<std::string> expected = executor_addresses_;
    std::sort(expected.begin(), expected.end());
    std::vector<std::string> listed;
    ASSERT_TRUE(eventually([&] {
      listed = group_addresses();
      std::sort(listed.begin(), listed.end());
      return listed == expected;
    })) << "group lists " << json(listed).dump() << ", executors are " << json(expected).dump();
  }

  void TearDown() override {
    // Executors first: they deliver the results they still hold to a live admin.
    for (auto& executor : executors_) {
      executor->signal(SIGTERM);
      EXPECT_EQ(executor->wait_for_exit(kBound), 0) << tail(executor->out() + executor->err());
    }
    executors_.clear();
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      if (!admins_[i]) continue;
      if (killed_[i]) continue;  // ended by SIGKILL on purpose
      EXPECT_EQ(admins_[i]->stop(), 0) << kNodeIds[i] << "\n"
                                       << tail(admins_[i]->process().out() + admins_[i]->process().err());
    }
    for (auto& admin : admins_) admin.reset();
    fs::remove_all(dir_);
  }

  void start_executor(const std::string& admin_list, int index) {
    const fs::path logs = dir_ / ("executor-" + std::to_string(index));
    executors_.push_back(std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_list, "--app-name", kAppName,
        "--listen", "127.0.0.1:0", "--access-token", kToken, "--log-dir", logs.string()}));
    Process& executor = *executors_.back();
    static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
    int port = 0;
    eventually([&] {
      std::smatch m;
      const std::string out = executor.out();
      if (std::regex_search(out, m, listening)) port = std::stoi(m[1]);
      return port != 0 || !executor.running();
    });
    EXPECT_GT(port, 0) << executor.out() << executor.err();
    executor_addresses_.push_back(port > 0 ? "http://127.0.0.1:" + std::to_string(port) + "/" : "");
  }

  // The first admin still running: API calls go there once a node was killed.
  AdminProcess& live_admin() {
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      if (!killed_[i]) return *admins_[i];
    }
    throw std::logic_error("no admin left");
  }

  std::vector<std::string> group_addresses() {
    auto group = live_admin().get("groups/" + std::to_string(group_id_), who_);
    if (group.status != 200) return {};
    return group.body.value("addressList", std::vector<std::string>{});
  }

  // A job of the group; `fields` add to or override a BEAN job with no schedule.
  std::int64_t make_job(AdminProcess& admin, json fields) {
    json body = {{"jobGroup", group_id_}, {"jobDesc", "cluster job"}, {"scheduleType", "NONE"},
                 {"executorHandler", "echo"}};
    body.update(fields);
    auto job = admin.post("jobs", who_, body);
    EXPECT_EQ(job.status, 201) << job.text;
    return job.body.is_object() ? job.body.value("id", std::int64_t{0}) : 0;
  }

  // Fires the job once now (a MANUAL fire owned by `admin`); answers the fire's log id.
  std::int64_t trigger(AdminProcess& admin, std::int64_t job) {
    auto fire = admin.post("jobs/" + std::to_string(job) + "/trigger", who_);
    EXPECT_EQ(fire.status, 201) << fire.text;
    return fire.body.is_object() ? fire.body.value("id", std::int64_t{0}) : 0;
  }

  // The job's logs through the API, oldest first.
  std::vector<json> logs_of(std::int64_t job, const std::string& filter = "") {
    auto page = live_admin().get("logs?limit=100&jobId=" + std::to_string(job) + filter, who_);
    EXPECT_EQ(page.status, 200) << page.text;
    std::vector<json> items;
    if (page.body.is_object() && page.body["items"].is_array()) {
      for (const auto& item : page.body["items"]) items.push_back(item);
    }
    std::sort(items.begin(), items.end(),
              [](const json& a, const json& b) { return a.value("id", 0LL) < b.value("id", 0LL); });
    return items;
  }

  json log(std::int64_t id) {
    auto r = live_admin().get("logs/" + std::to_string(id), who_);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body;
  }

  static bool is_final(const json& log) {
    const std::string state = log.is_object() ? log.value("state", "") : "";
    return state == "succeeded" || state == "failed" || state == "lost" || state == "cancelled";
  }

  // Every process still runs (but the node killed on purpose); a crash ends a long wait early.
  ::testing::AssertionResult all_running() {
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      if (!killed_[i] && !admins_[i]->process().running()) {
        return ::testing::AssertionFailure()
               << kNodeIds[i] << " exited\n"
               << tail(admins_[i]->process().out() + admins_[i]->process().err());
      }
    }
    for (auto& executor : executors_) {
      if (!executor->running()) {
        return ::testing::AssertionFailure() << "an executor exited\n" << tail(executor->out() + executor->err());
      }
    }
    return ::testing::AssertionSuccess();
  }

  // Lets wall-clock time pass until `at` (epoch ms), checking the processes every 200 ms.
  ::testing::AssertionResult run_until(std::int64_t at) {
    while (now_ms() < at) {
      auto alive = all_running();
      if (!alive) return alive;
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(200ms, std::chrono::milliseconds(at - now_ms())));
    }
    return all_running();
  }

  std::vector<FireRow> group_rows() {
    pqxx::connection c(db_.url());
    pqxx::read_transaction tx(c);
    std::vector<FireRow> rows;
    for (const auto& r : tx.exec_params(
             "SELECT id, job_id, scheduled_time, shard_index, shard_total, state, trigger_type,"
             " COALESCE(admin_node, '') AS admin_node, executor_address,"
             " COALESCE((extract(epoch FROM trigger_time) * 1000)::bigint, 0) AS trigger_ms,"
             " CASE WHEN handle_msg <> '' THEN handle_msg ELSE trigger_msg END AS message"
             " FROM job_log WHERE job_group = $1 ORDER BY id",
             group_id_)) {
      FireRow f;
      f.id = r["id"].as<std::int64_t>();
      f.job_id = r["job_id"].as<std::int64_t>();
      f.scheduled_time = r["scheduled_time"].as<std::int64_t>();
      f.shard_index = r["shard_index"].as<int>();
      f.shard_total = r["shard_total"].as<int>();
      f.state = r["state"].as<std::string>();
      f.trigger_type = r["trigger_type"].as<std::string>();
      f.admin_node = r["admin_node"].as<std::string>();
      f.executor_address = r["executor_address"].as<std::string>();
      f.trigger_time = r["trigger_ms"].as<std::int64_t>();
      f.message = r["message"].as<std::string>();
      rows.push_back(std::move(f));
    }
    return rows;
  }

  // How many times each run started on the executors, by log id: the start lines of their run
  // logs ({log-dir}/yyyy-MM-dd/{logId}.log, which every run of that log id appends to). Only the
  // executors see a fire sent twice under one row, so this is where a double send shows.
  std::map<std::int64_t, int> runs_started() const {
    static const std::regex run_log(R"((\d+)\.log)");
    std::map<std::int64_t, int> starts;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      std::smatch m;
      if (!entry.is_regular_file() || !std::regex_match(name, m, run_log)) continue;
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        if (line.find("cronwheel job execute start") != std::string::npos) ++starts[std::stoll(m[1])];
      }
    }
    return starts;
  }

  // Rows of the group not final yet: pending, sending or triggered.
  std::int64_t outstanding() {
    pqxx::connection c(db_.url());
    pqxx::read_transaction tx(c);
    return tx.exec_params1("SELECT count(*) FROM job_log WHERE job_group = $1 AND state IN ('pending', 'sending', "
                           "'triggered')",
                           group_id_)[0]
        .as<std::int64_t>();
  }

  // The fires `node` owns and has not sent (pending) or not finished sending (sending) yet, due
  // in (due_after, due_by]: their states by log id.
  std::map<std::int64_t, std::string> unsent_fires_of(const std::string& node, std::int64_t due_after = 0,
                                                      std::int64_t due_by = std::numeric_limits<std::int64_t>::max()) {
    pqxx::connection c(db_.url());
    pqxx::read_transaction tx(c);
    std::map<std::int64_t, std::string> fires;
    for (const auto& r : tx.exec_params("SELECT id, state FROM job_log WHERE admin_node = $1 AND state IN "
                                        "('pending', 'sending') AND scheduled_time > $2 AND scheduled_time <= $3",
                                        node, due_after, due_by)) {
      fires[r[0].as<std::int64_t>()] = r[1].as<std::string>();
    }
    return fires;
  }

  // Creates `count` jobs firing every second, spread over every routing strategy, and starts
  // them; answers them with their first fire times.
  std::vector<ClusterJob> start_every_second_jobs(int count) {
    std::vector<ClusterJob> jobs;
    for (int i = 0; i < count; ++i) {
      ClusterJob job;
      job.strategy = kRouteStrategies[static_cast<std::size_t>(i) % kRouteStrategies.size()];
      job.id = make_job(*admins_[static_cast<std::size_t>(i) % admins_.size()],
                        {{"jobDesc", "every second " + std::to_string(i)},
                         {"scheduleType", "CRON"},
                         {"scheduleConf", "* * * * * ?"},
                         {"misfireStrategy", "FIRE_ONCE_NOW"},
                         {"executorRouteStrategy", job.strategy},
                         {"executorParam", "job " + std::to_string(i)}});
      if (job.id == 0) return {};
      jobs.push_back(job);
    }
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      auto started = admins_[i % admins_.size()]->post("jobs/" + std::to_string(jobs[i].id) + "/start", who_);
      EXPECT_EQ(started.status, 200) << started.text;
      if (started.status != 200) return {};
      jobs[i].first_fire = started.body.value("triggerNextTime", std::int64_t{0});
    }
    return jobs;
  }

  // Stops the jobs and reads the last fire each one got (trigger_last_time, which a stop keeps).
  ::testing::AssertionResult stop_jobs(std::vector<ClusterJob>& jobs) {
    for (auto& job : jobs) {
      auto stopped = live_admin().post("jobs/" + std::to_string(job.id) + "/stop", who_);
      if (stopped.status != 200) return ::testing::AssertionFailure() << "stop job " << job.id << ": " << stopped.text;
      job.stopped_at = now_ms();
    }
    pqxx::connection c(db_.url());
    pqxx::read_transaction tx(c);
    std::map<std::int64_t, std::int64_t> last;
    for (const auto& r : tx.exec_params("SELECT j.id, s.trigger_last_time FROM job_info j JOIN job_schedule s ON s.job_id = j.id WHERE j.job_group = $1", group_id_)) {
      last[r[0].as<std::int64_t>()] = r[1].as<std::int64_t>();
    }
    for (auto& job : jobs) job.last_fire = last[job.id];
    return ::testing::AssertionSuccess();
  }

  TestDatabase db_;
  fs::path dir_;
  std::array<std::unique_ptr<AdminProcess>, 2> admins_;
  std::array<bool, 2> killed_{false, false};
  std::vector<std::unique_ptr<Process>> executors_;
  std::vector<std::string> executor_addresses_;
  ApiCredentials who_;
  std::int64_t group_id_ = 0;
};

// One run of 60 s for both promises: the first 30 s with both nodes deciding and sending, then
// node 1 is killed with SIGKILL and node 2 carries on alone. The first half is checked on its
// own (exactly once, both nodes took part), then the whole window, the seconds around the kill
// included. A separate 60 s run for each half would more than double the file's running time
// (about 75 s a run) for no case this one misses.
TEST_F(ClusterE2e, TwoAdminsFireEveryJobEverySecondExactlyOnceAndStillDoAfterOneIsKilledWithSigkill) {
  constexpr int kJobCount = 200;
  constexpr std::int64_t kRunMs = 60'000;
  constexpr std::int64_t kKillAfterMs = 30'000;

  std::vector<ClusterJob> jobs = start_every_second_jobs(kJobCount);
  ASSERT_EQ(jobs.size(), static_cast<std::size_t>(kJobCount));
  // The window starts when the last job started firing: from then on every job fires each second.
  std::int64_t window_start = 0;
  for (const auto& job : jobs) {
    ASSERT_GT(job.first_fire, 0) << "job " << job.id << " has no first fire time";
    window_start = std::max(window_start, job.first_fire);
  }

  // Kill a node while it owns fires that fall due before its lease can run out: nobody may send
  // them until the survivor takes them over, so they run late, and must still run exactly once.
  // Each scan is made by whichever node gets the scheduling lock first and decides up to 5 s
  // ahead, while the node that finds nothing left sleeps to the window's end; so for stretches of
  // several seconds one node may make every scan. The victim is node 1 when it holds such fires,
  // else node 2 when it does.
  ASSERT_TRUE(run_until(window_start + kKillAfterMs));
  std::size_t v = 0;
  const bool caught_due_soon = eventually(
      [&] {
        const std::int64_t now = now_ms();
        for (v = 0; v < kNodeIds.size(); ++v) {
          if (!unsent_fires_of(kNodeIds[v], now + 300, now + 1500).empty()) return true;
        }
        v = 0;
        return false;
      },
      10s);
  const std::string& victim = kNodeIds[v];
  const std::string& survivor = kNodeIds[1 - v];
  admins_[v]->process().signal(SIGKILL);
  killed_[v] = true;
  const std::int64_t kill_time = now_ms();
  ASSERT_EQ(admins_[v]->process().wait_for_exit(kBound), 128 + SIGKILL);
  ASSERT_TRUE(caught_due_soon) << "no node owned a fire due in the next 1.5 s for 10 s: nobody was scanning";
  // A dead node changes nothing: what it owned unsent at its death is what the survivor must
  // take over (after its lease, 2 s).
  const std::map<std::int64_t, std::string> orphaned = unsent_fires_of(victim);
  const auto orphaned_sending = static_cast<std::size_t>(
      std::count_if(orphaned.begin(), orphaned.end(), [](const auto& f) { return f.second == "sending"; }));

  ASSERT_TRUE(run_until(window_start + kRunMs));
  ASSERT_TRUE(stop_jobs(jobs));
  std::int64_t window_end = std::numeric_limits<std::int64_t>::max();
  for (const auto& job : jobs) window_end = std::min(window_end, job.last_fire);
  // Each job ran at least the whole window: the stop came after its end.
  ASSERT_GE(window_end, window_start + kRunMs - 1000);

  // The stop cancelled the fires decided and not sent (pending, or held by an executor); those
  // being sent ran. A row left pending or sending after the bound is a lost fire.
  std::int64_t left = -1;
  EXPECT_TRUE(eventually([&] { return (left = outstanding()) == 0; }, kDrainBound))
      << left << " fires still outstanding " << std::chrono::duration_cast<std::chrono::seconds>(kDrainBound).count()
      << " s after the jobs stopped";
  const std::vector<FireRow> rows = group_rows();

  // First half, both nodes alive: exactly once.
  Verdict before = check_exactly_once(rows, jobs, 0, kill_time - 1, 2);
  EXPECT_TRUE(before.exactly_once()) << "before the kill: " << before.summary();

  // The whole run, including the seconds around the kill.
  Verdict all = check_exactly_once(rows, jobs, 0, std::numeric_limits<std::int64_t>::max(), 2);
  EXPECT_TRUE(all.exactly_once()) << "whole run: " << all.summary();
  EXPECT_GE(all.expected, static_cast<std::size_t>(kJobCount + kJobCount / 10) * (kRunMs / 1000));
  // The scan decides up to 5 s ahead: every job had fires decided and unsent when it stopped.
  EXPECT_GE(all.stopped, jobs.size()) << "whole run: " << all.summary();

  // The executors ran each row once: one start in the run logs per row (none for a fire
  // coalesced into another, which was never sent, nor for one its job's stop cancelled), none for
  // anything else.
  std::map<std::int64_t, const ClusterJob*> job_of;
  for (const auto& job : jobs) job_of[job.id] = &job;
  std::map<std::int64_t, int> starts = runs_started();
  std::vector<std::string> not_once;
  for (const auto& r : rows) {
    auto it = starts.find(r.id);
    const int n = it == starts.end() ? 0 : it->second;
    const auto job = job_of.find(r.job_id);
    const bool stopped = job != job_of.end() && cancelled_by_stop(r, *job->second);
    const int expected_starts = coalesced_into(r) != 0 || stopped ? 0 : 1;
    if (n != expected_starts) not_once.push_back(describe(r) + ": started " + std::to_string(n) + " times");
    if (it != starts.end()) starts.erase(it);
  }
  for (const auto& [id, n] : starts) {
    not_once.push_back("log " + std::to_string(id) + ": no such row, started " + std::to_string(n) + " times");
  }
  std::string first_few;
  for (std::size_t i = 0; i < not_once.size() && i < 8; ++i) first_few += "\n  " + not_once[i];
  EXPECT_TRUE(not_once.empty()) << not_once.size() << " runs did not start exactly once on the executors:"
                                << first_few;

  // After the kill only the survivor sends: a fire due after the kill was sent by no one else,
  // whoever decided it.
  Verdict after = check_exactly_once(rows, jobs, kill_time + 1, std::numeric_limits<std::int64_t>::max(), 2);
  EXPECT_EQ(after.by_node[victim], 0u) << "after the kill: " << after.summary();
  EXPECT_GT(after.by_node[survivor], 0u) << "after the kill: " << after.summary();

  // The fires the dead node owned unsent ran, once each (the exactly-once check above counts
  // them). The pending ones only the survivor could send, after taking them over. A sending one
  // was either in flight to its executor at the kill, and then its result completes it under
  // the dead node's name, or the survivor took it over and asked the executor before sending it
  // again.
  std::map<std::int64_t, const FireRow*> by_id;
  for (const auto& r : rows) by_id[r.id] = &r;
  std::int64_t latest_orphan = 0;  // the largest delay of a taken-over pending fire, ms
  std::size_t sending_recovered = 0;  // sending at the kill, then resolved by the survivor
  for (const auto& [id, state_at_kill] : orphaned) {
    auto it = by_id.find(id);
    ASSERT_NE(it, by_id.end()) << "log " << id;
    if (const std::int64_t kept = coalesced_into(*it->second); kept != 0) {
      // Taken over later than the misfire threshold (a loaded machine): FIRE_ONCE_NOW sent only
      // the newest of the job's late fires. That one ran (the exactly-once check above).
      EXPECT_EQ(state_at_kill, "pending") << describe(*it->second);
      continue;
    }
    EXPECT_EQ(it->second->state, "succeeded") << state_at_kill << " at the kill: " << describe(*it->second);
    if (state_at_kill == "pending") {
      EXPECT_EQ(it->second->admin_node, survivor) << "pending at the kill: " << describe(*it->second);
      latest_orphan = std::max(latest_orphan, it->second->trigger_time - it->second->scheduled_time);
    } else if (it->second->admin_node == survivor) {
      ++sending_recovered;
    }
  }

  // Both nodes decided fires. Not evenly: each second's fires are decided by the node that
  // scans first, and the other, finding nothing left, sleeps to the window's end, so one node
  // makes every scan for stretches of several seconds. The victim's share is what it sent itself
  // and what it still owned at its death; the survivor's, everything after the kill at least.
  std::map<std::string, std::size_t> decided;
  std::map<std::int64_t, std::set<char>> owner_of_second;  // by scheduled second: '1', '2'
  for (const auto& r : rows) {
    const bool orphan = orphaned.count(r.id) > 0;
    ++decided[orphan ? victim : r.admin_node];
    owner_of_second[r.scheduled_time].insert((orphan ? victim : r.admin_node).back());
  }
  EXPECT_GT(decided[kNodeIds[0]], 0u);
  EXPECT_GT(decided[kNodeIds[1]], 0u);
  std::string owners;
  for (const auto& [second, nodes] : owner_of_second) owners += nodes.size() == 1 ? *nodes.begin() : '*';

  // What was observed, for whoever reads the test's output.
  std::cout << "[ cluster  ] " << jobs.size() << " jobs, window " << (window_end - window_start) / 1000 + 1
            << " s; node " << victim << " killed at +" << (kill_time - window_start) << " ms owning "
            << orphaned.size() - orphaned_sending << " pending fires"
            << (caught_due_soon ? " (some due within 1.5 s)" : "") << " and " << orphaned_sending
            << " being sent (" << sending_recovered << " of them resolved by " << survivor
            << "); the pending ones sent by " << survivor << " at most " << latest_orphan << " ms late\n"
            << "[ cluster  ] node that decided each second (1, 2, * both): " << owners << "\n"
            << "[ cluster  ] before the kill: " << before.summary() << "\n"
            << "[ cluster  ] after the kill:  " << after.summary() << "\n"
            << "[ cluster  ] whole run:       " << all.summary() << std::endl;
}

TEST_F(ClusterE2e, ChildJobsRetriesKillAndTimeoutShowInTheLogsApi) {
  AdminProcess& one = *admins_[0];
  AdminProcess& two = *admins_[1];
  const auto child = make_job(one, {{"jobDesc", "child"}, {"executorParam", "child run"}});
  const auto parent = make_job(one, {{"jobDesc", "parent"}, {"childJobId", json::array({child})}});
  const auto failing = make_job(one, {{"jobDesc", "always fails"},
                                      {"executorHandler", "fail"},
                                      {"executorParam", "planned failure"},
                                      {"executorFailRetryCount", 2}});
  const auto long_sleep = make_job(two, {{"jobDesc", "killed"}, {"executorHandler", "sleep"}, {"executorParam", "60"}});
  const auto timed = make_job(two, {{"jobDesc", "times out"},
                                    {"executorHandler", "sleep"},
                                    {"executorParam", "30"},
                                    {"executorTimeout", 1}});
  ASSERT_TRUE(child && parent && failing && long_sleep && timed);

  // Fired through both nodes: each node sends the fires it owns, and either answers for all.
  const auto parent_run = trigger(one, parent);
  const auto failing_run = trigger(one, failing);
  const auto killed_run = trigger(two, long_sleep);
  const auto timed_run = trigger(two, timed);
  ASSERT_TRUE(parent_run && failing_run && killed_run && timed_run);

  // Kill: once the run is with its executor (triggered), the kill goes to that executor, which
  // ends the run and reports it failed.
  json killed;
  ASSERT_TRUE(eventually([&] { return (killed = log(killed_run)).value("state", "") == "triggered"; }))
      << killed.dump();
  auto kill = two.post("logs/" + std::to_string(killed_run) + "/kill", who_);
  ASSERT_EQ(kill.status, 204) << kill.text;
  ASSERT_TRUE(eventually([&] { return is_final(killed = log(killed_run)); })) << killed.dump();
  EXPECT_EQ(killed["state"], "failed") << killed.dump();
  EXPECT_EQ(killed["handleCode"], 500) << killed.dump();
  EXPECT_NE(killed.value("handleMsg", "").find("kill"), std::string::npos) << killed.dump();
  auto content = one.get("logs/" + std::to_string(killed_run) + "/content?fromLine=1", who_);
  EXPECT_EQ(content.status, 200) << content.text;
  EXPECT_NE(content.text.find("stopped"), std::string::npos) << content.text;

  // Timeout: executorTimeout 1 ends a 30 s sleep after about a second, as a 502 failure.
  json timed_out;
  ASSERT_TRUE(eventually([&] { return is_final(timed_out = log(timed_run)); })) << timed_out.dump();
  EXPECT_EQ(timed_out["state"], "failed") << timed_out.dump();
  EXPECT_EQ(timed_out["handleCode"], 502) << timed_out.dump();
  EXPECT_NE(timed_out.value("handleMsg", "").find("timeout"), std::string::npos) << timed_out.dump();
  EXPECT_LT(timed_out.value("handleTime", std::int64_t{0}) - timed_out.value("triggerTime", std::int64_t{0}), 15'000)
      << timed_out.dump();

  // Child job: the parent's success fires the child once, as a PARENT fire naming its parent.
  std::vector<json> children;
  ASSERT_TRUE(eventually([&] {
    children = logs_of(child);
    return children.size() == 1 && is_final(children[0]);
  })) << json(children).dump();
  EXPECT_EQ(log(parent_run)["state"], "succeeded");
  EXPECT_EQ(children[0]["triggerType"], "PARENT") << children[0].dump();
  EXPECT_EQ(children[0]["parentLogId"], parent_run) << children[0].dump();
  EXPECT_EQ(children[0]["state"], "succeeded") << children[0].dump();
  EXPECT_EQ(children[0]["handleMsg"], "child run") << children[0].dump();

  // Retries: executorFailRetryCount 2 gives the first run and two RETRY runs, each naming the
  // run it retries, all failed; the last has no retry left.
  std::vector<json> runs;
  ASSERT_TRUE(eventually([&] {
    runs = logs_of(failing);
    return runs.size() >= 3 && std::all_of(runs.begin(), runs.end(), is_final);
  })) << json(runs).dump();
  ASSERT_EQ(runs.size(), 3u) << json(runs).dump();
  EXPECT_EQ(runs[0]["id"], failing_run);
  EXPECT_EQ(runs[0]["triggerType"], "MANUAL");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i]["state"], "failed") << runs[i].dump();
    EXPECT_EQ(runs[i]["handleMsg"], "planned failure") << runs[i].dump();
    EXPECT_EQ(runs[i]["executorFailRetryCount"], 2 - static_cast<int>(i)) << runs[i].dump();
    if (i > 0) {
      EXPECT_EQ(runs[i]["triggerType"], "RETRY") << runs[i].dump();
      EXPECT_EQ(runs[i]["parentLogId"], runs[i - 1]["id"]) << runs[i].dump();
    }
  }
  EXPECT_EQ(logs_of(failing, "&status=failure").size(), 3u);

  // Nothing more came of any of it: one child run, no fourth attempt.
  EXPECT_EQ(logs_of(child).size(), 1u);
  EXPECT_EQ(logs_of(failing).size(), 3u);
  EXPECT_EQ(logs_of(long_sleep).size(), 1u);
  EXPECT_EQ(logs_of(timed).size(), 1u);
}

// Workflows across a node's death: runs of a workflow are going on, their node runs owned and
// their results recorded by both nodes, when the first node is killed with SIGKILL. The survivor
// takes its pending node fires over and records the results the executors then send it: every
// run ends succeeded, and every node of every run ran exactly once.
TEST_F(ClusterE2e, WorkflowRunsEachNodeExactlyOnceWhenAnAdminIsKilledMidRun) {
  AdminProcess& first = *admins_[0];
  auto node = [&](const std::string& key, const std::string& handler, const std::string& params) {
    // ROUND: a job's runs go to both executors (each runs one job's runs one after the other).
    return json{{"key", key},
                {"jobId", make_job(first, {{"executorHandler", handler}, {"executorRouteStrategy", "ROUND"}})},
                {"params", params}};
  };
  const json workflow = {
      {"jobGroup", group_id_},
      {"name", "across-a-death"},
      {"overlap", "PARALLEL"},
      {"maxParallel", 20},
      {"nodes", json::array({node("a", "sleep", "1"), node("b", "sleep", "1"), node("c", "echo", "${nodes.a.output}"),
                             node("d", "sleep", "1"), node("e", "echo", "end")})},
      {"edges", json::array({{{"from", "a"}, {"to", "b"}},
                             {{"from", "a"}, {"to", "c"}},
                             {{"from", "b"}, {"to", "d"}},
                             {{"from", "c"}, {"to", "d"}},
                             {{"from", "d"}, {"to", "e"}}})}};
  auto created = first.post("workflows", who_, workflow);
  ASSERT_EQ(created.status, 201) << created.text;
  const std::string id = created.body["id"].dump();
  constexpr int kRuns = 8;
  std::vector<std::int64_t> runs;
  for (int i = 0; i < kRuns; ++i) {
    auto& admin = *admins_[static_cast<std::size_t>(i) % admins_.size()];
    auto run = admin.post("workflows/" + id + "/trigger", who_, json::object());
    ASSERT_EQ(run.status, 201) << run.text;
    runs.push_back(run.body["id"].get<std::int64_t>());
  }
  // Mid-run: the first nodes are sleeping, later ones not started yet.
  ASSERT_TRUE(eventually([&] {
    auto page = first.get("logs?jobGroup=" + std::to_string(group_id_) + "&status=success&limit=1000", who_);
    return page.status == 200 && !page.body["items"].empty();
  }, kBound));
  admins_[0]->process().signal(SIGKILL);
  killed_[0] = true;
  ASSERT_EQ(admins_[0]->process().wait_for_exit(kBound), 128 + SIGKILL);

  AdminProcess& survivor = live_admin();
  for (auto run : runs) {
    json body;
    EXPECT_TRUE(eventually([&] {
      body = survivor.get("workflow-runs/" + std::to_string(run), who_).body;
      return body.value("state", "") == "succeeded";
    }, kDrainBound)) << body.dump(2) << "\n" << tail(survivor.process().err());
  }
  std::map<std::pair<std::int64_t, std::string>, int> ran;
  auto page = survivor.get("logs?jobGroup=" + std::to_string(group_id_) + "&limit=1000", who_);
  ASSERT_EQ(page.status, 200) << page.text;
  for (const json& log : page.body["items"]) {
    if (log["workflowRunId"].is_null()) continue;
    EXPECT_EQ(log["state"], "succeeded") << log.dump();
    ++ran[{log["workflowRunId"].get<std::int64_t>(), log["workflowNode"].get<std::string>()}];
  }
  EXPECT_EQ(ran.size(), static_cast<std::size_t>(kRuns) * 5);
  for (const auto& [node_run, count] : ran) {
    EXPECT_EQ(count, 1) << "run " << node_run.first << " node " << node_run.second;
  }
}

}  // namespace
}  // namespace cronwheel
