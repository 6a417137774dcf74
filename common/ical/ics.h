#pragma once

// iCalendar files (.ics, RFC 5545) as a business calendar's excluded dates, both ways: an
// operator imports a published holiday feed, or exports a calendar for a desktop calendar.
// Only the dates are read and written; storing them, and replacing what an earlier import of
// the same source brought, is the caller's (every date read carries its event's UID for that).
//
// libical (Debian's libical3) parses, expands recurrences and writes; this header names none
// of its types. Every call into libical is serialised on one process-wide lock, since libical
// keeps process-wide error state; a call holds it for a bounded time (the bounds below).

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/cron/business_calendar.h"

namespace cronwheel::common::ical {

// What is wrong with a file read_ics refuses. what() is one line fit to show an operator.
class IcsError : public std::runtime_error {
 public:
  enum class Kind {
    kTooLarge,       // over kMaxIcsBytes or kMaxIcsLines
    kNotICalendar,   // not iCalendar text at all (HTML, JSON, binary, a NUL byte, nesting)
    kNoCalendar,     // iCalendar lines, but no VCALENDAR
    kTooManyEvents,  // over kMaxIcsEvents VEVENTs
    kTooManyDates,   // over kMaxIcsDates dates in the window
    kTooComplex,     // events that take more than kMaxExpansionCpuMs to expand
    kInvalidEvent,   // an event whose dates cannot be read: what() names it and the property
  };

  IcsError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

// "too_large", "not_icalendar", "no_calendar", "too_many_events", "too_many_dates",
// "too_complex", "invalid_event": a stable code for an API's error.
std::string_view to_string(IcsError::Kind kind) noexcept;

// The bounds of one read_ics call. Size and lines are checked before libical sees the text;
// events, dates and expansion while reading. A call takes at most about two seconds of CPU.
inline constexpr std::size_t kMaxIcsBytes = 4 * 1024 * 1024;
// Unfolded lines, plus the values of lines that hold lists (EXDATE:a,b,c counts 3): each is a
// property libical allocates. A published holiday feed has about 12 lines an event.
inline constexpr std::size_t kMaxIcsLines = 200'000;
inline constexpr std::size_t kMaxIcsEvents = 10'000;
inline constexpr std::size_t kMaxIcsDates = 5'000;  // CalendarSpec's bound on excluded dates
// How deep components may nest (VCALENDAR > VEVENT > VALARM is 3); deeper is refused before
// libical, which frees its tree recursively, sees it.
inline constexpr int kMaxIcsDepth = 8;
// Expanding the events into dates may take this much CPU time of the calling thread. libical
// steps a recurrence through candidate days, weeks, months or years from where its expansion
// starts (the window's start, or DTSTART for an RRULE with COUNT) to its last occurrence in the
// window, from about 2 microseconds a candidate to 160 for rules with many BY values, whether
// they give a date or not; how far a file gets in this time depends on the machine. Published
// feeds take a few milliseconds; 2,000 DAILY rules that never match, over 20 years, would take
// about 26 seconds.
inline constexpr std::int64_t kMaxExpansionCpuMs = 1'000;

inline constexpr int kDefaultHorizonDays = 3 * 365 + 1;  // three years
inline constexpr int kMaxHorizonDays = 20 * 365 + 5;     // twenty years

// A calendar date, 1970-01-01 to 2999-12-31 (CalendarDay's range).
struct IcsDay {
  int year = 0;
  int month = 0;
  int day = 0;
};

struct IcsReadOptions {
  // The window of dates read: `horizon_days` days from `from` (the import's day, usually),
  // cut at 2999-12-31. Recurrences are expanded only there, and not past 2582 (where libical's
  // iterator ends); days of one-off events outside it are counted
  // (IcsReadResult::dates_outside_window), not read.
  IcsDay from;
  int horizon_days = kDefaultHorizonDays;  // 1 to kMaxHorizonDays
};

// One excluded date and the event it came from.
struct IcsDate {
  // The date and the event's SUMMARY as its name: UTF-8 (bytes that are not become U+FFFD),
  // control characters as spaces, without spaces at either end, cut to 200 bytes on a
  // character boundary. Year 0 (every
  // year) for a plain yearly event: a one-day event whose only rule is RRULE:FREQ=YEARLY
  // (BYMONTH and BYMONTHDAY at most restating DTSTART's), with no RDATE, EXDATE or moved
  // occurrence, that has no occurrence in the window before its DTSTART.
  CalendarDay day;
  // The VEVENT's UID (as cleaned as names are, never cut): what a re-import of the same
  // source tells its dates by. An event without a UID gets "no-uid-" and a hash of its
  // DTSTART and SUMMARY, the same on every read of the same event.
  std::string uid;
};

struct IcsReadResult {
  // Ordered by (year, month, day, uid), year-0 dates first; no (date, uid) pair twice. Two
  // events on one date give two entries.
  std::vector<IcsDate> dates;
  std::size_t timed_events_ignored = 0;  // VEVENTs with a DTSTART that has a time of day
  std::size_t dates_outside_window = 0;  // days of one-off all-day events outside the window
};

// Reads the excluded dates of an iCalendar file: every all-day VEVENT (DTSTART;VALUE=DATE)
// gives its days, DTSTART up to DTEND exclusive (or DURATION's days; one day when neither
// says more). A recurring event gives those days for each occurrence that touches the window:
// DTSTART's, RRULE's and RDATE's, less EXDATE's and those another VEVENT of its UID moves
// (RECURRENCE-ID). Cancelled events and occurrences (STATUS:CANCELLED) give nothing; timed
// events are ignored and counted; VTIMEZONE and every other component play no part.
//
// Throws IcsError (see Kind) for a file it refuses, before reading more than the bounds
// above. A VEVENT whose dates cannot be read refuses the whole file, naming the event, rather
// than losing its dates: a DTSTART, DTEND, DURATION, RRULE, RDATE, EXDATE or RECURRENCE-ID
// libical cannot parse, a date that does not exist, an RRULE stepping by hours, minutes or
// seconds over all-day dates, one with COUNT from before 1900 (it would be stepped through
// from there), one libical finds no date for, a UID over 1,000 bytes. Throws
// std::invalid_argument for options out of range.
IcsReadResult read_ics(std::string_view text, const IcsReadOptions& options);

struct IcsWriteOptions {
  std::int64_t dtstamp_ms = 0;  // every event's DTSTAMP (the export's time), epoch ms
  // X-WR-CALNAME (what calendar applications call the imported calendar), when not empty.
  // Also part of every UID, so two calendars' exports do not collide where both are imported.
  std::string calendar_name;
};

// A VCALENDAR (PRODID -//cronwheel//calendar//EN, VERSION:2.0) with one all-day VEVENT per
// distinct excluded date: DTSTART;VALUE=DATE, DTEND the day after, SUMMARY its name (none when
// empty), TRANSP:TRANSPARENT (a day off makes no one busy), and for
// a year-0 date RRULE:FREQ=YEARLY from that date in 1970 (1972 for 02-29, which then falls
// in leap years only, as CalendarDay says). UIDs are stable: they depend on the date, its
// name and the calendar's name only. Deterministic: the same days and options give the same
// bytes. read_ics of the result, with any window, gives the same days back (year-0 ones
// as year 0, the others where the window holds them), each name as cleaned by read_ics.
// Throws std::invalid_argument for a date that does not exist or is out of CalendarDay's range,
// naming its index ("days[3]: ...").
std::string write_ics(const std::vector<CalendarDay>& days, const IcsWriteOptions& options);

}  // namespace cronwheel::common::ical
