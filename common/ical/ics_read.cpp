// read_ics: a bounded pass over the text before libical sees it (size, lines, nesting, events,
// line ends), libical's parse, then each VEVENT's days in the window.

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "common/cron/civil_time.h"
#include "common/ical/ics.h"
#include "common/ical/libical_session.h"

namespace cronwheel::common::ical {

namespace {

using cron_detail::civil_from_days;
using cron_detail::days_from_civil;
using detail::with_thousands;
using Kind = IcsError::Kind;

constexpr int kMinYear = 1970;
constexpr int kMaxYear = 2999;
constexpr std::size_t kMaxNameBytes = 200;
constexpr std::size_t kMaxUidBytes = 1000;
// Physical lines longer than this are folded before libical reads them: its string reader
// searches for the line's end again for every 80 bytes it copies, which is quadratic in a
// line's length. Folding changes nothing once lines are unfolded.
constexpr std::size_t kFoldLongLinesAt = 1000;

std::string iso_date(std::int64_t days) {
  const auto date = civil_from_days(days);
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d", date.year, date.month, date.day);
  return text;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

// ---- Before libical ------------------------------------------------------------------------

// Where a logical (unfolded) line's name ends: the first ';' or ':'.
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
}

struct LineTally {
  std::size_t items = 0;  // logical lines plus list values
  std::size_t events = 0;
  int depth = 0;
  bool first_line_seen = false;
  bool saw_vcalendar = false;
};

// One logical line: its start (enough of it to hold the name and a component's name) and its
// commas. Checks the bounds that libical would otherwise pay for.
void tally_line(LineTally& tally, std::string_view head, std::size_t commas) {
  const auto blank = head.find_first_not_of(" \t") == std::string_view::npos;
  if (blank) return;
  std::size_t name_end = 0;
  while (name_end < head.size() && is_name_char(head[name_end])) ++name_end;
  const bool content_line =
      name_end > 0 && name_end < head.size() && (head[name_end] == ':' || head[name_end] == ';');
  if (!tally.first_line_seen) {
    tally.first_line_seen = true;
    if (!content_line) {
      throw IcsError(Kind::kNotICalendar,
                     "not an iCalendar file: its first line is not a NAME:VALUE content line");
    }
  }
  tally.items += 1 + commas;
  if (tally.items > kMaxIcsLines) {
    throw IcsError(Kind::kTooLarge, "the file has more than " + with_thousands(kMaxIcsLines) +
                                        " lines (each value of a list counts as one)");
  }
  if (!content_line) return;
  const auto name = head.substr(0, name_end);
  const bool begin = equals_ignoring_case(name, "BEGIN");
  if (!begin && !equals_ignoring_case(name, "END")) return;
  if (!begin) {
    if (tally.depth > 0) --tally.depth;
    return;
  }
  if (++tally.depth > kMaxIcsDepth) {
    throw IcsError(Kind::kNotICalendar, "not an iCalendar file: components nest deeper than " +
                                            std::to_string(kMaxIcsDepth));
  }
  auto value = head.substr(head.find(':') == std::string_view::npos ? head.size()
                                                                    : head.find(':') + 1);
  value = value.substr(0, value.find_last_not_of(" \t") + 1);
  if (equals_ignoring_case(value, "VCALENDAR")) tally.saw_vcalendar = true;
  if (equals_ignoring_case(value, "VEVENT") && ++tally.events > kMaxIcsEvents) {
    throw IcsError(Kind::kTooManyEvents,
                   "the file has more than " + with_thousands(kMaxIcsEvents) + " events (VEVENT)");
  }
}

struct PreparedText {
  std::string text;
  bool ends_inside_component = false;  // a BEGIN without its END: a cut-off download
};

// The text as libical gets it: bounded, without a byte-order mark, every line ending (CRLF, LF,
// or a lone CR) a LF, physical lines folded at kFoldLongLinesAt bytes.
PreparedText prepare_text(std::string_view text) {
  if (text.size() > kMaxIcsBytes) {
    throw IcsError(Kind::kTooLarge,
                   "the file is " + with_thousands(static_cast<std::int64_t>(text.size())) +
                       " bytes; at most " + with_thousands(kMaxIcsBytes) + " are read");
  }
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw IcsError(Kind::kNotICalendar, "not an iCalendar file: it holds a NUL byte (at byte " +
                                            std::to_string(nul) + ")");
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

  std::string out;
  out.reserve(text.size() + text.size() / kFoldLongLinesAt * 2 + 1);
  LineTally tally;
  std::string head;  // the current logical line's first bytes
  std::size_t commas = 0;
  bool in_line = false;
  constexpr std::size_t kHeadBytes = 64;

  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    auto line = text.substr(pos, end - pos);
    pos = end;
    if (pos < text.size()) pos += text.compare(pos, 2, "\r\n") == 0 ? 2 : 1;

    const bool continuation = in_line && !line.empty() && (line[0] == ' ' || line[0] == '\t');
    if (!continuation) {
      if (in_line) tally_line(tally, head, commas);
      head.clear();
      commas = 0;
      in_line = true;
    }
    const auto content = continuation ? line.substr(1) : line;
    if (head.size() < kHeadBytes) head.append(content.substr(0, kHeadBytes - head.size()));
    commas += static_cast<std::size_t>(std::count(content.begin(), content.end(), ','));

    // Folded where long: a fold's "\n " is removed again by unfolding.
    for (std::size_t at = 0; at < line.size(); at += kFoldLongLinesAt) {
      if (at > 0) out += "\n ";
      out.append(line.substr(at, kFoldLongLinesAt));
    }
    out += '\n';
  }
  if (in_line) tally_line(tally, head, commas);
  if (!tally.first_line_seen) {
    throw IcsError(Kind::kNotICalendar, "not an iCalendar file: it is empty");
  }
  if (!tally.saw_vcalendar) {
    throw IcsError(Kind::kNoCalendar, "the file has no calendar (BEGIN:VCALENDAR)");
  }
  return {std::move(out), tally.depth > 0};
}

// ---- One event -----------------------------------------------------------------------------

struct Event {
  std::size_t number = 0;  // 1-based among the file's VEVENTs, for messages
  std::string uid;
  std::string name;
  bool cancelled = false;
  bool timed = false;
  std::int64_t start = 0;   // days since 1970-01-01
  std::int64_t length = 1;  // days, at least 1
  std::optional<std::int64_t> recurrence_id;
  std::vector<icalrecurrencetype> rules;  // rscale points into the parsed tree
  std::vector<std::int64_t> rdates;
  std::set<std::int64_t> exdates;
};

[[noreturn]] void refuse_event(const Event& event, const std::string& what) {
  std::string who = "VEVENT " + std::to_string(event.number);
  if (!event.uid.empty()) {
    const auto uid = event.uid.size() > 80 ? detail::clean_text(event.uid, 80) + "..." : event.uid;
    who += " (UID " + uid + ")";
  }
  throw IcsError(Kind::kInvalidEvent, who + ": " + what);
}

// Days since 1970-01-01 of a libical date or date-time's date, or none for one that does not
// exist (libical takes "20261345" as a date).
std::optional<std::int64_t> day_number(const icaltimetype& time) {
  if (time.year < 1 || time.year > 9999 || time.month < 1 || time.month > 12 || time.day < 1 ||
      time.day > cron_detail::days_in_month(time.year, time.month)) {
    return std::nullopt;
  }
  return days_from_civil(time.year, time.month, time.day);
}

std::int64_t checked_day(const Event& event, const icaltimetype& time, const char* property) {
  const auto day = day_number(time);
  if (!day) {
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02d", time.year, time.month, time.day);
    refuse_event(event, std::string(property) + " " + text + " is not a date");
  }
  return *day;
}

// A libical DATE. Not from icaltime_null_date(), whose time fields are -1: the recurrence
// iterator takes those as a day less.
icaltimetype ical_date(std::int64_t days) {
  const auto civil = civil_from_days(days);
  icaltimetype date{};
  date.year = civil.year;
  date.month = civil.month;
  date.day = civil.day;
  date.is_date = 1;
  return date;
}

// The properties whose loss would lose or add dates. libical drops a property whose value it
// cannot parse and leaves an X-LIC-ERROR naming it instead ("Can't parse as DATE value in
// DTSTART property. Removing entire property: ..."); such an event is refused.
constexpr const char* kDateProperties[] = {"DTSTART", "DTEND",  "DURATION",     "RRULE",
                                           "RDATE",   "EXDATE", "RECURRENCE-ID"};

std::optional<std::string> date_property_error(icalcomponent* component) {
  for (auto* p = icalcomponent_get_first_property(component, ICAL_XLICERROR_PROPERTY); p;
       p = icalcomponent_get_next_property(component, ICAL_XLICERROR_PROPERTY)) {
    const char* text = icalproperty_get_xlicerror(p);
    if (!text) continue;
    const std::string_view message(text);
    for (const char* name : kDateProperties) {
      const std::string_view property(name);
      for (auto at = message.find(property); at != std::string_view::npos;
           at = message.find(property, at + 1)) {
        const bool starts = at == 0 || !is_name_char(message[at - 1]);
        const auto after = at + property.size();
        const bool ends = after == message.size() || !is_name_char(message[after]);
        if (starts && ends) return std::string(name) + " not understood (" +
                                   detail::clean_text(message, 200) + ")";
      }
    }
  }
  return std::nullopt;
}

std::string uid_of(icalcomponent* component, const std::string& name, const icaltimetype& start) {
  if (const char* uid = icalcomponent_get_uid(component); uid && *uid) {
    return detail::clean_text(uid, std::string::npos);
  }
  char start_text[32];
  std::snprintf(start_text, sizeof start_text, "%04d%02d%02dT%02d%02d%02d%s", start.year,
                start.month, start.day, start.hour, start.minute, start.second,
                start.is_date ? "D" : "");
  char uid[40];
  std::snprintf(uid, sizeof uid, "no-uid-%016llx",
                static_cast<unsigned long long>(
                    detail::fnv1a64(std::string(start_text) + "\n" + name)));
  return uid;
}

Event read_event(icalcomponent* component, std::size_t number) {
  Event event;
  event.number = number;
  const char* summary = icalcomponent_get_summary(component);
  event.name = detail::clean_text(summary ? summary : "", kMaxNameBytes);
  icalproperty* dtstart = icalcomponent_get_first_property(component, ICAL_DTSTART_PROPERTY);
  const icaltimetype start = dtstart ? icalproperty_get_dtstart(dtstart) : icaltime_null_time();
  event.uid = uid_of(component, event.name, start);
  if (event.uid.size() > kMaxUidBytes) {
    refuse_event(event, "UID is longer than " + std::to_string(kMaxUidBytes) + " bytes");
  }
  if (const auto error = date_property_error(component)) refuse_event(event, *error);
  if (!dtstart) refuse_event(event, "no DTSTART");

  event.cancelled = icalcomponent_get_status(component) == ICAL_STATUS_CANCELLED;
  if (auto* p = icalcomponent_get_first_property(component, ICAL_RECURRENCEID_PROPERTY)) {
    event.recurrence_id = checked_day(event, icalproperty_get_recurrenceid(p), "RECURRENCE-ID");
  }
  event.timed = !icaltime_is_date(start);
  if (event.timed) return event;
  event.start = checked_day(event, start, "DTSTART");

  if (auto* p = icalcomponent_get_first_property(component, ICAL_DTEND_PROPERTY)) {
    const auto end = checked_day(event, icalproperty_get_dtend(p), "DTEND");
    event.length = std::max<std::int64_t>(1, end - event.start);
  } else if (auto* d = icalcomponent_get_first_property(component, ICAL_DURATION_PROPERTY)) {
    const icaldurationtype duration = icalproperty_get_duration(d);
    const std::int64_t seconds =
        ((static_cast<std::int64_t>(duration.weeks) * 7 + duration.days) * 24 + duration.hours) *
            3600 +
        static_cast<std::int64_t>(duration.minutes) * 60 + duration.seconds;
    event.length = duration.is_neg ? 1 : std::max<std::int64_t>(1, (seconds + 86399) / 86400);
  }

  if (event.recurrence_id) return event;  // a moved occurrence: its own dates only
  for (auto* p = icalcomponent_get_first_property(component, ICAL_RRULE_PROPERTY); p;
       p = icalcomponent_get_next_property(component, ICAL_RRULE_PROPERTY)) {
    event.rules.push_back(icalproperty_get_rrule(p));
  }
  for (auto* p = icalcomponent_get_first_property(component, ICAL_RDATE_PROPERTY); p;
       p = icalcomponent_get_next_property(component, ICAL_RDATE_PROPERTY)) {
    const icaldatetimeperiodtype rdate = icalproperty_get_rdate(p);
    const icaltimetype& time =
        icaltime_is_null_time(rdate.period.start) ? rdate.time : rdate.period.start;
    event.rdates.push_back(checked_day(event, time, "RDATE"));
  }
  for (auto* p = icalcomponent_get_first_property(component, ICAL_EXDATE_PROPERTY); p;
       p = icalcomponent_get_next_property(component, ICAL_EXDATE_PROPERTY)) {
    event.exdates.insert(checked_day(event, icalproperty_get_exdate(p), "EXDATE"));
  }
  return event;
}

// ---- The window's dates --------------------------------------------------------------------

bool by_part_empty(const short* values) { return values[0] == ICAL_RECURRENCE_ARRAY_MAX; }

bool by_part_is(const short* values, int only) {
  return values[0] == only && values[1] == ICAL_RECURRENCE_ARRAY_MAX;
}

// The CPU time of the calling thread: what expanding costs, whatever else the machine runs.
std::int64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

const char* frequency_name(icalrecurrencetype_frequency frequency) {
  const char* name = icalrecur_freq_to_string(frequency);
  return name ? name : "none";
}

class WindowReader {
 public:
  WindowReader(std::int64_t first, std::int64_t last) : first_(first), last_(last) {}

