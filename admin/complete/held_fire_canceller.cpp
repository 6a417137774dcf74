#include "admin/complete/held_fire_canceller.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/protocol/messages.h"

namespace cronwheel::admin {

HeldFireCanceller::HeldFireCanceller(CompletionStore& store, ExecutorClient& executors, common::Clock& clock,
                                     Options options)
    : store_(store), executors_(executors), clock_(clock), options_(std::move(options)) {
  worker_ = std::thread([this] { work(); });
}

HeldFireCanceller::~HeldFireCanceller() { stop(); }

std::vector<JobLog> HeldFireCanceller::held(std::int64_t job_id) {
  return store_.held_runs(job_id, clock_.now_ms(), kMaxHeldRunsRead);
}

namespace {

// Under the canceller's lock: cuts `items` (runs, or jobs whose runs are read later) to the room
// left among kMaxQueuedRuns queued entries, warning of what it drops, and counts what it keeps in
// `queued`. False when nothing fits.
template <typename Items>
bool reserve_room(std::size_t& queued, Items& items, const char* what, const std::string& reason) {
  constexpr std::size_t kMax = HeldFireCanceller::kMaxQueuedRuns;
  if (queued + items.size() > kMax) {
    const std::size_t room = kMax - std::min(kMax, queued);
    spdlog::warn("lead dispatch: {} {} not taken back ({}): {} wait already; they run at their instant",
                 items.size() - room, what, reason, queued);
    items.resize(room);
  }
  queued += items.size();
  return !items.empty();
}

}  // namespace

void HeldFireCanceller::take_back(std::vector<JobLog> runs, std::string reason, GivenBack then) noexcept {
  if (runs.empty()) return;
  try {
    std::lock_guard lock(mutex_);
    if (stopping_ || !reserve_room(queued_runs_, runs, "held runs", reason)) return;
    queue_.push_back({{}, std::move(runs), std::move(reason), then});
    changed_.notify_all();
  } catch (const std::exception& e) {
    spdlog::warn("lead dispatch: held runs not taken back: {}", e.what());
  }
}

void HeldFireCanceller::take_back_jobs(std::vector<std::int64_t> job_ids, std::string reason, GivenBack then) noexcept {
  if (job_ids.empty()) return;
  try {
    std::lock_guard lock(mutex_);
    if (stopping_ || !reserve_room(queued_runs_, job_ids, "jobs' held runs", reason)) return;
    queue_.push_back({std::move(job_ids), {}, std::move(reason), then});
    changed_.notify_all();
  } catch (const std::exception& e) {
    spdlog::warn("lead dispatch: held runs not taken back: {}", e.what());
  }
}

void HeldFireCanceller::wait_idle() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || stopping_; });
}

void HeldFireCanceller::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    queued_runs_ = 0;
    changed_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

HeldFireCanceller::Counters HeldFireCanceller::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

void HeldFireCanceller::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Request request = std::move(queue_.front());
    queue_.pop_front();
    queued_runs_ -= request.runs.size() + request.job_ids.size();
    busy_ = true;
    lock.unlock();
    for (std::int64_t job_id : request.job_ids) {
      try {
        auto runs = held(job_id);
        request.runs.insert(request.runs.end(), runs.begin(), runs.end());
      } catch (const std::exception& e) {
        spdlog::warn("lead dispatch: held runs of job {} not read, not taken back: {}", job_id, e.what());
      }
    }
    recheck(handle(request), request);
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

