#pragma once

#include <cstdint>
#include <optional>

#include "common/cron/cron_fields.h"
#include "common/cron/zone_rules.h"

namespace cronwheel::common::cron_detail {

// Instants before this are evaluated from here (1900-01-01T00:00:00Z). Every year an
// expression can name is >= 1970, so the answer is the same; it keeps the evaluation inside
// the Gregorian calendar (java.util.GregorianCalendar switches to Julian dates before 1582).
inline constexpr std::int64_t kEarliestStartMs = -2'208'988'800'000;

// Instants from here on (3000-01-01T00:00:00Z) have no next fire time, as in Quartz.
inline constexpr std::int64_t kLatestStartMs = 32'503'680'000'000;

// Quartz 2.3.2 CronExpression.getTimeAfter(after) with setTimeZone(zone): the first fire time
// strictly after `after_ms`, or nullopt where Quartz returns null (nothing up to MAX_YEAR).
//
// The search follows getTimeAfter line by line over LenientCalendar, so its results, including
// its handling of daylight-saving gaps and repeated hours, are Quartz's. Two deliberate
// differences, both where Quartz's answer is not well defined:
//  - for 'W' in day-of-month Quartz compares a candidate with the current wall clock's
//    milliseconds mixed in; here the comparison is made at whole seconds (as if those
//    milliseconds equalled the start instant's), which is what Quartz returns for whole-second
//    start instants;
//  - where Quartz would loop forever (a few 'L-n'/'W' combinations make its search cycle
//    between two days) this returns nullopt: after 10,000 steps that never pass the furthest
//    instant reached, or a million steps in all (no expression needs more than a few tens of
//    thousands).
//
// No allocation; safe to call concurrently.
std::optional<std::int64_t> next_fire_time(const CronFields& fields, const ZoneRules& zone,
                                           std::int64_t after_ms);

}  // namespace cronwheel::common::cron_detail
