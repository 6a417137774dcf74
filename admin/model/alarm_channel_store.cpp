#include "admin/model/alarm_channel_store.h"

namespace cronwheel::admin {

std::string_view to_string(AlarmChannelKind kind) noexcept {
  return kind == AlarmChannelKind::kEmail ? "email" : "webhook";
}

std::optional<AlarmChannelKind> parse_alarm_channel_kind(std::string_view text) noexcept {
  if (text == "email") return AlarmChannelKind::kEmail;
  if (text == "webhook") return AlarmChannelKind::kWebhook;
  return std::nullopt;
}

}  // namespace cronwheel::admin
