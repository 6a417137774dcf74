#include "cli/instant.h"

#include <algorithm>
#include <chrono>

namespace cronwheel::cli {

namespace {

constexpr std::size_t kMaxEpochDigits = 18;  // below 2^63
constexpr std::size_t kMaxInstantText = 40;

// `count` decimal digits at `at` as a number, or -1.
int digits_at(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return -1;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

const std::string kForms =
    "expected a time as ISO-8601 with its UTC offset (2026-05-01T02:00:00+02:00, 2026-05-01T00:00Z) or epoch "
    "milliseconds";

}  // namespace

std::variant<std::int64_t, std::string> parse_instant(std::string_view text) {
  if (all_digits(text)) {
    if (text.size() > kMaxEpochDigits) return "epoch milliseconds have at most 18 digits";
    std::int64_t ms = 0;
    for (char c : text) ms = ms * 10 + (c - '0');
    return ms;
  }
  if (text.size() > kMaxInstantText) return kForms;
  // YYYY-MM-DDTHH:MM
  const int year = digits_at(text, 0, 4), month = digits_at(text, 5, 2), day = digits_at(text, 8, 2);
  const int hour = digits_at(text, 11, 2), minute = digits_at(text, 14, 2);
  if (text.size() < 16 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || year < 0 ||
      month < 0 || day < 0 || hour < 0 || minute < 0) {
    return kForms;
  }
  std::size_t at = 16;
  int second = 0, millis = 0;
  if (at < text.size() && text[at] == ':') {
    second = digits_at(text, at + 1, 2);
    if (second < 0) return kForms;
    at += 3;
    if (at < text.size() && text[at] == '.') {
      std::size_t digits = 0;
      while (at + 1 + digits < text.size() && text[at + 1 + digits] >= '0' && text[at + 1 + digits] <= '9') ++digits;
      if (digits == 0 || digits > 3) return "a second's fraction has 1 to 3 digits (milliseconds)";
      millis = digits_at(text, at + 1, digits);
      for (std::size_t i = digits; i < 3; ++i) millis *= 10;
      at += 1 + digits;
    }
  }
  int offset_minutes = 0;
  if (at == text.size()) {
    return "an ISO-8601 time needs its UTC offset, as 2026-05-01T02:00:00+02:00 or 2026-05-01T00:00:00Z";
  }
  if (text[at] == 'Z' && at + 1 == text.size()) {
    offset_minutes = 0;
  } else if ((text[at] == '+' || text[at] == '-') && at + 6 == text.size() && text[at + 3] == ':') {
    const int hours = digits_at(text, at + 1, 2), minutes = digits_at(text, at + 4, 2);
    if (hours < 0 || minutes < 0 || hours > 23 || minutes > 59) return "a UTC offset is +HH:MM or -HH:MM, at most 23:59";
    offset_minutes = (hours * 60 + minutes) * (text[at] == '-' ? -1 : 1);
  } else {
    return kForms;
  }
  using namespace std::chrono;
  const year_month_day date{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                            std::chrono::day{static_cast<unsigned>(day)}};
  if (year < 1970 || !date.ok()) return "no such day: " + std::string(text.substr(0, 10));
  if (hour > 23 || minute > 59 || second > 59) return "no such time of day: " + std::string(text.substr(11, at - 11));
  const std::int64_t days = sys_days(date).time_since_epoch().count();
  return ((days * 24 + hour) * 60 + minute - offset_minutes) * 60'000LL + second * 1000LL + millis;
}

}  // namespace cronwheel::cli