  // The dates of every master event (no RECURRENCE-ID) and every moved occurrence.
  void add(const Event& event, const std::set<std::int64_t>& moved) {
    if (event.cancelled || event.timed) return;
    UidDates& dates = by_uid_[event.uid];
    if (event.rules.empty() && event.rdates.empty()) {
      add_days(event, dates, event.start, /*one_off=*/true);
      return;
    }
    if (is_plain_yearly(event, moved)) {
      const auto date = civil_from_days(event.start);
      insert(event, dates, 0, date.month, date.day);
      return;
    }
    std::set<std::int64_t> starts;  // occurrence starts touching the window
    const auto touches = [&](std::int64_t day) {
      return day + event.length - 1 >= first_ && day <= last_;
    };
    if (touches(event.start)) starts.insert(event.start);  // DTSTART is always an occurrence
    for (const auto day : event.rdates) {
      if (touches(day)) starts.insert(day);
    }
    for (const auto& rule : event.rules) expand(event, rule, starts);
    for (const auto day : starts) {
      if (event.exdates.count(day) == 0 && moved.count(day) == 0) {
        add_days(event, dates, day, /*one_off=*/false);
      }
    }
  }

  IcsReadResult result(std::size_t timed_events) && {
    struct Entry {
      std::int64_t key;
      const std::string* uid;
      std::string* name;
    };
    std::vector<Entry> entries;
    entries.reserve(date_count_);
    for (auto& [uid, dates] : by_uid_) {
      for (auto& [key, name] : dates) entries.push_back({key, &uid, &name});
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.key, *a.uid) < std::tie(b.key, *b.uid);
    });
    IcsReadResult result;
    result.dates.reserve(entries.size());
    for (const auto& entry : entries) {
      const auto year = static_cast<int>(entry.key / 10000);
      const auto month = static_cast<int>(entry.key / 100 % 100);
      const auto day = static_cast<int>(entry.key % 100);
      result.dates.push_back({CalendarDay{year, month, day, std::move(*entry.name)}, *entry.uid});
    }
    result.timed_events_ignored = timed_events;
    result.dates_outside_window = outside_;
    return result;
  }

 private:
  // Dates of one UID, by year * 10000 + month * 100 + day (year 0: every year), with the name
  // of the first event that gave each.
  using UidDates = std::map<std::int64_t, std::string>;

  // An occurrence's days in the window; a one-off event's other days are counted.
  void add_days(const Event& event, UidDates& dates, std::int64_t start, bool one_off) {
    const auto last_day = start + event.length - 1;
    const auto from = std::max(start, first_);
    const auto to = std::min(last_day, last_);
    const auto inside = to >= from ? to - from + 1 : 0;
    if (one_off) outside_ += static_cast<std::size_t>(event.length - inside);
    for (auto day = from; day <= to; ++day) {
      const auto date = civil_from_days(day);
      insert(event, dates, date.year, date.month, date.day);
    }
  }

  // Every date an event gives passes here, and counts as work: many events of one UID giving
  // the same dates again cost time as new ones do.
  void insert(const Event& event, UidDates& dates, int year, int month, int day) {
    if (++inserts_ % 256 == 0) check_time(event);
    const auto [it, added] =
        dates.try_emplace(std::int64_t{year} * 10000 + month * 100 + day, event.name);
    (void)it;
    if (added && ++date_count_ > kMaxIcsDates) {
      throw IcsError(Kind::kTooManyDates,
                     "the file has more than " + with_thousands(kMaxIcsDates) + " dates from " +
                         iso_date(first_) + " to " + iso_date(last_) +
                         ": shorten the horizon, or split the file");
    }
  }

  void check_time(const Event& event) const {
    if (thread_cpu_ns() > deadline_ns_) {
      throw IcsError(Kind::kTooComplex,
                     "the events took more than " + with_thousands(kMaxExpansionCpuMs) +
                         " ms of CPU time to expand (stopped at VEVENT " +
                         std::to_string(event.number) + "): shorten the horizon, or split the file");
    }
  }

  // A one-day event repeating every year on DTSTART's month and day, and nothing else, that has
  // no occurrence in the window before DTSTART: CalendarDay's year 0 says the same.
  bool is_plain_yearly(const Event& event, const std::set<std::int64_t>& moved) const {
    if (event.rules.size() != 1 || !event.rdates.empty() || !event.exdates.empty() ||
        !moved.empty() || event.length != 1) {
      return false;
    }
    const auto& rule = event.rules.front();
    const auto date = civil_from_days(event.start);
    const bool plain =
        rule.freq == ICAL_YEARLY_RECURRENCE && rule.interval == 1 && rule.count == 0 &&
        icaltime_is_null_time(rule.until) && (rule.rscale == nullptr || *rule.rscale == '\0') &&
        by_part_empty(rule.by_second) && by_part_empty(rule.by_minute) &&
        by_part_empty(rule.by_hour) && by_part_empty(rule.by_day) &&
        by_part_empty(rule.by_year_day) && by_part_empty(rule.by_week_no) &&
        by_part_empty(rule.by_set_pos) &&
        (by_part_empty(rule.by_month) || by_part_is(rule.by_month, date.month)) &&
        (by_part_empty(rule.by_month_day) || by_part_is(rule.by_month_day, date.day));
    if (!plain) return false;
    // The first of its month and day on or after the window's start (02-29 within 8 years).
    const auto window_start = civil_from_days(first_);
    for (int year = window_start.year; year <= window_start.year + 8; ++year) {
      if (date.day > cron_detail::days_in_month(year, date.month)) continue;
      const auto day = days_from_civil(year, date.month, date.day);
      if (day >= first_) return event.start <= day;
    }
    return false;
  }

  // The occurrence starts of one RRULE that touch the window. libical's iterator runs with
  // UNTIL at most the window's end, and from the window's start when the rule has no COUNT (one
  // with COUNT must be counted from DTSTART, which is therefore not before 1900). The time is
  // checked after each call: a call cannot be stopped halfway, so the limit is passed by at
  // most one call, which libical ends at UNTIL or at the end of its search for a first date
  // (under a second for the worst rules measured).
  void expand(const Event& event, icalrecurrencetype rule, std::set<std::int64_t>& starts) {
    if (rule.freq == ICAL_SECONDLY_RECURRENCE || rule.freq == ICAL_MINUTELY_RECURRENCE ||
        rule.freq == ICAL_HOURLY_RECURRENCE) {
      refuse_event(event, std::string("RRULE FREQ=") + frequency_name(rule.freq) +
                              " repeats an all-day event within a day");
    }
    if (rule.freq != ICAL_DAILY_RECURRENCE && rule.freq != ICAL_WEEKLY_RECURRENCE &&
        rule.freq != ICAL_MONTHLY_RECURRENCE && rule.freq != ICAL_YEARLY_RECURRENCE) {
      refuse_event(event, "RRULE has no FREQ");
    }
    const auto earliest = first_ - (event.length - 1);  // an occurrence from here touches
    // libical's iterator ends every rule after 2582 (its MAX_TIME_T_YEAR).
    auto until = std::min(last_, days_from_civil(2582, 12, 31));
    if (!icaltime_is_null_time(rule.until)) {
      until = std::min(until, checked_day(event, rule.until, "RRULE UNTIL"));
    }
    if (until < event.start) return;
    rule.until = ical_date(until);

    if (rule.count > 0 && event.start < days_from_civil(1900, 1, 1)) {
      refuse_event(event, "RRULE with COUNT from before 1900: not expanded");
    }
    detail::RecurIteratorPtr iterator(icalrecur_iterator_new(rule, ical_date(event.start)));
    if (!iterator) {
      refuse_event(event, std::string("RRULE FREQ=") + frequency_name(rule.freq) +
                              " cannot be expanded (libical: " +
                              icalerror_strerror(icalerrno) + ")");
    }
    check_time(event);
    if (rule.count == 0 && earliest > event.start) {
      if (!icalrecur_iterator_set_start(iterator.get(), ical_date(earliest))) {
        refuse_event(event, "RRULE cannot be expanded from " + iso_date(earliest));
      }
      check_time(event);
    }
    for (;;) {
      const icaltimetype next = icalrecur_iterator_next(iterator.get());
      const auto day = icaltime_is_null_time(next) ? std::nullopt : day_number(next);
      check_time(event);
      if (!day) return;
      if (*day > last_ || *day > until) return;
      if (*day >= earliest) starts.insert(*day);
    }
  }

  std::int64_t first_;
  std::int64_t last_;
  std::map<std::string, UidDates> by_uid_;
  std::size_t date_count_ = 0;
  std::size_t outside_ = 0;
  std::int64_t deadline_ns_ = thread_cpu_ns() + kMaxExpansionCpuMs * 1'000'000;
  std::size_t inserts_ = 0;
};

