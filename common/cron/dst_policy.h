#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/cron/cron_expression.h"
#include "common/cron/cron_fields.h"
#include "common/cron/zone_rules.h"

// A DstPolicy applied to Quartz's answer (CronExpression::with_dst_policy).
//
// Quartz's search walks wall times, so it can only say what Quartz does with a gap or a
// repeated hour. The instants a policy adds are found from the other side: the zone's table
// names each clock change, and the expression's fields, evaluated on wall times as if they were
// UTC instants (a clock that never changes), say whether any wall time the change jumps over or
// repeats is one the expression fires at. Nothing steps through fire times one by one.
namespace cronwheel::common::cron_detail {

// The first instant strictly after `after_ms` that `policy` fires at: `quartz_next` (Quartz's
// next_fire_time for the same instant, nullopt for none) or an earlier instant the policy adds.
std::optional<std::int64_t> next_with_dst_policy(const CronFields& fields, const ZoneRules& zone,
                                                 DstPolicy policy, std::int64_t after_ms,
                                                 std::optional<std::int64_t> quartz_next);

// CronExpression::dst_notes.
std::vector<DstNote> dst_notes(const CronFields& fields, const ZoneRules& zone, DstPolicy policy,
                               std::int64_t after_ms, std::int64_t until_ms, std::size_t max);

}  // namespace cronwheel::common::cron_detail
