#include "admin/complete/lost_result_monitor.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

#include "common/protocol/constants.h"
#include "common/protocol/messages.h"

namespace cronwheel::admin {

namespace {

LostResultMonitor::Options checked(LostResultMonitor::Options options) {
  if (options.interval.count() <= 0 || options.lost_after.count() <= 0 || options.dead_after.count() <= 0 ||
      options.ask_after.count() <= 0 || options.start_margin.count() < 0) {
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
  int marked = check_gone(stop);
  if (stop.stop_requested()) return marked;
  return marked + check_forgotten(stop);
}

int LostResultMonitor::check_gone(const std::stop_token& stop) {
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

int LostResultMonitor::check_forgotten(const std::stop_token& stop) {
  if (options_.executors == nullptr) return 0;
  const std::int64_t triggered_before = clock_.now_ms() - options_.ask_after.count();
  // What this pass learnt of each executor address.
  struct Known {
    bool skip = false;            // no answer, or one without run_state: not asked again
    std::int64_t start_time = 0;  // the answering process's start (epoch ms), 0 until told
  };
  std::map<std::string, Known> executors;
  std::optional<CompletionStore::RunCursor> after;
  int marked = 0;
  for (;;) {
    auto runs = store_.triggered_runs(triggered_before, after, options_.batch);
    for (const JobLog& run : runs) {
      if (stop.stop_requested()) return marked;
      Known& known = executors[run.executor_address];
      if (known.skip) continue;
      // Accepted by the process that answers now, which keeps a run until its result is accepted.
      // A run whose delivery was never confirmed may never have reached it: always asked.
      if (known.start_time > 0 && run.trigger_code == common::protocol::kSuccessCode &&
          run.trigger_time.value_or(0) > known.start_time + options_.start_margin.count()) {
        continue;
      }
      common::protocol::LogParam ask;
      ask.log_date_time = log_date_time(run);
      ask.log_id = run.id;
      ask.from_line_num = 1;
      std::optional<common::protocol::LogResult> told;
      try {
        const std::string token = options_.token_of ? options_.token_of(run.job_group) : options_.access_token;
        auto answer = options_.executors->log(run.executor_address, token, ask);
        if (answer.is_success() && answer.content && !answer.content->run_state.empty()) told = *answer.content;
      } catch (const std::exception& e) {
        spdlog::debug("lost-result check: executor {} not asked about run {}: {}", run.executor_address, run.id,
                      e.what());
      }
      if (!told) {
        known.skip = true;  // left to the rule of the executor gone
        continue;
      }
      if (told->executor_start_time > 0) known.start_time = told->executor_start_time;
      if (told->run_state != common::protocol::kRunStateUnknown) continue;
      if (completion_.mark_forgotten(run, triggered_before, known.start_time) == Completion::Outcome::kRecorded) {
        ++marked;
      }
    }
    if (static_cast<int>(runs.size()) < options_.batch) return marked;
    const JobLog& last = runs.back();
    after = CompletionStore::RunCursor{last.executor_address, last.trigger_time.value_or(0), last.id};
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