std::vector<icalcomponent*> calendars_of(icalcomponent* root) {
  if (icalcomponent_isa(root) == ICAL_VCALENDAR_COMPONENT) return {root};
  std::vector<icalcomponent*> calendars;
  if (icalcomponent_isa(root) == ICAL_XROOT_COMPONENT) {
    for (auto* c = icalcomponent_get_first_component(root, ICAL_VCALENDAR_COMPONENT); c;
         c = icalcomponent_get_next_component(root, ICAL_VCALENDAR_COMPONENT)) {
      calendars.push_back(c);
    }
  }
  return calendars;
}

std::int64_t checked_option_day(const IcsDay& day) {
  if (day.year < kMinYear || day.year > kMaxYear || day.month < 1 || day.month > 12 ||
      day.day < 1 || day.day > cron_detail::days_in_month(day.year, day.month)) {
    throw std::invalid_argument("from: not a date from 1970-01-01 to 2999-12-31");
  }
  return days_from_civil(day.year, day.month, day.day);
}

}  // namespace

std::string_view to_string(IcsError::Kind kind) noexcept {
  switch (kind) {
    case Kind::kTooLarge: return "too_large";
    case Kind::kNotICalendar: return "not_icalendar";
    case Kind::kNoCalendar: return "no_calendar";
    case Kind::kTooManyEvents: return "too_many_events";
    case Kind::kTooManyDates: return "too_many_dates";
    case Kind::kTooComplex: return "too_complex";
    case Kind::kInvalidEvent: return "invalid_event";
  }
  return "invalid_event";
}

