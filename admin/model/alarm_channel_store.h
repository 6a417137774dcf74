#pragma once

// Port: the alarm channels (docs/alarms.md), where the alarms of chosen groups and jobs go
// besides each job's own alarmEmail addresses. Admins manage them through the REST API; the
// alarm service reads them with each claim (AlarmClaim::channels). Implemented by PgAlarmStore
// (admin/pg/pg_alarm_store.h), faked by tests/support/fake_alarm_store.h; both pass
// tests/support/alarm_contract_tests.h. Thread-safe; each method is one short transaction,
// and a change writes its audit entry in it (entity "alarm_channel"; the secret never appears
// in the audit).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/records.h"
#include "admin/model/store_errors.h"

namespace cronwheel::admin {

enum class AlarmChannelKind { kEmail, kWebhook };

std::string_view to_string(AlarmChannelKind kind) noexcept;                   // "email", "webhook"
std::optional<AlarmChannelKind> parse_alarm_channel_kind(std::string_view text) noexcept;

struct AlarmChannel {
  std::int64_t id = 0;
  std::string name;  // unique
  AlarmChannelKind kind = AlarmChannelKind::kWebhook;
  // kEmail: the addresses, comma-separated (as Job::alarm_email); kWebhook: the http(s) URL.
  std::string target;
  // kWebhook: the key of the X-Cronwheel-Signature HMAC; empty for kEmail. Never answered by
  // the API after the channel's creation.
  std::string secret;
  // The channel takes the alarms of every job of these groups and of these jobs. Reads give
  // the ids that still exist, ascending.
  std::vector<std::int64_t> groups;
  std::vector<std::int64_t> jobs;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;

  friend bool operator==(const AlarmChannel&, const AlarmChannel&) = default;
};

class AlarmChannelStore {
 public:
  virtual ~AlarmChannelStore() = default;

  virtual std::vector<AlarmChannel> list_channels() = 0;  // by id
  virtual std::optional<AlarmChannel> get_channel(std::int64_t id) = 0;
  // Creates it (id and times assigned). Throws Conflict("...", "name") for a taken name,
  // Conflict("...", "groups") / ("...", "jobs") for an id that does not exist. Audited as
  // "alarm_channel.create".
  virtual AlarmChannel create_channel(const AlarmChannel& channel, const Actor& actor) = 0;
  // Replaces name, kind, target, secret, groups and jobs; the same conflicts as create; NotFound
  // when it does not exist. Audited as "alarm_channel.update".
  virtual AlarmChannel update_channel(const AlarmChannel& channel, const Actor& actor) = 0;
  // NotFound when it does not exist. Audited as "alarm_channel.delete".
  virtual void remove_channel(std::int64_t id, const Actor& actor) = 0;
};

}  // namespace cronwheel::admin
