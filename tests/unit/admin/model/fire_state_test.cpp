#include <gtest/gtest.h>

#include <sstream>

#include "admin/model/fire_state.h"

namespace cronwheel::admin {
namespace {

TEST(FireState, EveryStateRoundTripsThroughItsSpelling) {
  for (auto state : {FireState::kPending, FireState::kSending, FireState::kTriggered, FireState::kSucceeded,
                     FireState::kFailed, FireState::kLost, FireState::kCancelled}) {
    EXPECT_EQ(parse_fire_state(to_string(state)), state) << state;
  }
  EXPECT_EQ(to_string(FireState::kSending), "sending");
  EXPECT_EQ(parse_fire_state("Triggered"), std::nullopt);  // spellings are exact, as the schema's CHECK
  EXPECT_EQ(parse_fire_state(""), std::nullopt);
}

TEST(FireState, OnlySucceededFailedAndLostAreFinished) {
  EXPECT_TRUE(is_finished(FireState::kSucceeded));
  EXPECT_TRUE(is_finished(FireState::kFailed));
  EXPECT_TRUE(is_finished(FireState::kLost));
  EXPECT_FALSE(is_finished(FireState::kPending));
  EXPECT_FALSE(is_finished(FireState::kSending));
  EXPECT_FALSE(is_finished(FireState::kTriggered));
  EXPECT_FALSE(is_finished(FireState::kCancelled));  // never ran: no result
}

TEST(TriggerType, EveryTypeRoundTripsThroughItsSpelling) {
  for (auto type : {TriggerType::kSchedule, TriggerType::kMisfire, TriggerType::kManual, TriggerType::kParent,
                    TriggerType::kRetry, TriggerType::kApi, TriggerType::kWorkflow, TriggerType::kBackfill}) {
    EXPECT_EQ(parse_trigger_type(to_string(type)), type) << type;
  }
  EXPECT_EQ(to_string(TriggerType::kApi), "API");
  EXPECT_EQ(to_string(TriggerType::kBackfill), "BACKFILL");
  EXPECT_EQ(parse_trigger_type("CRON"), std::nullopt);
  std::ostringstream out;
  out << TriggerType::kMisfire << ' ' << FireState::kLost;
  EXPECT_EQ(out.str(), "MISFIRE lost");
}

}  // namespace
}  // namespace cronwheel::admin
