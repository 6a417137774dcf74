#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace cronwheel {
namespace {

using testing::Process;

const std::string kAdmin = std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-admin";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The example: the last Friday of each month at 10:15 in New York, across the
// November change from EDT to EST. Expected values are Quartz 2.3.2's.
TEST(AdminCronNext, PrintsLastFridayOfMonthInNewYork) {
  auto r = Process::run({kAdmin, "cron", "next", "0 15 10 ? * 6L", "--tz", "America/New_York",
                         "--from", "1793000000000", "--count", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{
                              "1793369700000 2026-10-30T10:15:00-04:00",
                              "1795792500000 2026-11-27T10:15:00-05:00",
                              "1798211700000 2026-12-25T10:15:00-05:00",
                              "1801235700000 2027-01-29T10:15:00-05:00",
                              "1803654900000 2027-02-26T10:15:00-05:00",
                          }));
}

TEST(AdminCronNext, DefaultsToUtcAndNow) {
  auto r = Process::run({kAdmin, "cron", "next", "*/10 * * * * ?", "--count", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto out = lines(r.out);
  ASSERT_EQ(out.size(), 3u);
  for (const auto& line : out) {
    EXPECT_NE(line.find("+00:00"), std::string::npos) << line;
    auto ms = std::stoll(line.substr(0, line.find(' ')));
    EXPECT_EQ(ms % 10000, 0) << line;
  }
}

TEST(AdminCronNext, InvalidExpressionExitsTwoWithTheFieldAndReason) {
  auto r = Process::run({kAdmin, "cron", "next", "0 0 12 ? * 8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  auto err = lines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_NE(err[0].find("day-of-week"), std::string::npos) << r.err;
  EXPECT_NE(err[0].find("8"), std::string::npos) << r.err;
}

TEST(AdminCronNext, UnknownTimeZoneExitsTwo) {
  auto r = Process::run({kAdmin, "cron", "next", "0 0 12 * * ?", "--tz", "Mars/Olympus_Mons"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("Mars/Olympus_Mons"), std::string::npos) << r.err;
}

TEST(AdminCronNext, CountOutOfRangeExitsTwo) {
  auto r = Process::run({kAdmin, "cron", "next", "0 0 12 * * ?", "--count", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("count"), std::string::npos) << r.err;
}

TEST(AdminCronNext, MalformedFlagValueExitsTwo) {
  auto r = Process::run({kAdmin, "cron", "next", "0 0 12 * * ?", "--from", "yesterday"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--from"), std::string::npos) << r.err;
}

TEST(AdminCronNext, ExpressionWithNoFutureTimePrintsNothingAndSaysSo) {
  auto r = Process::run({kAdmin, "cron", "next", "0 0 0 1 1 ? 2020", "--from", "1793000000000"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("no fire time"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cronwheel