void HeldFireCanceller::recheck(std::vector<JobLog> in_flight, const Request& request) noexcept {
  for (int check = 0; check < options_.in_flight_checks && !in_flight.empty(); ++check) {
    {
      std::unique_lock lock(mutex_);
      if (changed_.wait_for(lock, options_.in_flight_wait, [&] { return stopping_; })) return;
      counters_.rechecked += in_flight.size();
    }
    Request again{{}, {}, request.reason, request.then};
    if (request.then == GivenBack::kForget) {
      // Gone with their job: nothing to read or write, the executors are only asked again.
      again.runs = std::move(in_flight);
      in_flight = handle(again);
      continue;
    }
    // The same runs as they are now (a job sent again has new held runs: those are not asked for).
    std::map<std::int64_t, std::vector<std::int64_t>> ids_by_job;
    for (const auto& run : in_flight) ids_by_job[run.job_id].push_back(run.id);
    for (const auto& [job_id, ids] : ids_by_job) {
      try {
        for (auto& run : held(job_id)) {
          if (std::find(ids.begin(), ids.end(), run.id) != ids.end()) again.runs.push_back(std::move(run));
        }
      } catch (const std::exception& e) {
        spdlog::warn("lead dispatch: held runs of job {} not read again, not taken back: {}", job_id, e.what());
      }
    }
    in_flight = handle(again);
  }
  for (const auto& run : in_flight) {
    spdlog::warn("lead dispatch: run {} of job {} not taken back ({}): still on its way to {}; it starts at its "
                 "instant",
                 run.id, run.job_id, request.reason, run.executor_address);
  }
}

std::vector<JobLog> HeldFireCanceller::handle(const Request& request) noexcept {
  std::vector<JobLog> in_flight;
  // One request per executor (and group: its token), in chunks the protocol allows.
  std::map<std::pair<std::string, std::int64_t>, std::vector<std::int64_t>> by_executor;
  std::map<std::int64_t, const JobLog*> sending;
  for (const auto& run : request.runs) {
    by_executor[{run.executor_address, run.job_group}].push_back(run.id);
    if (run.state == FireState::kSending) sending[run.id] = &run;
  }
  for (const auto& [key, ids] : by_executor) {
    const auto& [address, group] = key;
    for (std::size_t begin = 0; begin < ids.size(); begin += common::protocol::kMaxLeadFires) {
      common::protocol::LeadCancelParam param;
      param.reason = request.reason;
      param.log_ids.assign(ids.begin() + static_cast<std::ptrdiff_t>(begin),
                           ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), begin + common::protocol::kMaxLeadFires)));
      try {
        const std::string token = options_.token_of ? options_.token_of(group) : std::string();
        auto answer = executors_.cancel_lead(address, token, param);
        {
          std::lock_guard lock(mutex_);
          counters_.asked += param.log_ids.size();
          if (answer.is_success() && answer.content) {
            counters_.cancelled += answer.content->cancelled.size();
            counters_.started += answer.content->started.size();
          }
        }
        if (!answer.is_success() || !answer.content) {
          spdlog::warn("lead dispatch: executor {} did not give back {} held runs ({}): {}; they run at their instant",
                       address, param.log_ids.size(), request.reason, answer.msg);
          continue;
        }
        for (std::int64_t id : param.log_ids) {
          auto run = sending.find(id);
          if (run == sending.end()) continue;
          const auto& c = *answer.content;
          const bool known = std::find(c.cancelled.begin(), c.cancelled.end(), id) != c.cancelled.end() ||
                             std::find(c.started.begin(), c.started.end(), id) != c.started.end();
          if (!known) in_flight.push_back(*run->second);
        }
        if (request.then == GivenBack::kForget) continue;
        const std::string given_back = " before its instant (executor " + address + " gave it back)";
        for (std::int64_t id : answer.content->cancelled) {
          if (std::find(param.log_ids.begin(), param.log_ids.end(), id) == param.log_ids.end()) continue;  // not asked
          if (request.then == GivenBack::kSendAgain) {
            if (store_.return_not_started(id, options_.node_id,
                                          "Taken back: " + request.reason + given_back + "; sent again as the job is now")) {
              std::lock_guard lock(mutex_);
              ++counters_.sent_again;
            }
          } else if (store_.cancel_not_started(id, "Cancelled: " + request.reason + given_back)) {
            std::lock_guard lock(mutex_);
            ++counters_.ended;
          }
        }
      } catch (const std::exception& e) {
        spdlog::warn("lead dispatch: taking back {} held runs from {} failed: {}", param.log_ids.size(), address,
                     e.what());
      }
    }
  }
  return in_flight;
}

}  // namespace cronwheel::admin
