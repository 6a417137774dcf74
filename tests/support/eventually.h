#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace cronwheel::testing {

// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
inline constexpr std::chrono::milliseconds kEventuallyBound{30'000};

// Polls `condition` every `step` until it holds (true) or `bound` has passed (false): how e2e
// tests wait for another process to get somewhere, never with a fixed sleep.
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds bound = kEventuallyBound,
                       std::chrono::milliseconds step = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace cronwheel::testing
