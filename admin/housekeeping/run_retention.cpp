#include "admin/housekeeping/run_retention.h"

#include <exception>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

RunRetention::Options checked(RunRetention::Options o) {
  if (o.keep.count() <= 0 || o.interval.count() <= 0 || o.batch <= 0 || o.max_batches <= 0) {
    throw std::invalid_argument("run retention: keep, interval, batch and max_batches must be positive");
  }
  if (o.first_delay.count() < 0 || o.pause.count() < 0) {
    throw std::invalid_argument("run retention: first_delay and pause must not be negative");
  }
  return o;
}

}  // namespace

RunRetention::RunRetention(RetentionStore& store, common::RecurringTasks& tasks, Options options)
    : store_(store),
      clock_(tasks.clock()),
      options_(checked(std::move(options))),
      task_(tasks, {"run retention", options_.interval, options_.first_delay},
            [this](std::stop_token stop) { pass(std::move(stop)); }) {}

RunRetention::~RunRetention() { stop(); }

std::int64_t RunRetention::pass_once(std::stop_token stop) {
  const std::int64_t before = clock_.now_ms() - options_.keep.count();
  std::int64_t deleted = 0;
  for (int i = 0; i < options_.max_batches && !stop.stop_requested(); ++i) {
    if (i > 0 && options_.pause.count() > 0 && !clock_.sleep_until(clock_.steady_now() + options_.pause, stop)) break;
    const std::int64_t n = store_.delete_runs_before(before, options_.batch);
    deleted += n;
    deleted_ += static_cast<std::uint64_t>(n);
    if (n < options_.batch) break;
  }
  // Workflow runs, in batches the same way; their nodes' runs went above like any run.
  for (int i = 0; i < options_.max_batches && !stop.stop_requested(); ++i) {
    if (i > 0 && options_.pause.count() > 0 && !clock_.sleep_until(clock_.steady_now() + options_.pause, stop)) break;
    const std::int64_t n = store_.delete_workflow_runs_before(before, options_.batch);
    workflow_runs_deleted_ += static_cast<std::uint64_t>(n);
    if (n < options_.batch) break;
  }
  return deleted;
}

void RunRetention::pass(std::stop_token stop) noexcept {
  try {
    const auto deleted = pass_once(std::move(stop));
    if (deleted > 0) spdlog::info("run retention: deleted {} run(s) older than {} h", deleted,
                                  std::chrono::duration_cast<std::chrono::hours>(options_.keep).count());
  } catch (const std::exception& e) {
    spdlog::error("run retention: pass failed: {}; trying again in {} s", e.what(),
                  std::chrono::duration_cast<std::chrono::seconds>(options_.interval).count());
  }
  ++passes_;
}

}  // namespace cronwheel::admin
