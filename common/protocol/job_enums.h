#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

// The enumerations XXL-JOB stores and sends as strings. The wire spelling is XXL-JOB's enum
// constant name, matched exactly (case-sensitive), as the Java side does.
namespace cronwheel::common::protocol {

// What an executor does with a trigger while the job's previous run is still going.
enum class BlockStrategy {
  kSerialExecution,  // SERIAL_EXECUTION: queue it behind the running one
  kDiscardLater,     // DISCARD_LATER: refuse the new trigger
  kCoverEarly,       // COVER_EARLY: kill the running one, run the new trigger
};

enum class GlueType {
  kBean,            // BEAN: a handler registered in the executor
  kGlueGroovy,      // GLUE_GROOVY: Java-only; a C++ executor refuses it
  kGlueShell,       // GLUE_SHELL
  kGluePython,      // GLUE_PYTHON
  kGluePhp,         // GLUE_PHP
  kGlueNodejs,      // GLUE_NODEJS
  kGluePowershell,  // GLUE_POWERSHELL
};

enum class RouteStrategy {
  kFirst,                // FIRST
  kLast,                 // LAST
  kRound,                // ROUND
  kRandom,               // RANDOM
  kConsistentHash,       // CONSISTENT_HASH
  kLeastFrequentlyUsed,  // LEAST_FREQUENTLY_USED
  kLeastRecentlyUsed,    // LEAST_RECENTLY_USED
  kFailover,             // FAILOVER
  kBusyover,             // BUSYOVER
  kShardingBroadcast,    // SHARDING_BROADCAST
};

// What the scheduler does with fires missed by more than the pre-read window.
enum class MisfireStrategy {
  kDoNothing,    // DO_NOTHING
  kFireOnceNow,  // FIRE_ONCE_NOW
};

enum class ScheduleType {
  kNone,      // NONE: only triggered by hand or as a child job
  kCron,      // CRON
  kFixRate,   // FIX_RATE
  kFixDelay,  // FIX_DELAY
};

// The wire name, e.g. "SERIAL_EXECUTION".
std::string_view to_string(BlockStrategy value) noexcept;
std::string_view to_string(GlueType value) noexcept;
std::string_view to_string(RouteStrategy value) noexcept;
std::string_view to_string(MisfireStrategy value) noexcept;
std::string_view to_string(ScheduleType value) noexcept;

// For test failure messages: prints the wire name.
std::ostream& operator<<(std::ostream& out, BlockStrategy value);
std::ostream& operator<<(std::ostream& out, GlueType value);
std::ostream& operator<<(std::ostream& out, RouteStrategy value);
std::ostream& operator<<(std::ostream& out, MisfireStrategy value);
std::ostream& operator<<(std::ostream& out, ScheduleType value);

// parse_enum<E>("DISCARD_LATER") → the value, or nullopt for anything that is not exactly a wire
// name. Defined for the five enums above only.
template <class E>
std::optional<E> parse_enum(std::string_view text) noexcept;

// The wire names of E, comma-separated, for error messages: "SERIAL_EXECUTION, DISCARD_LATER,
// COVER_EARLY".
template <class E>
std::string enum_choices();

// Like parse_enum but throws ProtocolError naming `field`:
// "executorBlockStrategy: unknown value 'FOO', expected one of SERIAL_EXECUTION, ...".
template <class E>
E parse_enum_or_throw(std::string_view text, std::string_view field);

// True for the GLUE_* types an executor runs as a child process (everything but BEAN and
// GLUE_GROOVY).
bool is_script(GlueType value) noexcept;

}  // namespace cronwheel::common::protocol
