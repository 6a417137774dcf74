#pragma once

#include <cstdint>

namespace cronwheel::util {

// Integer division rounding toward negative infinity, and the remainder that goes with it
// (always of b's sign): what calendar and clock arithmetic needs for times before an epoch or
// slot boundary, where C++'s / and % round toward zero.
constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

constexpr std::int64_t floor_mod(std::int64_t a, std::int64_t b) { return a - floor_div(a, b) * b; }

static_assert(floor_div(-1, 1000) == -1 && floor_mod(-1, 1000) == 999);
static_assert(floor_div(1999, 1000) == 1 && floor_mod(1999, 1000) == 999);
static_assert(floor_div(-2000, 1000) == -2 && floor_mod(-2000, 1000) == 0);

}  // namespace cronwheel::util
