#include "admin/model/fire_state.h"

#include <array>
#include <ostream>
#include <utility>

namespace cronwheel::admin {
namespace {

constexpr std::array<std::pair<FireState, std::string_view>, 7> kStates{{
    {FireState::kPending, "pending"},
    {FireState::kSending, "sending"},
    {FireState::kTriggered, "triggered"},
    {FireState::kSucceeded, "succeeded"},
    {FireState::kFailed, "failed"},
    {FireState::kLost, "lost"},
    {FireState::kCancelled, "cancelled"},
}};

constexpr std::array<std::pair<TriggerType, std::string_view>, 8> kTriggerTypes{{
    {TriggerType::kSchedule, "SCHEDULE"},
    {TriggerType::kMisfire, "MISFIRE"},
    {TriggerType::kManual, "MANUAL"},
    {TriggerType::kParent, "PARENT"},
    {TriggerType::kRetry, "RETRY"},
    {TriggerType::kApi, "API"},
    {TriggerType::kWorkflow, "WORKFLOW"},
    {TriggerType::kBackfill, "BACKFILL"},
}};

template <class E, std::size_t N>
std::string_view name_in(const std::array<std::pair<E, std::string_view>, N>& table, E value) noexcept {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";  // only reachable by casting an out-of-range integer to E
}

template <class E, std::size_t N>
std::optional<E> value_in(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text) noexcept {
  for (const auto& [v, name] : table) {
    if (name == text) return v;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(FireState state) noexcept { return name_in(kStates, state); }
std::string_view to_string(TriggerType type) noexcept { return name_in(kTriggerTypes, type); }

std::optional<FireState> parse_fire_state(std::string_view text) noexcept { return value_in(kStates, text); }
std::optional<TriggerType> parse_trigger_type(std::string_view text) noexcept { return value_in(kTriggerTypes, text); }

bool is_finished(FireState state) noexcept {
  return state == FireState::kSucceeded || state == FireState::kFailed || state == FireState::kLost;
}

std::ostream& operator<<(std::ostream& out, FireState state) { return out << to_string(state); }
std::ostream& operator<<(std::ostream& out, TriggerType type) { return out << to_string(type); }

}  // namespace cronwheel::admin
