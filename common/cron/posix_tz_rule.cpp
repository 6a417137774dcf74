#include "common/cron/posix_tz_rule.h"

#include <algorithm>

#include "common/cron/civil_time.h"

namespace cronwheel::common::cron_detail {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  bool done() const { return pos_ == text_.size(); }
  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool take(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool at_digit() const { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; }

  // "EST" or "<+1030>": the abbreviation is not needed, only skipped.
  bool name() {
    if (take('<')) {
      const std::size_t close = text_.find('>', pos_);
      if (close == std::string_view::npos || close == pos_) return false;
      pos_ = close + 1;
      return true;
    }
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && ((text_[pos_] >= 'A' && text_[pos_] <= 'Z') ||
                                   (text_[pos_] >= 'a' && text_[pos_] <= 'z'))) {
      ++pos_;
    }
    return pos_ - begin >= 3;
  }

  bool number(int max, int& out) {
    if (!at_digit()) return false;
    out = 0;
    while (at_digit()) {
      out = out * 10 + (text_[pos_++] - '0');
      if (out > max) return false;
    }
    return true;
  }

  // [+-]hh[:mm[:ss]] in seconds.
  bool time(int max_hours, std::int64_t& out) {
    const bool negative = take('-');
    if (!negative) take('+');
    int h = 0;
    int m = 0;
    int s = 0;
    if (!number(max_hours, h)) return false;
    if (take(':') && !number(59, m)) return false;
    if (peek(':') && (!take(':') || !number(59, s))) return false;
    out = (negative ? -1 : 1) * (std::int64_t{h} * 3600 + m * 60 + s);
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<PosixTzRule> PosixTzRule::parse(std::string_view text) {
  Reader in(text);
  PosixTzRule rule;
  std::int64_t offset = 0;
  // POSIX offsets count hours west of UTC; stored here as seconds east.
  if (!in.name() || !in.time(24, offset)) return std::nullopt;
  rule.std_offset_ = -offset;
  if (in.done()) return rule;

  if (!in.name()) return std::nullopt;
  rule.has_dst_ = true;
  rule.dst_offset_ = rule.std_offset_ + 3600;
  if (!in.peek(',') && !in.done()) {
    if (!in.time(24, offset)) return std::nullopt;
    rule.dst_offset_ = -offset;
  }
  // A daylight-saving name without a rule leaves the rule to the implementation; the tz
  // database never writes one, so it is refused rather than guessed.
  if (!in.take(',')) return std::nullopt;
  for (Date* date : {&rule.start_, &rule.end_}) {
    if (date == &rule.end_ && !in.take(',')) return std::nullopt;
    if (in.take('J')) {
      date->kind = Date::Kind::kJulianNoLeap;
      if (!in.number(365, date->n) || date->n < 1) return std::nullopt;
    } else if (in.take('M')) {
      date->kind = Date::Kind::kMonthWeekDay;
      if (!in.number(12, date->month) || date->month < 1 || !in.take('.') ||
          !in.number(5, date->week) || date->week < 1 || !in.take('.') ||
          !in.number(6, date->weekday)) {
        return std::nullopt;
      }
    } else {
      date->kind = Date::Kind::kJulianZeroBased;
      if (!in.number(365, date->n)) return std::nullopt;
    }
    // RFC 8536 allows -167..167 hours here.
    if (in.take('/') && !in.time(167, date->time)) return std::nullopt;
  }
  if (!in.done()) return std::nullopt;
  return rule;
}

std::int64_t PosixTzRule::local_seconds(const Date& date, int year) {
  std::int64_t days = 0;
  switch (date.kind) {
    case Date::Kind::kJulianNoLeap:
      days = days_from_civil(year, 1, 1) + date.n - 1 + (is_leap_year(year) && date.n >= 60 ? 1 : 0);
      break;
    case Date::Kind::kJulianZeroBased:
      days = days_from_civil(year, 1, 1) + date.n;
      break;
    case Date::Kind::kMonthWeekDay: {
      const std::int64_t first = days_from_civil(year, date.month, 1);
      const int first_weekday = day_of_week(first) - 1;  // 0 = Sunday
      int day = 1 + (date.weekday - first_weekday + 7) % 7 + (date.week - 1) * 7;
      while (day > days_in_month(year, date.month)) day -= 7;
      days = first + day - 1;
      break;
    }
  }
  return days * 86400 + date.time;
}

std::vector<std::pair<std::int64_t, std::int64_t>> PosixTzRule::transitions(
    std::int64_t from_s, std::int64_t to_s) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (!has_dst_ || to_s <= from_s) return out;
  const int first_year = civil_from_days(floor_div(from_s, 86400)).year - 1;
  const int last_year = civil_from_days(floor_div(to_s, 86400)).year + 1;
  for (int year = first_year; year <= last_year; ++year) {
    const std::int64_t into_dst = local_seconds(start_, year) - std_offset_;
    const std::int64_t out_of_dst = local_seconds(end_, year) - dst_offset_;
    if (into_dst > from_s && into_dst < to_s) out.emplace_back(into_dst, dst_offset_);
    if (out_of_dst > from_s && out_of_dst < to_s) out.emplace_back(out_of_dst, std_offset_);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace cronwheel::common::cron_detail
