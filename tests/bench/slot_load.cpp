// Concurrency limits under load, end to end (docs/scheduling.md, "Concurrency limits and
// priorities"): a fresh database on a real PostgreSQL, one or two real cronwheel-admin processes
// (any build: --admin-bin) and fake executors in this process that hold each run --hold-ms
// (fake_executor.h: the result called back that long after /run, its end time noted).
//
// One group of --executors fake executors with maxRunning --max-running (0: no limit, the
// baseline), and --fires jobs in it, job i of priority i % --priorities, each a CRON job that
// fires once, at the same instant T (`S M H D M ? Y` in UTC): the scan decides the --fires
// fires up to 5 s ahead and the ring hands them to the trigger path together at T, so all of
// them are due at once, with one scheduled time. FIRE_ONCE_NOW: a fire that waits for a slot
// longer than the misfire threshold (5 s) still goes out, as the only late fire of its job
// (DO_NOTHING would cancel it, by design).
//
// What it reports, from the executors' receipts and end times, the run rows and a sample of the
// group's slots every --sample-ms:
//  - done once: one run row per job, succeeded, each received by an executor exactly once;
//  - the most running at any instant: from the executors ([/run received, result queued)), from
//    the admin's times ([trigger_time, handle_time): the claim, stamped after the admission, to
//    the result, stamped before the transaction that frees the slot), and the rows holding a
//    slot as sampled; each must be at most the limit;
//  - the drain: T to the last result recorded, fires/s; the mean runs at once over the span of
//    the runs and the ideal drain, ceil(fires / limit) × hold;
//  - admission latency, a slot freed → the next /run: when every fire waits, the k-th run to
//    end frees the slot the (k + limit)-th run to start takes; split at the result recorded
//    (handle_time) and the claim (trigger_time);
//  - priority order: per priority, the median rank of its runs' starts; the runs that started
//    while a fire of a higher priority still waited (all were due at T), by /run received and by
//    claim; the pairs of runs of different priorities that started in the wrong order;
//  - which node admitted the runs (the admitting node owns the run row; without a limit, the node
//    that sent them), CPU of the admins and of PostgreSQL (--pg-pid).
//
// --check exits 1 unless every fire was done exactly once and none of the three counts of runs
// at once exceeded the limit. Never a check of speed or of order.
//
// Prints a human summary, SLOT_LOAD_JSON {...} and SLOT_LOAD_ROW | ... |. Bounded: at most
// --drain seconds after T. Everything it starts (admins as child processes, executors as threads)
// it stops by pid or joins; the database it creates it drops (unless --keep-db). Loopback only.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <CLI/CLI.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "tests/bench/fake_executor.h"
#include "tests/bench/load_support.h"
#include "tests/support/api_session.h"
#include "tests/support/wall_time.h"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using cronwheel::bench::AdminProcess;
using cronwheel::bench::BenchDatabase;
using cronwheel::bench::FakeExecutor;
using cronwheel::bench::Receipt;
using cronwheel::bench::fixed;
using cronwheel::bench::percentile;
using cronwheel::testing::Api;
using cronwheel::testing::in_parallel;
using cronwheel::testing::now_ms;
using cronwheel::testing::sleep_until_ms;

constexpr const char* kPassword = "slot-load-password";
constexpr const char* kToken = "slot-load-token";

struct Settings {
  std::string db_url;
  std::string admin_bin = std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-admin";
  std::string label = "admin";
  int fires = 1000;
  int max_running = 10;
  int priorities = 10;
  int hold_ms = 30;
  int admins = 1;
  int executors = 2;
  int executor_threads = 4;
  int api_connections = 16;
  int drain = 300;
  int sample_ms = 10;
  int pg_pid = 0;
  bool check = false;
  bool keep_db = false;
  std::string json_out;
  std::string admin_log;
  std::vector<std::string> admin_args;
};

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }

// "S M H D M ? Y": the one instant `at_ms` (a whole second) in UTC.
std::string cron_at(std::int64_t at_ms) {
  const std::time_t t = static_cast<std::time_t>(at_ms / 1000);
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  return std::to_string(utc.tm_sec) + " " + std::to_string(utc.tm_min) + " " + std::to_string(utc.tm_hour) + " " +
         std::to_string(utc.tm_mday) + " " + std::to_string(utc.tm_mon + 1) + " ? " + std::to_string(utc.tm_year + 1900);
}

