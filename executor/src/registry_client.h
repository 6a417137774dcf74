#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/http/http_client.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"
#include "executor/src/clock_offset.h"

namespace cronwheel::executor {

// Keeps this executor registered with the admin: POST {admin}/api/registry with
// {"registryGroup":"EXECUTOR","registryKey":app_name,"registryValue":address} at start and
// every `interval`, to the admins in order until one accepts; POST {admin}/api/registryRemove
// the same way on stop(). Failures are logged and retried at the next interval; they never
// stop the executor.
//
// Each accepted registration is also a measure of the clocks (clock_offset.h): the times on
// `clock` before it was sent and after its answer came, with the admin's X-Cronwheel-Clock
// header, are one exchange for a ClockOffsetEstimator, and every registration after the first
// such sample carries the estimate (RegistryParam::clock_offset_ms, clock_delay_ms; the offset
// sent within ±a day). The samples are those of the admin that last accepted one: when another
// admin answers, the earlier ones are forgotten. An answer without the header (XXL-JOB's admin)
// or with a malformed one is no sample. clock_estimate() gives that estimate to other threads.
// While the best sample's round trip is above 2 ms (the first exchange also opens the
// connection), a registration is sent again at once, at most three more times a heartbeat: fires
// handed over ahead start up to half that round trip after their instant.
//
// Lead dispatch (docs/scheduling.md "Lead dispatch"): when Options::lead_dispatch is set, a
// registration carries leadDispatch: true while the estimate is known and its offset is within
// ±max_clock_offset: only then can this executor start a fire handed over ahead of time at its
// instant on the admin's clock (LeadHold refuses /lead otherwise, by the same rule).
//
// Threading: the heartbeat is a common::RecurringTask: its deadlines are on the executor's
// periodic timer, its calls on a lane (thread) of its own, the first one right away without
// start() waiting for it; the lane owns the HTTP clients until stop() has ended it. Deadlines are
// absolute, so no drift; the intervals a slow call overran are skipped, not made up. start() and
// stop() may be called from any thread.
class RegistryClient {
 public:
  struct Options {
    std::vector<std::string> admin_addresses;
    std::string access_token;
    std::string app_name;
    std::string address;  // this executor's URL
    std::chrono::milliseconds interval{std::chrono::seconds(30)};
    common::http::HttpClientOptions http;
    // When set, asked at each registration for the names of the BEAN handlers this executor runs
    // (RegistryParam::handlers: the admin's console suggests them); at most 256 are sent.
    std::function<std::vector<std::string>()> handler_names = {};
    // The executor's wall clock, whose difference from the admin's is estimated; SystemClock when
    // null. Must outlive the client.
    const common::Clock* clock = nullptr;
    // Whether this executor takes POST /lead (see above), and how far off the admin's clock may be.
    bool lead_dispatch = false;
    std::chrono::milliseconds max_clock_offset{1000};
  };

  // Throws std::invalid_argument when there is no admin address, an address is not an http(s)
  // URL or interval is not positive. Does no I/O. `tasks` must outlive the client.
  RegistryClient(Options options, common::RecurringTasks& tasks);
  ~RegistryClient();  // stop()

  RegistryClient(const RegistryClient&) = delete;
  RegistryClient& operator=(const RegistryClient&) = delete;

  // Starts the heartbeat. Throws std::logic_error when called twice or after stop().
  void start();
  // Ends the heartbeat (interrupting its wait at once; a call under way finishes first) and then
  // removes the registration, so no registration can follow the removal. Best effort, bounded by
  // the HTTP timeouts of one call per admin, twice. Nothing is sent when start() was never
  // called. Idempotent.
  void stop();

  // The current estimate of the admin's clock minus this executor's (the one the last
  // registration carried or the next one will); nullopt before the first sample, and again for
  // a moment when another admin starts answering. Thread-safe.
  std::optional<ClockSample> clock_estimate() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::executor