IcsReadResult read_ics(std::string_view text, const IcsReadOptions& options) {
  const auto first = checked_option_day(options.from);
  if (options.horizon_days < 1 || options.horizon_days > kMaxHorizonDays) {
    throw std::invalid_argument("horizon_days: from 1 to " + std::to_string(kMaxHorizonDays));
  }
  const auto last = std::min<std::int64_t>(first + options.horizon_days - 1,
                                           days_from_civil(kMaxYear, 12, 31));
  const PreparedText prepared = prepare_text(text);

  detail::LibicalSession session;
  detail::ComponentPtr root(icalparser_parse_string(prepared.text.c_str()));
  if (!root) {
    throw IcsError(Kind::kNotICalendar,
                   prepared.ends_inside_component
                       ? "not an iCalendar file: it ends inside a component (a BEGIN without its "
                         "END), as a file cut short does"
                       : "not an iCalendar file: libical read no component from it");
  }
  const auto calendars = calendars_of(root.get());
  if (calendars.empty()) {
    throw IcsError(Kind::kNoCalendar, "the file has no calendar (BEGIN:VCALENDAR ... END:VCALENDAR)");
  }

  std::vector<Event> events;
  std::size_t timed = 0;
  std::map<std::string, std::set<std::int64_t>> moved;  // UID -> RECURRENCE-ID dates
  for (auto* calendar : calendars) {
    for (auto* c = icalcomponent_get_first_component(calendar, ICAL_VEVENT_COMPONENT); c;
         c = icalcomponent_get_next_component(calendar, ICAL_VEVENT_COMPONENT)) {
      events.push_back(read_event(c, events.size() + 1));
      const Event& event = events.back();
      if (event.timed) ++timed;
      if (event.recurrence_id) moved[event.uid].insert(*event.recurrence_id);
    }
  }

  WindowReader window(first, last);
  static const std::set<std::int64_t> kNoneMoved;
  for (const auto& event : events) {
    const auto it = event.recurrence_id ? moved.end() : moved.find(event.uid);
    window.add(event, it == moved.end() ? kNoneMoved : it->second);
  }
  return std::move(window).result(timed);
}

}  // namespace cronwheel::common::ical
