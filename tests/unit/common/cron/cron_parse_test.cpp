#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "common/cron/cron_expression.h"

namespace cronwheel::common {
namespace {

// The message of the CronError `expression` raises, or "" when it parses.
std::string parse_error(std::string_view expression, std::string_view zone = "UTC") {
  try {
    CronExpression::parse(expression, zone);
    return "";
  } catch (const CronError& e) {
    return e.what();
  }
}

struct Refusal {
  const char* expression;
  const char* message;
};

void expect_refusals(const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    EXPECT_EQ(parse_error(c.expression), c.message) << "expression: '" << c.expression << "'";
  }
}

TEST(CronParse, AcceptsSixOrSevenFields) {
  EXPECT_EQ(parse_error("0 0 12 * * ?"), "");
  EXPECT_EQ(parse_error("0 0 12 * * ? 2030"), "");
  EXPECT_EQ(parse_error("  0\t0  12 *\t* ?  "), "");
}

TEST(CronParse, RefusesAnyOtherNumberOfFields) {
  expect_refusals({
      {"", "expression: expected 6 or 7 fields, got 0"},
      {"   ", "expression: expected 6 or 7 fields, got 0"},
      {"0 0 12 * *", "expression: expected 6 or 7 fields, got 5"},
      {"0 0 12 * * ? 2030 extra", "expression: expected 6 or 7 fields, got 8"},
  });
}

TEST(CronParse, RefusesOverlongExpressionsBeforeLookingAtThem) {
  std::string padded = "0 0 12 * * ?" + std::string(243, ' ');  // 255 characters: still fine
  EXPECT_EQ(parse_error(padded), "");
  std::string list = "0 0 12 * * ? ";
  for (int i = 0; i < 100'000; ++i) list += "2030,";
  EXPECT_EQ(parse_error(list), "expression: at most 255 characters, got " + std::to_string(list.size()));
  EXPECT_EQ(parse_error(padded + " "), "expression: at most 255 characters, got 256");
}

TEST(CronParse, AcceptsEveryConstructOfTheDialect) {
  for (const char* expression : {
           "* * * * * ?", "0/15 */5 1-5 * * ?", "/20 * * * * ?", "0 0 22-2 * * ?",
           "50-10/7 * * * * ?", "0 0 9-17/2 ? * MON-FRI", "0 0 12 ? * FRI-MON",
           "0 0 12 1 JAN,jul,Oct ?", "0 0 12 15 NOV-FEB ?", "0 0 12 L * ?", "0 0 12 L-3 * ?",
           "0 0 12 LW * ?", "0 0 12 L-2W * ?", "0 0 12 15W * ?", "0 0 12 lw * ?",
           "0 0 12 ? * 6L", "0 0 12 ? * FRIL", "0 0 12 ? * L", "0 0 12 ? * 6#3",
           "0 0 12 ? * fri#5", "0 0 12 * * ? 2030-2035", "0 0 12 * * ? */2",
           "0 0 12 * * ? 2026/3,2099", "5,*/20,10-12 * * * * ?", "0 0 12 1-31/10 * ?"}) {
    EXPECT_EQ(parse_error(expression), "") << expression;
  }
}

TEST(CronParse, OutOfRangeValueNamesFieldAndRange) {
  expect_refusals({
      {"60 * * * * ?", "seconds: 60 is out of range 0-59"},
      {"0 60 * * * ?", "minutes: 60 is out of range 0-59"},
      {"0 0 24 * * ?", "hours: 24 is out of range 0-23"},
      {"0 0 0 32 * ?", "day-of-month: 32 is out of range 1-31"},
      {"0 0 0 0 * ?", "day-of-month: 0 is out of range 1-31"},
      {"0 0 0 1 13 ?", "month: 13 is out of range 1-12"},
      {"0 0 0 ? * 8", "day-of-week: 8 is out of range 1-7"},
      {"0 0 0 ? * 0", "day-of-week: 0 is out of range 1-7"},
      {"0 0 0 ? * 1-8", "day-of-week: 8 is out of range 1-7"},
      {"0 0 0 1-32 * ?", "day-of-month: 32 is out of range 1-31"},
      {"0 0 0 * * ? 1969", "year: 1969 is out of range 1970-2099"},
      {"0 0 0 * * ? 2100", "year: 2100 is out of range 1970-2099"},
      {"99999999999 * * * * ?", "seconds: 99999999999 is out of range 0-59"},
  });
}

TEST(CronParse, QuestionMarkGoesInExactlyOneDayField) {
  expect_refusals({
      {"0 0 12 ? * ?", "day-of-month: '?' may be used in only one of day-of-month and day-of-week"},
      {"0 0 12 * * *", "day-of-week: one of day-of-month and day-of-week must be '?'"},
      {"0 0 12 5 * MON", "day-of-week: one of day-of-month and day-of-week must be '?'"},
      {"0 0 12 L * MON", "day-of-week: one of day-of-month and day-of-week must be '?'"},
      {"? 0 12 * * ?", "seconds: '?' is allowed only in day-of-month and day-of-week"},
      {"0 0 12 * ? *", "month: '?' is allowed only in day-of-month and day-of-week"},
      {"0 0 12 ? * * ?", "year: '?' is allowed only in day-of-month and day-of-week"},
      {"0 0 12 ?,5 * MON", "day-of-month: '?' cannot be combined with other values"},
  });
}

TEST(CronParse, RefusesInvalidIncrements) {
  expect_refusals({
      {"*/60 * * * * ?", "seconds: increment 60 is out of range 1-59"},
      {"0/60 * * * * ?", "seconds: increment 60 is out of range 1-59"},
      {"* */0 * * * ?", "minutes: increment 0 is out of range 1-59"},
      {"* * */24 * * ?", "hours: increment 24 is out of range 1-23"},
      {"* * * */32 * ?", "day-of-month: increment 32 is out of range 1-31"},
      {"* * * * */13 ?", "month: increment 13 is out of range 1-12"},
      {"* * * ? * */8", "day-of-week: increment 8 is out of range 1-7"},
      {"0-59/60 * * * * ?", "seconds: increment 60 is out of range 1-59"},
      {"5/ * * * * ?", "seconds: '/' must be followed by a number"},
      {"*/x * * * * ?", "seconds: '/' must be followed by a number"},
      {"*/+5 * * * * ?", "seconds: '/' must be followed by a number"},
      {"0 0 0 * * ? 2030/0", "year: increment 0 must be at least 1"},
  });
}

TEST(CronParse, RefusesUnknownNamesAndNamesOutsideMonthAndDayOfWeek) {
  expect_refusals({
      {"0 0 12 * FOO ?", "month: invalid month name 'FOO'"},
      {"0 0 12 ? * FOO", "day-of-week: invalid day-of-week name 'FOO'"},
      {"0 0 12 ? * MONDAY", "day-of-week: invalid day-of-week name 'MONDAY'"},
      {"0 0 12 ? * MO", "day-of-week: invalid day-of-week name 'MO'"},
      {"0 0 12 * MON ?", "month: invalid month name 'MON'"},
      {"0 0 12 ? * JAN", "day-of-week: invalid day-of-week name 'JAN'"},
      {"0 0 MON * * ?", "hours: unexpected 'M' in 'MON'"},
      {"0 0 12 ? * 2-FRI", "day-of-week: a range must join two numbers or two names"},
  });
}

TEST(CronParse, SpecialCharactersOnlyWhereTheyMeanSomething) {
  expect_refusals({
      {"0 0 5L * * ?", "hours: 'L' is allowed only in day-of-month and day-of-week"},
      {"0 0 L * * ?", "hours: unexpected 'L' in 'L'"},
      {"0 0 12W * * ?", "hours: 'W' is allowed only in day-of-month"},
      {"0 0 12 ? * 5W", "day-of-week: 'W' is allowed only in day-of-month"},
      {"0 0 12# * * ?", "hours: '#' is allowed only in day-of-week"},
      {"0 0 12 5#2 * ?", "day-of-month: '#' is allowed only in day-of-week"},
      {"0 0 12 5L * ?",
       "day-of-month: 'L' must stand alone in day-of-month (L, L-n, LW or L-nW), not in '5L'"},
      {"0 0 12 5-10W * ?", "day-of-month: 'W' must follow a single value ('5-10W')"},
  });
}

TEST(CronParse, LastDayForms) {
  expect_refusals({
      {"0 0 12 L-31 * ?", "day-of-month: offset 31 from the last day is out of range 0-30"},
      {"0 0 12 L- * ?", "day-of-month: 'L-' must be followed by a number of days"},
      {"0 0 12 LX * ?", "day-of-month: unexpected 'X' in 'LX' (expected L, LW, L-n or L-nW)"},
      {"0 0 12 L,5 * ?", "day-of-month: 'L' cannot be combined with other values"},
      {"0 0 12 5,LW * ?", "day-of-month: 'L' cannot be combined with other values"},
      {"0 0 12 ? * 5L,3", "day-of-week: 'L' cannot be combined with other values"},
      {"0 0 12 ? * L,3", "day-of-week: 'L' cannot be combined with other values"},
      {"0 0 12 ? * 8L", "day-of-week: 8 is out of range 1-7"},
      {"0 0 12 ? * L-3", "day-of-week: 'L' in day-of-week stands alone or follows a day (L, 6L), not 'L-3'"},
  });
}

TEST(CronParse, NearestWeekdayTakesOneDay) {
  expect_refusals({
      {"0 0 12 1W,15 * ?", "day-of-month: 'W' cannot be combined with other values"},
      {"0 0 12 15,1W * ?", "day-of-month: 'W' cannot be combined with other values"},
      {"0 0 12 32W * ?", "day-of-month: 32 is out of range 1-31"},
      {"0 0 12 0W * ?", "day-of-month: 0 is out of range 1-31"},
      {"0 0 12 W * ?", "day-of-month: unexpected 'W' in 'W'"},
  });
}

TEST(CronParse, NthWeekdayTakesOneToFive) {
  expect_refusals({
      {"0 0 12 ? * 2#6", "day-of-week: '#' must be followed by a number 1-5"},
      {"0 0 12 ? * 2#0", "day-of-week: '#' must be followed by a number 1-5"},
      {"0 0 12 ? * 2#", "day-of-week: '#' must be followed by a number 1-5"},
      {"0 0 12 ? * 2#1#2", "day-of-week: '#' must be followed by a number 1-5"},
      {"0 0 12 ? * 9#3", "day-of-week: 9 is out of range 1-7"},
      {"0 0 12 ? * 2#1,3#2", "day-of-week: '#' cannot be combined with other values"},
      {"0 0 12 ? * 6#3,2", "day-of-week: '#' cannot be combined with other values"},
  });
}

TEST(CronParse, YearRangeMayNotWrap) {
  expect_refusals({
      {"0 0 12 * * ? 2030-2020", "year: range 2030-2020 ends before it starts"},
      {"0 0 12 * * ? x", "year: unexpected 'X' in 'X'"},
  });
  EXPECT_EQ(parse_error("0 0 0 * * ? 2030-2030"), "");
}

// Quartz accepts these but ignores part of them; cronwheel refuses rather than guess.
TEST(CronParse, RefusesWhatQuartzWouldSilentlyIgnore) {
  expect_refusals({
      {"0 0 12abc * * ?", "hours: unexpected 'A' in '12ABC'"},
      {"** * * * * ?", "seconds: unexpected '*' in '**'"},
      {"*-5 * * * * ?", "seconds: unexpected '-' in '*-5'"},
      {"0 0 12 ?X * MON", "day-of-month: unexpected '?' in '?X'"},
      {"0 0 12 ? * MON-FRI/2", "day-of-week: a step cannot follow a name ('MON-FRI/2')"},
      {"0 0 12 1 JAN/2 ?", "month: a step cannot follow a name ('JAN/2')"},
      {"0 0 12 5-0 * ?", "day-of-month: 0 is out of range 1-31"},
      {"0 0 12 ? * 3-0", "day-of-week: 0 is out of range 1-7"},
      {"*/0 * * * * ?", "seconds: increment 0 is out of range 1-59"},
      {"0 0 12 1-5-7 * ?", "day-of-month: unexpected '-' in '1-5-7'"},
      {"5/10/3 * * * * ?", "seconds: unexpected '/' in '5/10/3'"},
      {"0 0 12 ,5 * ?", "day-of-month: empty value in list"},
      {"0 0 12 5,,6 * ?", "day-of-month: empty value in list"},
      {"0 0 12 ? * MON-FRIL", "day-of-week: 'L' must follow a single value ('MON-FRIL')"},
  });
}

TEST(CronParse, RefusesNonAsciiAndControlCharacters) {
  expect_refusals({
      {"0 0 12 ? * \xc5\xbf" "UN", "day-of-week: unexpected byte 0xc5 in '??UN'"},
      {"0 0 12\n * * ?", "hours: unexpected byte 0x0a in '12?'"},
  });
}

TEST(CronParse, ErrorCarriesFieldAndReason) {
  try {
    CronExpression::parse("0 0 0 ? * 8");
    FAIL() << "expected a CronError";
  } catch (const CronError& e) {
    EXPECT_EQ(e.field(), "day-of-week");
    EXPECT_EQ(e.reason(), "8 is out of range 1-7");
    EXPECT_STREQ(e.what(), "day-of-week: 8 is out of range 1-7");
    const std::invalid_argument& base = e;  // callers may catch the standard type
    EXPECT_STREQ(base.what(), e.what());
  }
}

TEST(CronParse, UnknownTimeZoneIsATimezoneError) {
  try {
    CronExpression::parse("0 0 12 * * ?", "Mars/Olympus_Mons");
    FAIL() << "expected a CronError";
  } catch (const CronError& e) {
    EXPECT_EQ(e.field(), "timezone");
    EXPECT_STREQ(e.what(), "timezone: unknown time zone 'Mars/Olympus_Mons'");
  }
  EXPECT_EQ(parse_error("0 0 12 * * ?", ""), "timezone: unknown time zone ''");
  EXPECT_EQ(parse_error("0 0 12 * * ?", "../../etc/passwd"),
            "timezone: unknown time zone '../../etc/passwd'");
}

TEST(CronParse, ExpressionErrorsAreReportedBeforeTimeZoneErrors) {
  EXPECT_EQ(parse_error("0 0 24 * * ?", "Nowhere"), "hours: 24 is out of range 0-23");
}

TEST(CronParse, KeepsExpressionAndZoneAsGiven) {
  const auto cron = CronExpression::parse(" 0 15 10 ? * mon-fri ", "America/New_York");
  EXPECT_EQ(cron.expression(), " 0 15 10 ? * mon-fri ");
  EXPECT_EQ(cron.time_zone(), "America/New_York");
}

TEST(CronParse, DefaultsToUtc) {
  const auto cron = CronExpression::parse("0 0 12 * * ?");
  EXPECT_EQ(cron.time_zone(), "UTC");
  EXPECT_EQ(cron.next_after(0), 12 * 3'600'000);
}

TEST(TimeZone, KnowsIanaNames) {
  EXPECT_TRUE(is_valid_time_zone("UTC"));
  EXPECT_TRUE(is_valid_time_zone("America/New_York"));
  EXPECT_TRUE(is_valid_time_zone("Australia/Lord_Howe"));
  EXPECT_TRUE(is_valid_time_zone("Etc/GMT-14"));
  EXPECT_FALSE(is_valid_time_zone(""));
  EXPECT_FALSE(is_valid_time_zone("Europe/Atlantis"));
  EXPECT_FALSE(is_valid_time_zone("GMT+8"));
  EXPECT_FALSE(is_valid_time_zone("utc"));
  // The host's own zone would make admin nodes disagree about fire times.
  EXPECT_FALSE(is_valid_time_zone("localtime"));
}

// Random input, and random edits of valid expressions, either parse or raise a CronError,
// never anything else; and whatever parses can be evaluated without hanging.
TEST(CronParse, RandomInputParsesOrFailsCleanly) {
  std::mt19937 random(12345);
  const std::string alphabet = "0123456789*/-,?LW# \tLWJANFEBMONSUNFRIlw#xyz!\x01\xff";
  const std::vector<std::string> seeds = {
      "0 15 10 ? * 6L", "0 0 12 LW * ?", "*/5 1-10/2 22-2 ? JAN-MAR MON#2 2030",
      "0 0 8 15W * ?", "0 0 0 L-3 * ? */2", "59 59 23 ? * FRI-MON"};
  int parsed = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 50'000; ++i) {
    std::string input;
    if (i % 2 == 0) {
      const int length = static_cast<int>(random() % 40);
      for (int k = 0; k < length; ++k) input += alphabet[random() % alphabet.size()];
    } else {
      input = seeds[random() % seeds.size()];
      for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
        const std::size_t at = random() % (input.size() + 1);
        switch (random() % 3) {
          case 0: input.insert(at, 1, alphabet[random() % alphabet.size()]); break;
          case 1: if (at < input.size()) input.erase(at, 1); break;
          default: if (at < input.size()) input[at] = alphabet[random() % alphabet.size()];
        }
      }
    }
    try {
      const auto cron = CronExpression::parse(input, i % 4 == 1 ? "America/New_York" : "UTC");
      ++parsed;
      (void)cron.next_after(1'767'225'600'000);  // 2026-01-01
    } catch (const CronError&) {
      // refused: fine
    }
  }
  EXPECT_GT(parsed, 1000);  // the edits leave many expressions valid
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

}  // namespace
}  // namespace cronwheel::common
