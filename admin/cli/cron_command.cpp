#include "admin/cli/cron_command.h"

#include <ostream>

#include "common/cron/cron_expression.h"

namespace cronwheel::admin {

namespace {
constexpr int kMaxCount = 1000;
}

int run_cron_next(const CronNextOptions& options, std::int64_t now_ms, std::ostream& out,
                  std::ostream& err) {
  if (options.count < 1 || options.count > kMaxCount) {
    err << "count: " << options.count << " is out of range 1-" << kMaxCount << "\n";
    return 2;
  }
  try {
    auto expression = common::CronExpression::parse(options.expression, options.time_zone);
    auto times = expression.next_times(options.from_ms.value_or(now_ms), options.count);
    for (std::int64_t t : times) {
      out << t << ' ' << common::format_iso8601(t, options.time_zone) << '\n';
    }
    if (times.empty()) {
      err << "expression: '" << options.expression << "' has no fire time after the given instant\n";
      return 1;
    }
    return 0;
  } catch (const common::CronError& e) {
    err << e.what() << '\n';
    return 2;
  }
}

}  // namespace cronwheel::admin
