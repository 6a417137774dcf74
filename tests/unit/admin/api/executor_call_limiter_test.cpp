#include <gtest/gtest.h>

#include <optional>

#include "admin/api/executor_call_limiter.h"
#include "common/http/http_error.h"

namespace cronwheel::admin {
namespace {

TEST(ExecutorCallLimiter, AGroupGetsItsShareThenIsRefusedWithRetryAfter) {
  ExecutorCallLimiter limiter(2);
  auto first = limiter.acquire(7);
  auto second = limiter.acquire(7);
  EXPECT_EQ(limiter.in_flight(7), 2u);
  try {
    limiter.acquire(7);
    FAIL() << "a third call to group 7 went ahead";
  } catch (const common::http::HttpError& e) {
    EXPECT_EQ(e.info().status, 503);
    EXPECT_EQ(e.info().code, "busy");
    EXPECT_EQ(e.info().retry_after_seconds, ExecutorCallLimiter::kRetryAfterSeconds);
    EXPECT_NE(e.info().message.find("group 7"), std::string::npos) << e.info().message;
  }
  EXPECT_EQ(limiter.in_flight(7), 2u) << "a refused call takes no place";
}

TEST(ExecutorCallLimiter, OneGroupsCallsDoNotHoldAnotherGroupBack) {
  ExecutorCallLimiter limiter(1);
  auto slow = limiter.acquire(1);
  EXPECT_THROW(limiter.acquire(1), common::http::HttpError);
  EXPECT_NO_THROW(limiter.acquire(2));
}

TEST(ExecutorCallLimiter, APlaceIsGivenBackWhenItsCallEnds) {
  ExecutorCallLimiter limiter(1);
  {
    auto call = limiter.acquire(3);
    auto moved = std::move(call);  // a moved-from permit gives nothing back twice
    EXPECT_EQ(limiter.in_flight(3), 1u);
  }
  EXPECT_EQ(limiter.in_flight(3), 0u);
  EXPECT_NO_THROW(limiter.acquire(3));
}

}  // namespace
}  // namespace cronwheel::admin