// The most intervals [from, to) open at one instant; an interval ending at the instant another
// begins is not counted with it (the end came first: a slot is freed before it is taken again).
template <class T>
int most_at_once(const std::vector<std::pair<T, T>>& intervals) {
  std::vector<std::pair<T, int>> events;
  for (const auto& [from, to] : intervals) {
    events.emplace_back(from, +1);
    events.emplace_back(to, -1);
  }
  std::sort(events.begin(), events.end());  // at one instant, -1 before +1
  int open = 0, most = 0;
  for (const auto& [at, step] : events) most = std::max(most, open += step);
  return most;
}

// How far starts are from priority order, the runs given as (start, priority); starts at the
// same instant are not ordered among themselves.
struct OrderFigures {
  std::size_t out_of_order = 0;  // runs that started while one of a higher priority had not yet
  double pairs_inverted = 0;     // pairs of different priorities started lower first, of all such pairs
};

template <class T>
OrderFigures priority_order(std::vector<std::pair<T, int>> runs) {
  std::sort(runs.begin(), runs.end());
  OrderFigures out;
  // Suffix maximum by group of equal start: the highest priority that starts strictly later.
  std::vector<int> later_max(runs.size(), std::numeric_limits<int>::min());
  int highest = std::numeric_limits<int>::min();
  for (std::size_t end = runs.size(); end > 0;) {
    std::size_t begin = end;
    while (begin > 0 && runs[begin - 1].first == runs[end - 1].first) --begin;
    for (std::size_t i = begin; i < end; ++i) later_max[i] = highest;
    for (std::size_t i = begin; i < end; ++i) highest = std::max(highest, runs[i].second);
    end = begin;
  }
  std::map<int, std::size_t> earlier;  // runs by priority that started strictly before
  double inverted = 0;
  for (std::size_t begin = 0; begin < runs.size();) {
    std::size_t end = begin;
    while (end < runs.size() && runs[end].first == runs[begin].first) ++end;
    for (std::size_t i = begin; i < end; ++i) {
      if (runs[i].second < later_max[i]) ++out.out_of_order;
      for (auto it = earlier.begin(); it != earlier.end() && it->first < runs[i].second; ++it) {
        inverted += static_cast<double>(it->second);
      }
    }
    for (std::size_t i = begin; i < end; ++i) ++earlier[runs[i].second];
    begin = end;
  }
  double same = 0;
  for (const auto& [priority, n] : earlier) same += static_cast<double>(n) * static_cast<double>(n);
  const double n = static_cast<double>(runs.size());
  const double different = (n * n - same) / 2;
  out.pairs_inverted = different > 0 ? inverted / different : 0;
  return out;
}

// One run row at the end.
struct Row {
  std::int64_t id = 0;
  std::int64_t job = 0;
  int priority = 0;
  std::string state;
  std::string node;
  std::int64_t trigger_ms = 0;  // 0: none
  std::int64_t handle_ms = 0;   // 0: none
};

// The group's fires waiting and the runs holding a slot, every `interval`, on a connection of its
// own: the slots as the database has them, each count one statement's snapshot.
class SlotSampler {
 public:
  SlotSampler(const std::string& db_url, std::int64_t group, std::chrono::milliseconds interval)
      : conn_(db_url), group_(group), interval_(interval) {
    conn_.prepare("slots",
                  "SELECT (SELECT count(*) FROM job_log WHERE job_group = $1 AND waiting_slot AND state = 'pending'),"
                  " (SELECT count(*) FROM job_log WHERE job_group = $1 AND slot_admitted"
                  "  AND state IN ('pending', 'sending', 'triggered'))");
    thread_ = std::thread([this] { run(); });
  }
  ~SlotSampler() { finish(); }

  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  std::int64_t samples = 0;
  std::int64_t most_holding = 0;
  std::int64_t most_waiting = 0;
  std::int64_t most_waiting_at_ms = 0;
  std::string error;

 private:
  void run() {
    while (!stop_) {
      const auto next = std::chrono::steady_clock::now() + interval_;
      try {
        pqxx::nontransaction tx(conn_);
        auto r = tx.exec_prepared1("slots", group_);
        ++samples;
        const auto waiting = r[0].as<std::int64_t>();
        most_holding = std::max(most_holding, r[1].as<std::int64_t>());
        if (waiting > most_waiting) {
          most_waiting = waiting;
          most_waiting_at_ms = now_ms();
        }
      } catch (const std::exception& e) {
        error = e.what();
        return;
      }
      std::this_thread::sleep_until(next);
    }
  }

  pqxx::connection conn_;
  std::int64_t group_;
  std::chrono::milliseconds interval_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: it reads the members above
};

class SlotLoad {
 public:
  explicit SlotLoad(Settings s) : s_(std::move(s)) {}
  ~SlotLoad() { teardown(); }

