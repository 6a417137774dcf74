#pragma once

#include <cstddef>
#include <cstdint>

#include "common/util/histogram.h"

namespace cronwheel::admin {

// What a Database's connection pool reports at a metrics scrape (Database::pool_stats()), in a
// header of its own so the metrics need not include libpqxx.
struct DatabasePoolStats {
  std::size_t size = 0;    // Options::pool_size: the most connections it opens
  std::size_t in_use = 0;  // connections leased to callers now (or being opened for one)
  std::size_t idle = 0;    // open connections waiting for a caller
  // Seconds each acquire() took, from its call to its end, whatever the end: a connection
  // handed out (an idle one at once, a new one once opened, or one given back while it waited)
  // or StoreUnavailable. Every call counts, waits of zero too, so the count is the rate of
  // acquisitions.
  common::Histogram::Snapshot wait_seconds;
  // acquire() calls that ended in StoreUnavailable: no connection came free within
  // acquire_timeout (timeouts), or a new connection could not be opened, or was not tried
  // within the backoff after a failed one (unreachable).
  std::uint64_t timeouts = 0;
  std::uint64_t unreachable = 0;
};

}  // namespace cronwheel::admin
