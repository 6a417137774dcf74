#include "admin/complete/lost_result_monitor.h"

#include <stdexcept>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

LostResultMonitor::Options checked(LostResultMonitor::Options options) {
  if (options.interval.count() <= 0 || options.lost_after.count() <= 0 || options.dead_after.count() <= 0) {
    throw std::invalid_argument("lost-result monitor durations must be positive");
  }
  if (options.batch <= 0) throw std::invalid_argument("lost-result monitor batch must be positive");
  return options;
}

}  // namespace

LostResultMonitor::LostResultMonitor(CompletionStore& store, Completion& completion, common::RecurringTasks& tasks,
                                     Options options)
    : store_(store),
      completion_(completion),
      clock_(tasks.clock()),
      options_(checked(options)),
      task_(tasks, {"lost-result check", options_.interval},
            [this](std::stop_token stop) { pass(std::move(stop)); }) {}

LostResultMonitor::~LostResultMonitor() { stop(); }

int LostResultMonitor::check_once(std::stop_token stop) {
  const std::int64_t triggered_before = clock_.now_ms() - options_.lost_after.count();
  const std::int64_t dead_after = options_.dead_after.count();
  int marked = 0;
  for (;;) {
    auto candidates = store_.lost_candidates(triggered_before, dead_after, options_.batch);
    int marked_now = 0;
    for (const JobLog& run : candidates) {
      if (stop.stop_requested()) return marked + marked_now;
      if (completion_.mark_lost(run, triggered_before, dead_after, options_.lost_after) ==
          Completion::Outcome::kRecorded) {
        ++marked_now;
      }
    }
    marked += marked_now;
    // A full batch may have more behind it. Each run just read has left `triggered` or no
    // longer qualifies, so the next query reads new ones; a batch that marked nothing (every
    // run decided by someone else meanwhile) ends the pass rather than risk spinning.
    if (static_cast<int>(candidates.size()) < options_.batch || marked_now == 0) return marked;
  }
}

void LostResultMonitor::pass(std::stop_token stop) noexcept {
  try {
    check_once(std::move(stop));
  } catch (const std::exception& e) {
    spdlog::warn("lost-result check failed, trying again in {} ms: {}", options_.interval.count(), e.what());
  }
}

}  // namespace cronwheel::admin
