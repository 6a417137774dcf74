#include "common/cron/cron_fields.h"

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "common/cron/civil_time.h"
#include "common/cron/cron_error.h"

namespace cronwheel::common::cron_detail {

int quartz_max_year() {
  static const int kMaxYear = [] {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const auto days = std::chrono::duration_cast<std::chrono::hours>(now).count() / 24;
    return civil_from_days(days).year + 100;
  }();
  return kMaxYear;
}

namespace {

enum class Kind { kSeconds, kMinutes, kHours, kDayOfMonth, kMonth, kDayOfWeek, kYear };

struct FieldSpec {
  Kind kind;
  const char* name;
  int min;            // smallest value that may be written
  int max;            // largest value that may be written
  int max_increment;  // largest step after '/' (Quartz's checkIncrementRange); 0 = no limit
  int wrap;           // modulus for a range whose end is before its start; 0 = refused
  bool one_based;     // a wrapped value of 0 means `wrap` (days and months count from 1)
};

constexpr std::array<FieldSpec, 7> kFields = {{
    {Kind::kSeconds, "seconds", 0, 59, 59, 60, false},
    {Kind::kMinutes, "minutes", 0, 59, 59, 60, false},
    {Kind::kHours, "hours", 0, 23, 23, 24, false},
    {Kind::kDayOfMonth, "day-of-month", 1, 31, 31, 31, true},
    {Kind::kMonth, "month", 1, 12, 12, 12, true},
    {Kind::kDayOfWeek, "day-of-week", 1, 7, 7, 7, true},
    {Kind::kYear, "year", kFirstYear, kLastExplicitYear, 0, 0, false},
}};

constexpr std::array<std::string_view, 12> kMonthNames = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<std::string_view, 7> kDayNames = {"SUN", "MON", "TUE", "WED",
                                                       "THU", "FRI", "SAT"};

// Numbers longer than this are out of every range; stopping here keeps int arithmetic safe.
constexpr std::size_t kMaxDigits = 9;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return c >= 'A' && c <= 'Z'; }

std::string quoted_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

// An item as it may appear inside an error message: printable ASCII only.
std::string printable(std::string_view item) {
  std::string out(item);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

[[noreturn]] void fail(const FieldSpec& spec, const std::string& reason) {
  throw CronError(spec.name, reason);
}

// One comma-separated item of a field, parsed left to right.
class ItemParser {
 public:
  ItemParser(const FieldSpec& spec, std::string_view item, bool alone, CronFields& out)
      : spec_(spec), item_(item), alone_(alone), out_(out) {}

  void parse() {
    if (item_.empty()) fail(spec_, "empty value in list");
    if (item_ == "?") return parse_unspecified();
    if (spec_.kind == Kind::kDayOfMonth && item_[0] == 'L') return parse_last_day_of_month();
    if (spec_.kind == Kind::kDayOfWeek && item_[0] == 'L') {
      // 'L' alone in day-of-week is Saturday (Quartz: "simply means 7 or SAT").
      if (item_.size() > 1) {
        fail(spec_, "'L' in day-of-week stands alone or follows a day (L, 6L), not '" +
                        printable(item_) + "'");
      }
      require_alone("'L'");
      add(7);
      return;
    }
    parse_general();
  }

 private:
  void require_alone(const char* what) {
    if (!alone_) fail(spec_, std::string(what) + " cannot be combined with other values");
  }

  void parse_unspecified() {
    if (spec_.kind != Kind::kDayOfMonth && spec_.kind != Kind::kDayOfWeek) {
      fail(spec_, "'?' is allowed only in day-of-month and day-of-week");
    }
    require_alone("'?'");
    if (spec_.kind == Kind::kDayOfMonth) {
      out_.day_of_month_unspecified = true;
    } else {
      out_.day_of_week_unspecified = true;
    }
  }

  // 'L', 'LW', 'L-n', 'L-nW': the last day of the month, optionally n days before it,
  // optionally moved to the nearest weekday.
  void parse_last_day_of_month() {
    require_alone("'L'");
    out_.last_day_of_month = true;
    pos_ = 1;
    if (pos_ < item_.size() && item_[pos_] == '-') {
      ++pos_;
      if (pos_ >= item_.size() || !is_digit(item_[pos_])) {
        fail(spec_, "'L-' must be followed by a number of days");
      }
      const Number n = read_number();
      if (n.value > 30) fail(spec_, "offset " + n.text + " from the last day is out of range 0-30");
      out_.last_day_offset = n.value;
    }
    if (pos_ < item_.size() && item_[pos_] == 'W') {
      out_.nearest_weekday = true;
      ++pos_;
    }
    if (pos_ < item_.size()) {
      fail(spec_, "unexpected " + quoted_char(item_[pos_]) + " in '" + printable(item_) +
                      "' (expected L, LW, L-n or L-nW)");
    }
  }

  struct Number {
    int value;
    std::string text;
  };

  Number read_number() {
    const std::size_t begin = pos_;
    while (pos_ < item_.size() && is_digit(item_[pos_])) ++pos_;
    Number n{0, std::string(item_.substr(begin, pos_ - begin))};
    if (n.text.size() > kMaxDigits) {
      n.value = 1'000'000'000;  // out of every range; reported with its text
    } else {
      for (char c : n.text) n.value = n.value * 10 + (c - '0');
    }
    return n;
  }

  // A number, or for month and day-of-week a three-letter name. Sets named_.
  Number read_value() {
    if (pos_ >= item_.size()) fail(spec_, "'" + printable(item_) + "' is incomplete");
    const char c = item_[pos_];
    if (is_digit(c)) {
      named_ = false;
      return read_number();
    }
    if (is_letter(c) && (spec_.kind == Kind::kMonth || spec_.kind == Kind::kDayOfWeek)) {
      named_ = true;
      const std::size_t begin = pos_;
      while (pos_ < item_.size() && is_letter(item_[pos_])) ++pos_;
      std::string_view word = item_.substr(begin, pos_ - begin);
      // "FRIL" is FRI followed by the 'L' suffix.
      if (spec_.kind == Kind::kDayOfWeek && word.size() == 4 && word[3] == 'L') {
        word = word.substr(0, 3);
        --pos_;
      }
      if (spec_.kind == Kind::kMonth) {
        for (std::size_t i = 0; i < kMonthNames.size(); ++i) {
          if (word == kMonthNames[i]) return {static_cast<int>(i) + 1, std::string(word)};
        }
        fail(spec_, "invalid month name '" + std::string(word) + "'");
      }
      for (std::size_t i = 0; i < kDayNames.size(); ++i) {
        if (word == kDayNames[i]) return {static_cast<int>(i) + 1, std::string(word)};
      }
      fail(spec_, "invalid day-of-week name '" + std::string(word) + "'");
    }
    fail(spec_, "unexpected " + quoted_char(c) + " in '" + printable(item_) + "'");
  }

  void check_range(const Number& n) const {
    if (n.value < spec_.min || n.value > spec_.max) {
      fail(spec_, n.text + " is out of range " + std::to_string(spec_.min) + "-" +
                      std::to_string(spec_.max));
    }
  }

  void parse_general() {
    bool all = false;
    Number start{-1, ""};
    Number end{-1, ""};
    int step = 0;

    if (item_[0] == '*') {
      all = true;
      pos_ = 1;
    } else if (item_[0] == '/') {
      all = true;  // Quartz reads "/n" as "*/n"
    } else {
      start = read_value();
      if (pos_ < item_.size() && item_[pos_] == '-') {
        ++pos_;
        const bool start_named = named_;
        end = read_value();
        if (named_ != start_named) fail(spec_, "a range must join two numbers or two names");
      }
    }

    if (pos_ < item_.size() && item_[pos_] == '/') {
      ++pos_;
      if (!all && named_) {
        fail(spec_, "a step cannot follow a name ('" + printable(item_) + "')");
      }
      if (pos_ >= item_.size() || !is_digit(item_[pos_])) {
        fail(spec_, "'/' must be followed by a number");
      }
      const Number n = read_number();
      const int limit = spec_.max_increment;
      if (limit == 0 && n.value < 1) fail(spec_, "increment " + n.text + " must be at least 1");
      if (limit > 0 && (n.value < 1 || n.value > limit)) {
        fail(spec_, "increment " + n.text + " is out of range 1-" + std::to_string(limit));
      }
      step = n.value;
    }

    if (pos_ < item_.size()) return parse_suffix(all, start, end, step);

    if (!all) {
      check_range(start);
      if (end.value >= 0) check_range(end);
    }
    if (all && step == 0) {
      fill(spec_.min, default_stop(), 1);
    } else if (all) {
      fill(spec_.min, default_stop(), step);
    } else if (end.value >= 0) {
      if (end.value < start.value && spec_.wrap == 0) {
        fail(spec_, "range " + start.text + "-" + end.text + " ends before it starts");
      }
      fill(start.value, end.value, step == 0 ? 1 : step);
    } else if (step != 0) {
      fill(start.value, default_stop(), step);
    } else {
      add(start.value);
    }
  }

  // 'nW' (day-of-month), 'nL' and 'n#k' (day-of-week): a single value with a suffix.
  void parse_suffix(bool all, const Number& start, const Number& end, int step) {
    const char c = item_[pos_];
    const bool single = !all && end.value < 0 && step == 0;
    if (c == 'W' && spec_.kind == Kind::kDayOfMonth && single) {
      if (pos_ + 1 != item_.size()) unexpected(pos_ + 1);
      require_alone("'W'");
      check_range(start);
      out_.nearest_weekday = true;
      add(start.value);
      return;
    }
    if (c == 'L' && spec_.kind == Kind::kDayOfWeek && single) {
      if (pos_ + 1 != item_.size()) unexpected(pos_ + 1);
      require_alone("'L'");
      check_range(start);
      out_.last_day_of_week = true;
      add(start.value);
      return;
    }
    if (c == '#' && spec_.kind == Kind::kDayOfWeek && single) {
      ++pos_;
      const bool digits_only = pos_ < item_.size() && is_digit(item_[pos_]);
      const Number k = digits_only ? read_number() : Number{0, ""};
      if (!digits_only || pos_ != item_.size() || k.value < 1 || k.value > 5) {
        fail(spec_, "'#' must be followed by a number 1-5");
      }
      require_alone("'#'");
      check_range(start);
      out_.nth_day_of_week = k.value;
      add(start.value);
      return;
    }
    if (c == 'W' && spec_.kind != Kind::kDayOfMonth) fail(spec_, "'W' is allowed only in day-of-month");
    if (c == 'L' && spec_.kind != Kind::kDayOfWeek && spec_.kind != Kind::kDayOfMonth) {
      fail(spec_, "'L' is allowed only in day-of-month and day-of-week");
    }
    if (c == '#' && spec_.kind != Kind::kDayOfWeek) fail(spec_, "'#' is allowed only in day-of-week");
    if (c == 'L' && spec_.kind == Kind::kDayOfMonth) {
      fail(spec_, "'L' must stand alone in day-of-month (L, L-n, LW or L-nW), not in '" +
                      printable(item_) + "'");
    }
    if (c == 'W' || c == 'L' || c == '#') {
      fail(spec_, std::string("'") + c + "' must follow a single value ('" + printable(item_) +
                      "')");
    }
    unexpected(pos_);
  }

  [[noreturn]] void unexpected(std::size_t at) const {
    fail(spec_, "unexpected " + quoted_char(item_[at]) + " in '" + printable(item_) + "'");
  }

  int default_stop() const { return spec_.kind == Kind::kYear ? quartz_max_year() : spec_.max; }

  // Quartz's addToSet loop: every step-th value from start to stop; a stop before the start
  // wraps around the field (22-2 in hours is 22,23,0,1,2; FRI-MON is 6,7,1,2).
  void fill(int start, int stop, int step) {
    int modulus = 0;
    if (stop < start) {
      modulus = spec_.wrap;
      stop += modulus;
    }
    for (int i = start; i <= stop; i += step) {
      int v = i;
      if (modulus != 0) {
        v = i % modulus;
        if (v == 0 && spec_.one_based) v = modulus;
      }
      add(v);
    }
  }

  void add(int v) {
    switch (spec_.kind) {
      case Kind::kSeconds: out_.seconds.add(v); break;
      case Kind::kMinutes: out_.minutes.add(v); break;
      case Kind::kHours: out_.hours.add(v); break;
      case Kind::kDayOfMonth: out_.days_of_month.add(v); break;
      case Kind::kMonth: out_.months.add(v); break;
      case Kind::kDayOfWeek: out_.days_of_week.add(v); break;
      case Kind::kYear: out_.years.add(v); break;
    }
  }

  const FieldSpec& spec_;
  std::string_view item_;
  bool alone_;
  CronFields& out_;
  std::size_t pos_ = 0;
  bool named_ = false;
};

void parse_field(const FieldSpec& spec, std::string_view text, CronFields& out) {
  std::vector<std::string_view> items;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    items.push_back(text.substr(begin, comma == std::string_view::npos ? comma : comma - begin));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  for (std::string_view item : items) ItemParser(spec, item, items.size() == 1, out).parse();
}

}  // namespace

CronFields parse_cron_fields(std::string_view expression) {
  if (expression.size() > kMaxExpressionLength) {
    throw CronError("expression", "at most " + std::to_string(kMaxExpressionLength) + " characters, got " +
                                      std::to_string(expression.size()));
  }
  // Quartz upper-cases the expression and splits it on spaces and tabs.
  std::string upper(expression);
  for (char& c : upper) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  std::vector<std::string_view> fields;
  const std::string_view text(upper);
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      ++i;
      continue;
    }
    const std::size_t begin = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    fields.push_back(text.substr(begin, i - begin));
  }
  if (fields.size() != 6 && fields.size() != 7) {
    throw CronError("expression",
                    "expected 6 or 7 fields, got " + std::to_string(fields.size()));
  }

  CronFields out;
  for (std::size_t f = 0; f < fields.size(); ++f) parse_field(kFields[f], fields[f], out);
  if (fields.size() == 6) parse_field(kFields[6], "*", out);

  if (out.day_of_month_unspecified && out.day_of_week_unspecified) {
    throw CronError("day-of-month",
                    "'?' may be used in only one of day-of-month and day-of-week");
  }
  if (!out.day_of_month_unspecified && !out.day_of_week_unspecified) {
    throw CronError("day-of-week",
                    "one of day-of-month and day-of-week must be '?'");
  }
  return out;
}

}  // namespace cronwheel::common::cron_detail