  int run() {
    setup();
    create_jobs();
    measure();
    const bool ok = report();
    teardown();
    return s_.check && !ok ? 1 : 0;
  }

 private:
  void setup() {
    db_ = std::make_unique<BenchDatabase>(s_.db_url, "slot_load", s_.keep_db);
    for (int i = 0; i < s_.admins; ++i) {
      admins_.push_back(std::make_unique<AdminProcess>(AdminProcess::Options{
          s_.admin_bin, db_->url(), "slot-load-" + std::to_string(i + 1), kPassword, kToken, s_.admin_args}));
    }
    for (auto& a : admins_) {
      if (a->wait_until_listening(90s) == 0) fail("admin " + a->node_id() + " did not start:\n" + a->tail());
    }
    for (int i = 0; i < s_.executors; ++i) {
      FakeExecutor::Options o;
      o.access_token = kToken;
      o.worker_threads = static_cast<std::size_t>(s_.executor_threads);
      o.hold = std::chrono::milliseconds(s_.hold_ms);
      // Each executor calls another admin first: with two admins, results end runs on both nodes.
      for (int k = 0; k < s_.admins; ++k) {
        o.admin_urls.push_back(admins_[static_cast<std::size_t>((i + k) % s_.admins)]->url());
      }
      executors_.push_back(std::make_unique<FakeExecutor>(o));
      executors_.back()->start();
    }
    for (auto& a : admins_) {
      apis_.emplace_back(a->port());
      apis_.back().login("admin", kPassword);
    }
    conn_ = std::make_unique<pqxx::connection>(db_->url());
  }

  void create_jobs() {
    std::vector<std::string> addresses;
    for (auto& e : executors_) addresses.push_back(e->address());
    {
      auto client = apis_[0].client();
      auto g = apis_[0].post(*client, "groups",
                             {{"appName", "slot-load"}, {"title", "slot load"}, {"addressType", 1},
                              {"addressList", addresses}, {"maxRunning", s_.max_running}});
      if (g.status != 201) fail("cannot create the group: " + std::to_string(g.status) + " " + g.text);
      if (g.body.value("maxRunning", -1) != s_.max_running) fail("the group's maxRunning is not as asked: " + g.text);
      group_ = g.body.value("id", std::int64_t{0});
    }
    // T: a whole second far enough ahead for every job to be created and started before the scan
    // decides T (5 s ahead), from the API's pace on a few jobs that never fire (scheduleType NONE).
    constexpr int kProbes = 20;
    const int threads = std::max(1, s_.api_connections);
    const auto probing = std::chrono::steady_clock::now();
    in_parallel(apis_, threads, kProbes, [&](const Api& api, httplib::Client& client, int i) {
      auto r = api.post(client, "jobs", {{"jobGroup", group_}, {"jobDesc", "slot load probe " + std::to_string(i)},
                                         {"scheduleType", "NONE"}, {"executorHandler", "slot"}});
      if (r.status != 201) fail("cannot create a job: " + std::to_string(r.status) + " " + r.text);
    });
    const double per_call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - probing).count() / kProbes;
    due_ms_ = (now_ms() + static_cast<std::int64_t>(2.5 * per_call_s * 2 * s_.fires * 1000) + 8000) / 1000 * 1000;
    const std::string cron = cron_at(due_ms_);

