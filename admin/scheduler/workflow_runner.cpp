#include "admin/scheduler/workflow_runner.h"

#include <spdlog/spdlog.h>

#include "admin/scheduler/fire_decision.h"

namespace cronwheel::admin {

WorkflowRunner::WorkflowRunner(WorkflowStore& store, common::RecurringTasks& tasks, std::string node_id,
                               FiresWritten fires_written, Kill kill, Options options)
    : store_(store),
      clock_(tasks.clock()),
      node_id_(std::move(node_id)),
      fires_written_(std::move(fires_written)),
      kill_(std::move(kill)),
      options_(options),
      task_(tasks, {"workflow runner", options_.interval}, [this](std::stop_token stop) { pass(std::move(stop)); }) {
  if (options_.calendars != nullptr) calendars_.emplace(*options_.calendars);
}

WorkflowRunner::~WorkflowRunner() { stop(); }

void WorkflowRunner::pass_once() {
  const auto now = clock_.now_ms();
  static const ScanCalendars kNoCalendars;
  const ScanCalendars& calendars = calendars_ ? calendars_->calendars() : kNoCalendars;
  std::vector<std::int64_t> wanted;
  auto scanned = store_.scan(node_id_, now, now + kPreReadWindowMs, options_.scan_limit,
                             [&](const std::vector<DueJob>& due) {
                               auto decided = decide_fires(due, now, kPreReadWindowMs, calendars);
                               wanted = decided.calendars_wanted;
                               return decided;
                             });
  if (fires_written_ && !scanned.fires.empty()) fires_written_(scanned.fires);
  // Workflows whose calendar the scan lacked are decided at the next pass, which has it.
  if (calendars_ && !wanted.empty()) {
    try {
      calendars_->load(wanted);
    } catch (const std::exception& e) {
      spdlog::warn("workflow runner: cannot read calendars, their workflows wait: {}", e.what());
    }
  }
  auto started = store_.start_waiting(now, node_id_, options_.batch);
  if (fires_written_ && !started.fires.empty()) fires_written_(started.fires);
  auto timed_out = store_.time_out(now, node_id_, options_.batch);
  if (fires_written_ && !timed_out.fires.empty()) fires_written_(timed_out.fires);
  for (const auto& run : timed_out.runs) {
    spdlog::info("workflow run {} ({}) {}: {}", run.id, run.workflow_name, to_string(run.state), run.reason);
  }
  if (kill_) {
    for (const JobLog& run : store_.kill_candidates(options_.batch)) kill_(run);
  }
  if (now - counted_at_ >= options_.count_every.count()) {
    auto counts = store_.count_runs();
    counted_at_ = now;
    std::lock_guard lock(counts_mutex_);
    counts_ = std::move(counts);
  }
}

std::vector<std::pair<WorkflowRunState, std::int64_t>> WorkflowRunner::run_counts() const {
  std::lock_guard lock(counts_mutex_);
  return counts_;
}

void WorkflowRunner::pass(std::stop_token stop) noexcept {
  if (stop.stop_requested()) return;
  try {
    pass_once();
  } catch (const std::exception& e) {
    spdlog::warn("workflow runner: {}", e.what());
  }
}

}  // namespace cronwheel::admin
