#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/cron/civil_time.h"
#include "common/cron/cron_expression.h"

namespace cronwheel::testing {

// Epoch milliseconds of "2024-03-10T01:59:58-05:00", "...+05:30" or "...Z" (seconds, with an
// optional ".mmm"), so tests read in local time with the offset spelled out.
inline std::int64_t epoch_ms(std::string_view iso) {
  auto number = [&](std::size_t at, std::size_t len) {
    int v = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (i >= iso.size() || iso[i] < '0' || iso[i] > '9') {
        throw std::invalid_argument("bad timestamp: " + std::string(iso));
      }
      v = v * 10 + (iso[i] - '0');
    }
    return v;
  };
  const std::int64_t days =
      common::cron_detail::days_from_civil(number(0, 4), number(5, 2), number(8, 2));
  std::int64_t ms = days * 86'400'000 + number(11, 2) * 3'600'000LL + number(14, 2) * 60'000LL +
                    number(17, 2) * 1000LL;
  std::size_t pos = 19;
  if (pos < iso.size() && iso[pos] == '.') {
    ms += number(pos + 1, 3);
    pos += 4;
  }
  if (pos < iso.size() && iso[pos] != 'Z') {
    const std::int64_t offset = number(pos + 1, 2) * 3'600'000LL + number(pos + 4, 2) * 60'000LL;
    ms += iso[pos] == '-' ? offset : -offset;
  }
  return ms;
}

// The next `count` fire times of `expression` in `zone` after `from`, as local ISO-8601
// strings; "none" marks the end of the schedule.
inline std::vector<std::string> fire_times(std::string_view expression, std::string_view zone,
                                           std::string_view from, int count) {
  const auto cron = common::CronExpression::parse(expression, zone);
  std::vector<std::string> out;
  std::int64_t t = epoch_ms(from);
  for (int i = 0; i < count; ++i) {
    const auto next = cron.next_after(t);
    if (!next) {
      out.emplace_back("none");
      break;
    }
    out.push_back(common::format_iso8601(*next, zone));
    t = *next;
  }
  return out;
}

// The first fire time after `from` as a local ISO-8601 string, or "none".
inline std::string next_fire(std::string_view expression, std::string_view zone,
                             std::string_view from) {
  return fire_times(expression, zone, from, 1).front();
}

}  // namespace cronwheel::testing
