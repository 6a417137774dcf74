#include "common/cron/zone_rules.h"

#include <date/tz.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/cron/cron_error.h"
#include "common/cron/cron_fields.h"
#include "common/cron/posix_tz_rule.h"

namespace cronwheel::common::cron_detail {
namespace {

// Where Debian's tzdata (and so date/tz built with USE_OS_TZDB) keeps the TZif files.
constexpr const char* kZoneInfoDir = "/usr/share/zoneinfo";

// The table starts here; earlier instants take the offset in force at this time. Evaluation
// never starts before 1900 (see next_fire_time.h).
constexpr std::int64_t kTableStartSeconds = -2'240'524'800;  // 1899-01-01T00:00:00Z

std::int64_t to_ms(date::sys_seconds t) { return t.time_since_epoch().count() * 1000; }

// The POSIX TZ string a version 2+ TZif file ends with ("EST5EDT,M3.2.0,M11.1.0"): the rule
// for every instant after the file's last explicit transition. Empty when there is none.
std::string read_posix_footer(const std::string& zone_name) {
  std::ifstream in(std::string(kZoneInfoDir) + "/" + zone_name, std::ios::binary);
  if (!in) return {};
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (content.size() < 6 || content.compare(0, 4, "TZif") != 0 || content[4] < '2' ||
      content.back() != '\n') {
    return {};
  }
  const std::size_t start = content.rfind('\n', content.size() - 2);
  if (start == std::string::npos) return {};
  std::string footer = content.substr(start + 1, content.size() - start - 2);
  for (char c : footer) {
    if (c < 0x20 || c > 0x7e) return {};
  }
  return footer;
}

std::string printable_zone_name(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (name.size() > 64) out += "...";
  return out;
}

}  // namespace

void ZoneRules::append(std::int64_t utc_ms, std::int64_t offset_ms) {
  if (!transitions_.empty() && transitions_.back().offset_ms == offset_ms) return;
  transitions_.push_back({utc_ms, utc_ms + offset_ms, offset_ms});
}

void ZoneRules::build() {
  const date::time_zone* zone = nullptr;
  try {
    // "localtime" is the host's own setting, not a zone: admin nodes configured differently
    // would compute different fire times for the same job.
    if (name_ != "localtime") zone = date::locate_zone(name_);
  } catch (const std::exception&) {
    // unknown to the tz database
  }
  if (zone == nullptr) throw CronError("timezone", "unknown time zone '" + printable_zone_name(name_) + "'");

  using std::chrono::seconds;
  const date::sys_seconds table_end{
      date::sys_days{date::year{quartz_max_year() + 2} / 1 / 1}.time_since_epoch()};
  // date/tz reports "no further transition" as an end in the far future.
  const date::sys_seconds far_future{date::sys_days{date::year{9999} / 1 / 1}.time_since_epoch()};

  date::sys_info info = zone->get_info(date::sys_seconds{seconds{kTableStartSeconds}});
  transitions_.push_back({std::numeric_limits<std::int64_t>::min(),
                          std::numeric_limits<std::int64_t>::min(), info.offset.count() * 1000});
  while (info.end < table_end) {
    const date::sys_seconds at = info.end;
    info = zone->get_info(at);
    append(to_ms(at), info.offset.count() * 1000);
  }
  if (info.end < far_future) return;  // the explicit transitions reach past the table's end

  // Past the file's last explicit transition: continue with its POSIX rule. A missing or
  // unreadable rule keeps the last explicit offset, as date/tz itself does.
  const std::optional<PosixTzRule> rule = PosixTzRule::parse(read_posix_footer(zone->name()));
  if (!rule) return;
  const std::int64_t from = info.begin.time_since_epoch().count();
  for (const auto& [at, offset] : rule->transitions(from, table_end.time_since_epoch().count())) {
    append(at * 1000, offset * 1000);
  }
}

void ZoneRules::index() {
  const std::int64_t last = transitions_.back().utc_ms;
  const std::size_t buckets =
      last > kBucketBaseMs ? static_cast<std::size_t>((last - kBucketBaseMs) >> kBucketShift) + 1
                           : 1;
  bucket_first_.resize(buckets);
  std::size_t i = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::int64_t start = kBucketBaseMs + (static_cast<std::int64_t>(b) << kBucketShift);
    while (i + 1 < transitions_.size() && transitions_[i + 1].utc_ms <= start) ++i;
    bucket_first_[b] = static_cast<std::uint32_t>(i);
  }
}

std::vector<std::pair<std::int64_t, std::int64_t>> ZoneRules::transitions() const {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  out.reserve(transitions_.size());
  for (const Transition& t : transitions_) out.emplace_back(t.utc_ms, t.offset_ms);
  return out;
}

std::shared_ptr<const ZoneRules> ZoneRules::find(std::string_view name) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const ZoneRules>> cache;
  std::string key(name);
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  // Built outside the lock: the first lookup loads the whole tz database.
  auto rules = std::make_shared<ZoneRules>(key);
  rules->build();
  rules->index();
  std::lock_guard lock(mutex);
  return cache.emplace(std::move(key), std::move(rules)).first->second;
}

}  // namespace cronwheel::common::cron_detail
