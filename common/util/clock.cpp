#include "common/util/clock.h"

#include <condition_variable>
#include <mutex>

namespace cronwheel::common {

std::int64_t SystemClock::now_ms() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Clock::SteadyTime SystemClock::steady_now() const { return std::chrono::steady_clock::now(); }

bool SystemClock::sleep_until(SteadyTime deadline, std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  // wait_until with a stop_token returns early (false) when stop is requested.
  cv.wait_until(lock, stop, deadline, [] { return false; });
  return !stop.stop_requested();
}

SystemClock& SystemClock::instance() {
  static SystemClock clock;
  return clock;
}

}  // namespace cronwheel::common
