// CronExpression::next_after cost per call, for the expressions a scheduler typically runs,
// in UTC and in a daylight-saving zone. Each iteration asks for the next fire time after a
// different instant (1024 instants spread over 2026-2027, fixed seed), so the numbers include
// the day/month/year steps a real search takes, not only the easy "same minute" case.
//
//   cmake --build build --target cron_bench && build/bin/cron_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "common/cron/cron_expression.h"

namespace {

using cronwheel::common::CronExpression;

const std::vector<std::int64_t>& start_instants() {
  static const std::vector<std::int64_t> instants = [] {
    std::mt19937_64 random(20261122);
    std::uniform_int_distribution<std::int64_t> in_range(1'767'225'600'000,   // 2026-01-01
                                                         1'830'297'600'000);  // 2028-01-01
    std::vector<std::int64_t> out(1024);
    for (auto& t : out) t = in_range(random);
    return out;
  }();
  return instants;
}

void BM_NextAfter(benchmark::State& state, const char* expression, const char* zone) {
  const CronExpression cron = CronExpression::parse(expression, zone);
  const std::vector<std::int64_t>& instants = start_instants();
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cron.next_after(instants[i]));
    i = (i + 1) & (instants.size() - 1);
  }
}

// The scheduler's own pattern: each call starts from the previous fire time.
void BM_NextAfterChained(benchmark::State& state, const char* expression, const char* zone) {
  const CronExpression cron = CronExpression::parse(expression, zone);
  const std::int64_t first = start_instants()[0];
  std::int64_t t = first;
  for (auto _ : state) {
    const auto next = cron.next_after(t);
    t = next ? *next : first;
    benchmark::DoNotOptimize(t);
  }
}

void BM_Parse(benchmark::State& state, const char* expression, const char* zone) {
  for (auto _ : state) benchmark::DoNotOptimize(CronExpression::parse(expression, zone));
}

#define CRON_BENCH(name, expression)                                                      \
  BENCHMARK_CAPTURE(BM_NextAfter, name##_utc, expression, "UTC");                         \
  BENCHMARK_CAPTURE(BM_NextAfter, name##_new_york, expression, "America/New_York");       \
  BENCHMARK_CAPTURE(BM_NextAfterChained, name##_utc, expression, "UTC");                  \
  BENCHMARK_CAPTURE(BM_NextAfterChained, name##_new_york, expression, "America/New_York")

CRON_BENCH(every_5_minutes, "0 */5 * * * ?");
CRON_BENCH(daily_0200, "0 0 2 * * ?");
CRON_BENCH(weekdays_1015, "0 15 10 ? * MON-FRI");
CRON_BENCH(last_day_of_month_1200, "0 0 12 L * ?");
CRON_BENCH(every_10_seconds, "*/10 * * * * ?");
CRON_BENCH(new_year_2030, "0 0 0 1 1 ? 2030");
CRON_BENCH(last_friday_1015, "0 15 10 ? * 6L");

BENCHMARK_CAPTURE(BM_Parse, weekdays_1015_new_york, "0 15 10 ? * MON-FRI", "America/New_York");

}  // namespace
