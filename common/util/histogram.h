#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <vector>

namespace cronwheel::common {

// Counts of observations in fixed buckets, for Prometheus histograms (the admin's fire lateness,
// scan and trigger durations). observe() is lock-free (a bucket search and two relaxed atomic
// adds), so it can sit on the fire path; snapshot() may run at the same time on any thread, and
// sees every observation that finished before it started, and perhaps some under way.
class Histogram {
 public:
  // `upper_bounds` ascending and finite; a last bucket, +Inf, is implied.
  explicit Histogram(std::initializer_list<double> upper_bounds)
      : bounds_(upper_bounds), counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {
    if (!std::is_sorted(bounds_.begin(), bounds_.end())) throw std::invalid_argument("histogram bounds must ascend");
  }

  void observe(double value) noexcept {
    const auto bucket = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
    counts_[bucket].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
  }

  struct Snapshot {
    std::vector<double> upper_bounds;      // as given; +Inf not included
    std::vector<std::uint64_t> cumulative;  // observations <= each bound (Prometheus' "le")
    std::uint64_t count = 0;               // all of them (the +Inf bucket)
    double sum = 0;
  };

  Snapshot snapshot() const {
    Snapshot s;
    s.upper_bounds = bounds_;
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
      running += counts_[i].load(std::memory_order_relaxed);
      s.cumulative.push_back(running);
    }
    s.count = running + counts_[bounds_.size()].load(std::memory_order_relaxed);
    s.sum = sum_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

}  // namespace cronwheel::common
