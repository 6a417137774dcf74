#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/util/clock.h"

namespace cronwheel::admin {

// Executor addresses a send could not reach (ExecutorClient's kNotReachedCode: the connection
// was refused, or never made), so that fires are routed among the others until the executor
// shows it is back: it registers again (cleared()), or `hold` passes (an executor registers
// every 30 s; one that was only restarting is back by then). A group whose addresses are all
// suspect is routed among all of them: a suspect may be back, and no address is worse.
//
// Per admin node, in memory, bounded (at most kMaxAddresses remembered; the oldest mark goes
// first). Time from the injected Clock's steady time. Thread-safe.
class SuspectAddresses {
 public:
  static constexpr std::size_t kMaxAddresses = 10'000;

  explicit SuspectAddresses(common::Clock& clock, std::chrono::milliseconds hold = std::chrono::seconds(30));

  void mark(const std::string& address);
  // The executor at `address` registered: it takes fires again.
  void cleared(const std::string& address);
  bool suspect(const std::string& address);

  // `addresses` without the suspect ones, in their order; all of them when every one is suspect.
  std::vector<std::string> usable(const std::vector<std::string>& addresses);

  std::size_t size() const;

 private:
  bool suspect_locked(const std::string& address, common::Clock::SteadyTime now);

  common::Clock& clock_;
  const std::chrono::milliseconds hold_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, common::Clock::SteadyTime> marked_;  // address → when
};

}  // namespace cronwheel::admin