    jobs_.assign(static_cast<std::size_t>(s_.fires), 0);
    in_parallel(apis_, threads, s_.fires, [&](const Api& api, httplib::Client& client, int i) {
      auto r = api.post(client, "jobs",
                        {{"jobGroup", group_},
                         {"jobDesc", "slot load " + std::to_string(i)},
                         {"author", "slot_load"},
                         {"scheduleType", "CRON"},
                         {"scheduleConf", cron},
                         {"timezone", "UTC"},
                         {"misfireStrategy", "FIRE_ONCE_NOW"},
                         {"executorRouteStrategy", "ROUND"},
                         {"executorHandler", "slot"},
                         {"priority", i % s_.priorities}});
      if (r.status != 201) fail("cannot create a job: " + std::to_string(r.status) + " " + r.text);
      jobs_[static_cast<std::size_t>(i)] = r.body.value("id", std::int64_t{0});
    });
    in_parallel(apis_, threads, s_.fires, [&](const Api& api, httplib::Client& client, int i) {
      const auto id = jobs_[static_cast<std::size_t>(i)];
      auto r = api.post(client, "jobs/" + std::to_string(id) + "/start", json::object());
      if (r.status != 200) fail("cannot start a job: " + std::to_string(r.status) + " " + r.text);
      const auto next = r.body.value("triggerNextTime", std::int64_t{0});
      if (next != due_ms_) {
        fail("job " + std::to_string(id) + " fires at " + std::to_string(next) + ", not at " + std::to_string(due_ms_) +
             ": the jobs took longer to create and start than planned");
      }
    });
    started_ms_ = now_ms();
    if (due_ms_ - started_ms_ < 6000) {
      notes_.push_back("the last job started " + fixed(static_cast<double>(due_ms_ - started_ms_) / 1000.0, 1) +
                       " s before T: the scan may have decided its fire late");
    }
  }

  void check_alive() {
    for (auto& a : admins_) {
      if (!a->running()) fail("admin " + a->node_id() + " exited:\n" + a->tail());
    }
  }

  struct Cpu {
    std::int64_t at_ms = 0;
    std::uint64_t admin_ticks = 0;
    std::uint64_t db_ticks = 0;
  };
  Cpu cpu() const {
    Cpu c{now_ms(), 0, cronwheel::bench::tree_cpu_ticks(s_.pg_pid)};
    for (const auto& a : admins_) {
      auto st = cronwheel::bench::read_stat(a->pid());
      c.admin_ticks += st ? st->cpu_ticks : 0;
    }
    return c;
  }

  // From 5.5 s before T (the scan that decides the fires) until every fire's row is final, or
  // --drain seconds after T.
  void measure() {
    sleep_until_ms(due_ms_ - 5500);
    check_alive();
    cpu_before_ = cpu();
    if (s_.sample_ms > 0) {
      sampler_ = std::make_unique<SlotSampler>(db_->url(), group_, std::chrono::milliseconds(s_.sample_ms));
    }
    const std::int64_t until = due_ms_ + static_cast<std::int64_t>(s_.drain) * 1000;
    while (now_ms() < until) {
      check_alive();
      pqxx::nontransaction tx(*conn_);
      auto r = tx.exec_params1("SELECT count(*), count(*) FILTER (WHERE state IN ('pending', 'sending', 'triggered'))"
                               " FROM job_log WHERE job_group = $1",
                               group_);
      if (r[0].as<std::int64_t>() >= s_.fires && r[1].as<std::int64_t>() == 0) break;
      std::this_thread::sleep_for(50ms);
    }
    cpu_after_ = cpu();
    if (sampler_) sampler_->finish();
    if (now_ms() >= until) notes_.push_back("the drain bound (" + std::to_string(s_.drain) + " s) ran out");
  }

  std::vector<Row> read_rows() {
    std::vector<Row> rows;
    pqxx::nontransaction tx(*conn_);
    for (const auto& r : tx.exec_params(
             "SELECT l.id, l.job_id, j.priority, l.state, coalesce(l.admin_node, ''),"
             " coalesce((extract(epoch FROM l.trigger_time) * 1000)::bigint, 0),"
             " coalesce((extract(epoch FROM l.handle_time) * 1000)::bigint, 0)"
             " FROM job_log l JOIN job_info j ON j.id = l.job_id WHERE l.job_group = $1",
             group_)) {
      rows.push_back({r[0].as<std::int64_t>(), r[1].as<std::int64_t>(), r[2].as<int>(), r[3].as<std::string>(),
                      r[4].as<std::string>(), r[5].as<std::int64_t>(), r[6].as<std::int64_t>()});
    }
    return rows;
  }

  // Prints the summary, the JSON line and the table row; answers whether every check held.
  bool report() {
    const auto rows = read_rows();
    std::vector<Receipt> receipts;
    for (const auto& e : executors_) {
      auto r = e->receipts();
      receipts.insert(receipts.end(), r.begin(), r.end());
    }
    const std::int64_t limit = s_.max_running;

    // Done once: a row per job, succeeded, received once.
    std::unordered_map<std::int64_t, const Row*> row_of;
    std::set<std::int64_t> jobs_with_row;
    std::map<std::string, std::int64_t> states, by_node;
    std::size_t jobs_twice = 0;
    for (const auto& r : rows) {
      row_of[r.id] = &r;
      if (!jobs_with_row.insert(r.job).second) ++jobs_twice;
      ++states[r.state];
      ++by_node[r.node];
    }
    std::unordered_map<std::int64_t, int> received;
    std::size_t unknown = 0;
    for (const auto& r : receipts) {
      ++received[r.log_id];
      if (!row_of.count(r.log_id)) ++unknown;
    }
    std::size_t never = 0, twice = 0, still_held = 0;
    for (const auto& r : rows) {
      auto it = received.find(r.id);
      if (it == received.end()) {
        ++never;
      } else if (it->second > 1) {
        twice += static_cast<std::size_t>(it->second - 1);
      }
    }
    for (const auto& r : receipts) still_held += r.ended_us == 0 ? 1 : 0;
    const std::int64_t succeeded = states.count("succeeded") ? states["succeeded"] : 0;
    const bool done_once = static_cast<int>(rows.size()) == s_.fires && jobs_twice == 0 &&
                           jobs_with_row.size() == static_cast<std::size_t>(s_.fires) && succeeded == s_.fires &&
                           never == 0 && twice == 0 && unknown == 0 && still_held == 0;

    // Runs at once: at the executors, at the admin, and as sampled.
    std::vector<std::pair<std::int64_t, std::int64_t>> at_executors, at_admin;
    std::vector<std::int64_t> starts_us, ends_us, claims_ms, results_ms;
    double busy_us = 0;
    for (const auto& r : receipts) {
      if (r.ended_us == 0) continue;
      at_executors.emplace_back(r.received_us, r.ended_us);
      starts_us.push_back(r.received_us);
      ends_us.push_back(r.ended_us);
      busy_us += static_cast<double>(r.ended_us - r.received_us);
    }
    for (const auto& r : rows) {
      if (r.trigger_ms == 0 || r.handle_ms == 0) continue;
      at_admin.emplace_back(r.trigger_ms, r.handle_ms);
      claims_ms.push_back(r.trigger_ms);
      results_ms.push_back(r.handle_ms);
    }
    for (auto* v : {&starts_us, &ends_us, &claims_ms, &results_ms}) std::sort(v->begin(), v->end());
    const int most_executors = most_at_once(at_executors);
    const int most_admin = most_at_once(at_admin);
    const std::int64_t most_sampled = sampler_ ? sampler_->most_holding : -1;
    const bool within = limit == 0 || (most_executors <= limit && most_admin <= limit && most_sampled <= limit);
    const bool ok = done_once && within;

    // The drain and the rate.
    const std::int64_t last_result_ms = results_ms.empty() ? due_ms_ : results_ms.back();
    const double drain_s = static_cast<double>(std::max<std::int64_t>(1, last_result_ms - due_ms_)) / 1000.0;
    const double rate = static_cast<double>(rows.size()) / drain_s;
    const double first_start_s =
        starts_us.empty() ? 0 : (static_cast<double>(starts_us.front()) / 1000.0 - static_cast<double>(due_ms_)) / 1000.0;
    const double span_us = starts_us.empty() ? 1 : static_cast<double>(ends_us.back() - starts_us.front());
    const double mean_running = busy_us / std::max(1.0, span_us);
    const double ideal_s =
        limit > 0 ? std::ceil(static_cast<double>(s_.fires) / static_cast<double>(limit)) * s_.hold_ms / 1000.0 : 0;

    // Admission latency: the k-th end frees the slot the (k + limit)-th start takes.
    std::vector<double> freed_to_run, end_to_recorded, recorded_to_claim, claim_to_run;
    if (limit > 0) {
      const auto n = std::min({starts_us.size(), ends_us.size(), claims_ms.size(), results_ms.size()});
      for (std::size_t i = static_cast<std::size_t>(limit); i < n; ++i) {
        const std::size_t k = i - static_cast<std::size_t>(limit);
        const double end = static_cast<double>(ends_us[k]) / 1000.0;
        const double start = static_cast<double>(starts_us[i]) / 1000.0;
        freed_to_run.push_back(start - end);
        end_to_recorded.push_back(static_cast<double>(results_ms[k]) - end);
        recorded_to_claim.push_back(static_cast<double>(claims_ms[i] - results_ms[k]));
        claim_to_run.push_back(start - static_cast<double>(claims_ms[i]));
      }
    }
    for (auto* v : {&freed_to_run, &end_to_recorded, &recorded_to_claim, &claim_to_run}) std::sort(v->begin(), v->end());

    // Priority order, by /run received and by claim.
    std::vector<std::pair<std::int64_t, int>> by_receipt, by_claim;
    for (const auto& r : receipts) {
      auto it = row_of.find(r.log_id);
      if (it != row_of.end()) by_receipt.emplace_back(r.received_us, it->second->priority);
    }
    for (const auto& r : rows) {
      if (r.trigger_ms > 0) by_claim.emplace_back(r.trigger_ms, r.priority);
    }
    const auto order_received = priority_order(by_receipt);
    const auto order_claimed = priority_order(by_claim);
    std::sort(by_receipt.begin(), by_receipt.end());
    std::map<int, std::vector<double>> ranks;  // by priority, the ranks (0-based) of its starts
    std::map<int, std::int64_t> last_start_ms;
    for (std::size_t i = 0; i < by_receipt.size(); ++i) {
      ranks[by_receipt[i].second].push_back(static_cast<double>(i));
      last_start_ms[by_receipt[i].second] = by_receipt[i].first / 1000 - due_ms_;
    }
    json by_priority = json::object();
    std::string ranks_line;
    for (auto it = ranks.rbegin(); it != ranks.rend(); ++it) {
      const double median = percentile(it->second, 0.5);
      by_priority[std::to_string(it->first)] = {{"runs", it->second.size()},
                                                {"median_start_rank", median},
                                                {"last_start_ms", last_start_ms[it->first]}};
      ranks_line += " " + std::to_string(it->first) + ": " + fixed(median, 0);
    }

    const double ticks = static_cast<double>(cronwheel::bench::clock_ticks());
    const double cpu_s = static_cast<double>(std::max<std::int64_t>(1, cpu_after_.at_ms - cpu_before_.at_ms)) / 1000.0;
    const double admin_cpu = static_cast<double>(cpu_after_.admin_ticks - cpu_before_.admin_ticks) / ticks / cpu_s;
    const double db_cpu =
        s_.pg_pid > 0 ? static_cast<double>(cpu_after_.db_ticks - cpu_before_.db_ticks) / ticks / cpu_s : -1;

    auto p = [](const std::vector<double>& v, double q) { return std::round(percentile(v, q) * 10) / 10; };
    std::string nodes;
    for (const auto& [node, n] : by_node) nodes += (nodes.empty() ? "" : ", ") + node + " " + std::to_string(n);
    json out = {{"label", s_.label},
                {"fires", s_.fires},
                {"max_running", s_.max_running},
                {"priorities", s_.priorities},
                {"hold_ms", s_.hold_ms},
                {"admins", s_.admins},
                {"executors", s_.executors},
                {"ok", ok},
                {"done_once", done_once},
                {"rows", rows.size()},
                {"rows_by_state", states},
                {"jobs_with_two_rows", jobs_twice},
                {"rows_never_received", never},
                {"duplicate_receipts", twice},
                {"receipts_of_no_row", unknown},
                {"runs_still_held", still_held},
                {"most_running_executors", most_executors},
                {"most_running_admin", most_admin},
                {"most_holding_sampled", most_sampled},
                {"samples", sampler_ ? sampler_->samples : 0},
                {"most_waiting_sampled", sampler_ ? sampler_->most_waiting : 0},
                {"most_waiting_at_ms", sampler_ && sampler_->most_waiting > 0 ? sampler_->most_waiting_at_ms - due_ms_ : 0},
                {"first_start_s", std::round(first_start_s * 1000) / 1000},
                {"drain_s", drain_s},
                {"fires_per_s", std::round(rate * 10) / 10},
                {"ideal_drain_s", ideal_s},
                {"mean_running", std::round(mean_running * 100) / 100},
                {"freed_to_run_p50_ms", p(freed_to_run, 0.5)},
                {"freed_to_run_p99_ms", p(freed_to_run, 0.99)},
                {"end_to_recorded_p50_ms", p(end_to_recorded, 0.5)},
                {"end_to_recorded_p99_ms", p(end_to_recorded, 0.99)},
                {"recorded_to_claim_p50_ms", p(recorded_to_claim, 0.5)},
                {"recorded_to_claim_p99_ms", p(recorded_to_claim, 0.99)},
                {"claim_to_run_p50_ms", p(claim_to_run, 0.5)},
                {"claim_to_run_p99_ms", p(claim_to_run, 0.99)},
                {"out_of_order_received", order_received.out_of_order},
                {"out_of_order_claimed", order_claimed.out_of_order},
                {"pairs_inverted_received", std::round(order_received.pairs_inverted * 10000) / 10000},
                {"pairs_inverted_claimed", std::round(order_claimed.pairs_inverted * 10000) / 10000},
                {"by_priority", by_priority},
                {"runs_by_node", by_node},
                {"admin_cpu_cores", std::round(admin_cpu * 100) / 100},
                {"db_cpu_cores", db_cpu < 0 ? json(nullptr) : json(std::round(db_cpu * 100) / 100)},
                {"notes", notes_},
                {"admin_args", s_.admin_args},
                {"admin_bin", s_.admin_bin}};

    const std::string limit_text = limit > 0 ? "maxRunning " + std::to_string(limit) : "no limit";
    std::printf("slot_load %s: %d fires due at once (%d jobs, priorities 0..%d), group of %d fake executors holding "
                "each run %d ms, %s, %d admin%s\n",
                s_.label.c_str(), s_.fires, s_.fires, s_.priorities - 1, s_.executors, s_.hold_ms, limit_text.c_str(),
                s_.admins, s_.admins == 1 ? "" : "s");
    std::printf("  done once: %zu rows %s; %zu jobs with two rows, %zu rows never received, %zu received twice, %zu "
                "receipts of no row, %zu runs still held: %s\n",
                rows.size(), json(states).dump().c_str(), jobs_twice, never, twice, unknown, still_held,
                done_once ? "yes" : "NO");
    std::printf("  most running at once: %d at the executors, %d by the admin's times, %lld holding a slot in %lld "
                "samples: %s\n",
                most_executors, most_admin, static_cast<long long>(most_sampled),
                static_cast<long long>(sampler_ ? sampler_->samples : 0),
                limit == 0 ? "no limit" : within ? "never over the limit" : "OVER THE LIMIT");
    if (sampler_) {
      std::printf("  waiting for a slot: at most %lld, %.2f s after T\n", static_cast<long long>(sampler_->most_waiting),
                  sampler_->most_waiting > 0
                      ? static_cast<double>(sampler_->most_waiting_at_ms - due_ms_) / 1000.0
                      : 0.0);
    }
    std::printf("  drain: first /run %.3f s after T, last result %.2f s after T: %.1f fires/s; %.2f runs at once on "
                "average%s\n",
                first_start_s, drain_s, rate, mean_running,
                limit > 0 ? (", ideal drain " + fixed(ideal_s, 2) + " s").c_str() : "");
    if (limit > 0) {
      std::printf("  a slot freed → the next /run (ms): p50 %.1f, p99 %.1f; end → result recorded p50 %.1f / p99 %.1f, "
                  "recorded → claim %.1f / %.1f, claim → /run %.1f / %.1f\n",
                  percentile(freed_to_run, 0.5), percentile(freed_to_run, 0.99), percentile(end_to_recorded, 0.5),
                  percentile(end_to_recorded, 0.99), percentile(recorded_to_claim, 0.5),
                  percentile(recorded_to_claim, 0.99), percentile(claim_to_run, 0.5), percentile(claim_to_run, 0.99));
    }
    std::printf("  priority order: %zu runs started (%zu claimed) while a higher priority waited; pairs inverted %.1f%% "
                "(%.1f%% by claim); median start rank by priority:%s\n",
                order_received.out_of_order, order_claimed.out_of_order, order_received.pairs_inverted * 100,
                order_claimed.pairs_inverted * 100, ranks_line.c_str());
    std::printf("  runs by %s node: %s; admins %.2f cores, database %s cores\n", limit > 0 ? "admitting" : "sending",
                nodes.c_str(), admin_cpu, db_cpu < 0 ? "n/a" : fixed(db_cpu, 2).c_str());
    if (sampler_ && !sampler_->error.empty()) notes_.push_back("the slot sampler stopped: " + sampler_->error);
    for (const auto& n : notes_) std::printf("  note: %s\n", n.c_str());
    std::printf("SLOT_LOAD_JSON %s\n", out.dump().c_str());
    std::printf("SLOT_LOAD_ROW | %s | %d | %d | %s | %d | %s | %d / %d / %lld | %.2f | %.1f | %s | %.2f | %s | %s | %s "
                "| %s | %.2f | %s |\n",
                s_.label.c_str(), s_.admins, s_.fires, limit > 0 ? std::to_string(limit).c_str() : "none", s_.hold_ms,
                done_once ? "yes" : "**no**", most_executors, most_admin, static_cast<long long>(most_sampled), drain_s,
                rate, limit > 0 ? fixed(ideal_s, 2).c_str() : "–", mean_running,
                limit > 0 ? (fixed(percentile(freed_to_run, 0.5), 1) + " / " + fixed(percentile(freed_to_run, 0.99), 1)).c_str()
                          : "–",
                limit > 0 ? (fixed(percentile(end_to_recorded, 0.5), 1) + " / " + fixed(percentile(recorded_to_claim, 0.5), 1) +
                             " / " + fixed(percentile(claim_to_run, 0.5), 1))
                                .c_str()
                          : "–",
                limit > 0 ? (std::to_string(order_received.out_of_order) + " (" + std::to_string(order_claimed.out_of_order) + ")").c_str()
                          : "–",
                limit > 0 ? (fixed(order_received.pairs_inverted * 100, 1) + "%").c_str() : "–", admin_cpu,
                nodes.c_str());
    std::printf("SLOT_LOAD_RATE %d %d %.2f\n", s_.admins, s_.max_running, rate);
    std::fflush(stdout);
    if (!s_.json_out.empty()) {
      std::ofstream f(s_.json_out, std::ios::app);
      f << out.dump() << "\n";
    }
    return ok;
  }

  void teardown() noexcept {
    try {
      sampler_.reset();
      // Executors first: they deliver the results they still hold while the admins are up.
      for (auto& e : executors_) e->stop(2s);
      for (auto& a : admins_) {
        const int code = a->stop(30s);
        if (code != 0) std::fprintf(stderr, "admin %s ended with %d\n%s\n", a->node_id().c_str(), code, a->tail().c_str());
      }
      if (!s_.admin_log.empty() && !admins_.empty()) {
        std::ofstream f(s_.admin_log);
        for (auto& a : admins_) f << "== " << a->node_id() << "\n" << a->output();
      }
      admins_.clear();
      executors_.clear();
      conn_.reset();
      db_.reset();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "slot_load: clean-up: %s\n", e.what());
    }
  }

  Settings s_;
  std::unique_ptr<BenchDatabase> db_;
  std::vector<std::unique_ptr<AdminProcess>> admins_;
  std::vector<std::unique_ptr<FakeExecutor>> executors_;
  std::vector<Api> apis_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<SlotSampler> sampler_;
  std::int64_t group_ = 0;
  std::vector<std::int64_t> jobs_;
  std::int64_t due_ms_ = 0, started_ms_ = 0;
  Cpu cpu_before_, cpu_after_;
  std::vector<std::string> notes_;
};

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"slot_load: fires due at once in a group with a concurrency limit, end to end (real admins, "
               "PostgreSQL, fake executors holding each run)"};
  app.add_option("--db-url", s.db_url,
                 "PostgreSQL server URL of a superuser (default: $CRONWHEEL_TEST_DB_URL); a fresh database is created "
                 "on it and dropped")
      ->envname("CRONWHEEL_TEST_DB_URL");
  app.add_option("--admin-bin", s.admin_bin, "The cronwheel-admin binary to measure")->capture_default_str();
  app.add_option("--label", s.label, "Names the admin build in the report")->capture_default_str();
  app.add_option("--fires", s.fires, "Fires due at once: one job each")->check(CLI::Range(1, 20'000))->capture_default_str();
  app.add_option("--max-running", s.max_running, "The group's maxRunning (0: no limit, the baseline)")
      ->check(CLI::Range(0, 10'000))
      ->capture_default_str();
  app.add_option("--priorities", s.priorities, "Job i has priority i % this")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--hold-ms", s.hold_ms, "How long the fake executors hold each run")
      ->check(CLI::Range(0, 60'000))
      ->capture_default_str();
  app.add_option("--admins", s.admins, "Admin nodes (2: both admit for the group)")->check(CLI::Range(1, 2))->capture_default_str();
  app.add_option("--executors", s.executors, "Fake executors in the group")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--executor-threads", s.executor_threads, "Worker threads per fake executor")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--api-connections", s.api_connections, "Parallel API connections creating and starting the jobs")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--drain", s.drain, "Seconds after T the fires may take to end")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--sample-ms", s.sample_ms, "The group's slots read this often (0: not at all)")
      ->check(CLI::Range(0, 10'000))
      ->capture_default_str();
  app.add_option("--pg-pid", s.pg_pid, "The postmaster's pid: its and its backends' CPU are reported");
  app.add_option("--admin-arg", s.admin_args, "More flags for the admins, e.g. --admin-arg='--db-pool-size 16' (repeatable)");
  app.add_option("--admin-log", s.admin_log, "Write the admins' output to this file at the end");
  app.add_flag("--check", s.check, "Exit 1 unless every fire ran exactly once and never more than the limit at once");
  app.add_flag("--keep-db", s.keep_db, "Keep the database afterwards");
  app.add_option("--json-out", s.json_out, "Append the result's JSON line to this file");
  CLI11_PARSE(app, argc, argv);
  if (s.db_url.empty()) {
    std::fprintf(stderr, "slot_load: no database: pass --db-url or set CRONWHEEL_TEST_DB_URL "
                         "(tests/bench/slot_load.sh starts one)\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  spdlog::set_level(spdlog::level::warn);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    SlotLoad load(s);
    return load.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "slot_load: %s\n", e.what());
    return 2;
  }
}
