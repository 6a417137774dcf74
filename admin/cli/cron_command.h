#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace cronwheel::admin {

struct CronNextOptions {
  std::string expression;
  std::string time_zone = "UTC";
  std::optional<std::int64_t> from_ms;  // default: now
  int count = 5;
};

// `cronwheel-admin cron next`: writes the next fire times after `from`, one a line, as
// "EPOCH_MS ISO-8601-with-offset" in the expression's zone. Returns the process exit code:
// 0, or 2 with a one-line reason on `err` for an invalid expression, zone or count.
int run_cron_next(const CronNextOptions& options, std::int64_t now_ms, std::ostream& out,
                  std::ostream& err);

}  // namespace cronwheel::admin
