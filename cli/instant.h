#pragma once

// Instants as the command line takes them (jobs backfill --from and --to): the API speaks epoch
// milliseconds, people ISO-8601. Either is taken; an ISO-8601 time must say its UTC offset, so
// that the instant never depends on the zone of the machine the command runs on.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace cronwheel::cli {

// Epoch milliseconds for `text`, or why it is none, in a phrase for a usage error:
//   - epoch milliseconds: decimal digits, at most 18 ("1777593600000");
//   - ISO-8601 with its offset: YYYY-MM-DDTHH:MM, then optionally :SS and .f (1-3 digits of a
//     second), then Z or +HH:MM / -HH:MM ("2026-05-01T02:00:00+02:00", "2026-05-01T00:00Z"), as
//     `cronwheel` prints times. Years 1970-9999; the day must exist (no 30 February).
std::variant<std::int64_t, std::string> parse_instant(std::string_view text);

}  // namespace cronwheel::cli
