#pragma once

#include <stdexcept>
#include <string>

namespace cronwheel::common {

// Why a cron expression or a time zone was refused.
//
// what() is one line, "<field>: <reason>", e.g. "day-of-week: 8 is out of range 1-7", fit to
// show an operator as is. field() names the part that is wrong so an API can point at it:
// "seconds", "minutes", "hours", "day-of-month", "month", "day-of-week", "year",
// "expression" (the whole string, e.g. the wrong number of fields) or "timezone".
class CronError : public std::invalid_argument {
 public:
  CronError(std::string field, const std::string& reason)
      : std::invalid_argument(field + ": " + reason), field_(std::move(field)), reason_(reason) {}

  const std::string& field() const noexcept { return field_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string field_;
  std::string reason_;
};

}  // namespace cronwheel::common
