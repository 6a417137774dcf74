#include "cli/xxl_job/xxl_job_mapping.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <date/tz.h>

#include "common/cron/cron_error.h"
#include "common/cron/cron_expression.h"
#include "common/protocol/job_enums.h"

namespace cronwheel::cli::xxl_job {

namespace {

namespace protocol = common::protocol;
using Kind = Finding::Kind;

constexpr std::size_t kMaxGlueSourceBytes = 1024 * 1024;     // the admin's limit
constexpr std::size_t kMaxExecutorParamBytes = 64 * 1024;    // the admin's limit
constexpr std::int64_t kMaxFailRetryCount = 100;             // the admin's limit
constexpr std::int64_t kMaxFixedSeconds = 10LL * 365 * 24 * 3600;
constexpr std::size_t kMaxUsernameBytes = 64;

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

// Comma-separated items, trimmed, blanks dropped.
std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string_view::npos ? text.size() : comma;
    if (auto item = trimmed(text.substr(start, end - start)); !item.empty()) items.push_back(std::move(item));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

std::optional<std::int64_t> parse_id(std::string_view text) {
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

// Quotes a value from the database for a finding: at most 60 bytes, cut on a character
// boundary, control characters as '?', so a finding stays one line.
std::string shown(std::string_view value) {
  constexpr std::size_t kMax = 60;
  std::string out = "'";
  std::size_t end = std::min(value.size(), kMax);
  while (end < value.size() && end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
  for (std::size_t i = 0; i < end; ++i) out += static_cast<unsigned char>(value[i]) < 0x20 ? '?' : value[i];
  if (end < value.size()) out += "...";
  return out + "'";
}

bool valid_app_name(std::string_view name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  };
  return name.size() >= 4 && name.size() <= 64 && allowed(name[0]) && name[0] != '.' && name[0] != '_' &&
         name[0] != '-' && std::all_of(name.begin(), name.end(), allowed);
}

bool valid_username(std::string_view name) {
  return !name.empty() && name.size() <= kMaxUsernameBytes && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '@' || c == '-';
  });
}

// "YYYY-MM-DD HH:MM:SS" (MySQL's DATETIME text) read as a wall time in `zone`, as epoch ms. A
// wall time that occurs twice is its first occurrence; one in a gap is moved past the gap.
std::optional<std::int64_t> epoch_ms(std::string_view text, const date::time_zone* zone) {
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  auto number = [&](std::size_t at, std::size_t length) -> std::optional<int> {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + length, value);
    if (ec != std::errc() || end != text.data() + at + length) return std::nullopt;
    return value;
  };
  auto year = number(0, 4), month = number(5, 2), day = number(8, 2);
  auto hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || *hour > 23 || *minute > 59 || *second > 59) {
    return std::nullopt;
  }
  const date::year_month_day ymd{date::year{*year}, date::month{static_cast<unsigned>(*month)},
                                 date::day{static_cast<unsigned>(*day)}};
  if (!ymd.ok() || *year < 1970) return std::nullopt;
  const auto local = date::local_days{ymd} + std::chrono::hours{*hour} + std::chrono::minutes{*minute} +
                     std::chrono::seconds{*second};
  const auto info = zone->get_info(local);
  std::chrono::sys_seconds utc;
  switch (info.result) {
    case date::local_info::unique:
    case date::local_info::ambiguous:
      utc = std::chrono::sys_seconds{local.time_since_epoch()} - info.first.offset;
      break;
    case date::local_info::nonexistent:
      utc = info.second.begin;
      break;
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(utc.time_since_epoch()).count();
}

// The slug of a description: ASCII letters lower-cased and digits; runs of anything else one
// '-'; none at either end; at most max_chars.
std::string slug(std::string_view text, std::size_t max_chars) {
  std::string out;
  bool dash = false;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += c;
      if (out.size() >= max_chars) break;
    } else {
      dash = true;
    }
  }
  if (out.size() > max_chars) out.resize(max_chars);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

template <class E>
bool known(std::string_view value) {
  return protocol::parse_enum<E>(value).has_value();
}

struct JobPlan {
  const JobRow* row = nullptr;
  std::string app_name;
  std::string name;
  std::string subject;
  nlohmann::json json;
  bool review = false;
  std::vector<std::int64_t> children;  // ids of imported jobs, as listed (deduplicated)
};

class Mapper {
 public:
  Mapper(const XxlJobTables& tables, const MappingOptions& options, const date::time_zone* zone)
      : tables_(tables), options_(options), zone_(zone) {}

  MappingResult run() {
    map_groups();
    map_jobs();
    map_children();
    add_jobs_to_groups();
    map_users();
    add_closing_notes();

    MappingResult result;
    result.document = nlohmann::json::object();
    result.document["apiVersion"] = "cronwheel/v1";
    result.document["groups"] = nlohmann::json::array();
    for (auto& group : group_order_) result.document["groups"].push_back(std::move(groups_[group]));
    if (!users_.empty()) result.document["users"] = std::move(users_);
    result.findings = std::move(findings_);
    return result;
  }

 private:
  void add(Kind kind, std::string subject, std::string message) {
    findings_.push_back(Finding{kind, std::move(subject), std::move(message)});
  }

  void review(JobPlan& job, std::string message) {
    job.review = true;
    add(Kind::kReview, job.subject, std::move(message) + "; imported stopped");
  }

  void map_groups() {
    std::vector<const GroupRow*> rows;
    for (const auto& row : tables_.groups) rows.push_back(&row);
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->id < b->id; });
    for (const GroupRow* row : rows) {
      const std::string subject = "group " + std::to_string(row->id) + " " + shown(row->app_name);
      if (!valid_app_name(row->app_name)) {
        add(Kind::kNotImported, subject,
            "cronwheel app names are 4-64 letters, digits, '.', '_' or '-', starting with a letter or digit; "
            "rename the app (XXL-JOB's executor and xxl.job.executor.appname) and import again");
        continue;
      }
      if (auto it = groups_.find(row->app_name); it != groups_.end()) {
        group_of_id_[row->id] = row->app_name;
        add(Kind::kNote, subject, "shares its app name with group " + std::to_string(first_group_id_[row->app_name]) +
                                      ": their jobs are imported into one group, with that group's title and addresses");
        continue;
      }
      nlohmann::json group = nlohmann::json::object();
      group["appName"] = row->app_name;
      if (!trimmed(row->title).empty()) group["title"] = trimmed(row->title);
      if (row->address_type == 1) {
        group["addressType"] = "manual";
        group["addressList"] = split_list(row->address_list);
        if (group["addressList"].empty()) add(Kind::kNote, subject, "a manual group with no address: no run can start");
      } else {
        group["addressType"] = "automatic";
        if (row->address_type != 0) {
          add(Kind::kNote, subject, "unknown address_type " + std::to_string(row->address_type) + ": imported as automatic");
        }
      }
      group["jobs"] = nlohmann::json::object();
      groups_[row->app_name] = std::move(group);
      group_order_.push_back(row->app_name);
      group_of_id_[row->id] = row->app_name;
      first_group_id_[row->app_name] = row->id;
    }
  }

  void map_jobs() {
    std::map<std::int64_t, std::vector<const GlueVersionRow*>> versions;
    for (const auto& version : tables_.glue_versions) versions[version.job_id].push_back(&version);

    std::vector<const JobRow*> rows;
    for (const auto& row : tables_.jobs) rows.push_back(&row);
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->id < b->id; });
    for (const JobRow* row : rows) {
      if (plans_.contains(row->id)) continue;  // a duplicate id: the table's primary key forbids it
      const auto group = group_of_id_.find(row->job_group);
      const std::string name = job_name(row->job_desc, row->id);
      if (group == group_of_id_.end()) {
        const bool exists = std::any_of(tables_.groups.begin(), tables_.groups.end(),
                                        [&](const GroupRow& g) { return g.id == row->job_group; });
        add(Kind::kNotImported, "job " + std::to_string(row->id) + " " + shown(row->job_desc),
            exists ? "its group " + std::to_string(row->job_group) + " is not imported"
                   : "its group " + std::to_string(row->job_group) + " does not exist");
        not_imported_.insert(row->id);
        continue;
      }
      JobPlan job;
      job.row = row;
      job.app_name = group->second;
      job.name = name;
      job.subject = "job " + std::to_string(row->id) + " (" + job.app_name + "/" + name + ")";
      if (!map_job(job, versions[row->id])) {
        not_imported_.insert(row->id);
        continue;
      }
      plans_.emplace(row->id, std::move(job));
      plan_order_.push_back(row->id);
    }
  }

  // False when the job is not imported (its finding added).
  bool map_job(JobPlan& job, std::vector<const GlueVersionRow*>& versions) {
    const JobRow& row = *job.row;
    if (row.glue_source.size() > kMaxGlueSourceBytes) {
      add(Kind::kNotImported, job.subject, "its script is " + std::to_string(row.glue_source.size()) +
                                               " bytes; cronwheel takes at most 1 MiB");
      return false;
    }
    if (row.executor_param.size() > kMaxExecutorParamBytes) {
      add(Kind::kNotImported, job.subject, "its executor_param is " + std::to_string(row.executor_param.size()) +
                                               " bytes; cronwheel takes at most 64 KiB");
      return false;
    }
    auto& json = job.json;
    json = nlohmann::json::object();
    std::string desc = trimmed(row.job_desc);
    if (desc.empty()) {
      desc = "XXL-JOB job " + std::to_string(row.id);
      review(job, "empty job_desc: described as " + shown(desc));
    }
    json["jobDesc"] = desc;
    if (!trimmed(row.author).empty()) json["author"] = trimmed(row.author);
    if (!trimmed(row.alarm_email).empty()) json["alarmEmail"] = trimmed(row.alarm_email);

    map_schedule(job);
    map_enum<protocol::MisfireStrategy>(job, "misfireStrategy", "misfire_strategy", row.misfire_strategy, "DO_NOTHING");
    map_enum<protocol::RouteStrategy>(job, "executorRouteStrategy", "executor_route_strategy",
                                      row.executor_route_strategy, "FIRST");
    if (!trimmed(row.executor_handler).empty()) json["executorHandler"] = trimmed(row.executor_handler);
    if (!row.executor_param.empty()) json["executorParam"] = row.executor_param;
    if (trimmed(row.executor_block_strategy).empty()) {
      json["executorBlockStrategy"] = "SERIAL_EXECUTION";
    } else {
      map_enum<protocol::BlockStrategy>(job, "executorBlockStrategy", "executor_block_strategy",
                                        row.executor_block_strategy, "SERIAL_EXECUTION");
    }
    json["executorTimeout"] = clamped(job, "executor_timeout", row.executor_timeout, 0, INT32_MAX);
    json["executorFailRetryCount"] =
        clamped(job, "executor_fail_retry_count", row.executor_fail_retry_count, 0, kMaxFailRetryCount);

    map_enum<protocol::GlueType>(job, "glueType", "glue_type", row.glue_type, "BEAN");
    const std::string glue_type = json["glueType"];
    if (glue_type == "GLUE_GROOVY") {
      review(job, "GLUE_GROOVY runs on Java executors (xxl-job-core) only; cronwheel's executor refuses it: "
                  "start it only where its group's executors are Java ones");
    }
    if (!row.glue_source.empty()) json["glueSource"] = row.glue_source;
    if (!trimmed(row.glue_remark).empty()) json["glueRemark"] = trimmed(row.glue_remark);
    map_history(job, versions, glue_type);
    return true;
  }

  void map_schedule(JobPlan& job) {
    const JobRow& row = *job.row;
    auto& json = job.json;
    const std::string type = trimmed(row.schedule_type);
    const std::string conf = trimmed(row.schedule_conf);
    json["scheduleType"] = "NONE";
    auto parsed = protocol::parse_enum<protocol::ScheduleType>(type);
    if (!parsed) {
      review(job, "unknown schedule_type " + shown(type) + " (schedule_conf " + shown(conf) +
                      "): imported with scheduleType NONE");
      return;
    }
    switch (*parsed) {
      case protocol::ScheduleType::kNone:
        return;
      case protocol::ScheduleType::kCron:
        try {
          common::CronExpression::parse(conf, options_.zone);
        } catch (const std::exception& error) {
          review(job, "cron " + shown(conf) + " is refused (" + error.what() + "): imported with scheduleType NONE");
          return;
        }
        json["scheduleType"] = type;
        json["scheduleConf"] = conf;
        json["timezone"] = options_.zone;
        return;
      case protocol::ScheduleType::kFixRate:
      case protocol::ScheduleType::kFixDelay: {
        auto seconds = parse_id(conf);
        if (!seconds || *seconds > kMaxFixedSeconds) {
          review(job, type + " " + shown(conf) + " is not a whole number of seconds from 1 to " +
                          std::to_string(kMaxFixedSeconds) + ": imported with scheduleType NONE");
          return;
        }
        json["scheduleType"] = type;
        json["scheduleConf"] = conf;
        return;
      }
    }
  }

  template <class E>
  void map_enum(JobPlan& job, const char* key, const char* column, const std::string& value, const char* fallback) {
    const std::string text = trimmed(value);
    if (known<E>(text)) {
      job.json[key] = text;
      return;
    }
    job.json[key] = fallback;
    review(job, std::string("unknown ") + column + " " + shown(text) + ": imported as " + fallback);
  }

  std::int64_t clamped(JobPlan& job, const char* column, std::int64_t value, std::int64_t low, std::int64_t high) {
    const std::int64_t result = std::clamp(value, low, high);
    if (result != value) {
      review(job, std::string(column) + " " + std::to_string(value) + " is out of cronwheel's range " +
                      std::to_string(low) + "-" + std::to_string(high) + ": imported as " + std::to_string(result));
    }
    return result;
  }

  void map_history(JobPlan& job, std::vector<const GlueVersionRow*>& versions, const std::string& glue_type) {
    std::vector<std::pair<std::int64_t, const GlueVersionRow*>> kept;  // (createdAt, row)
    for (const GlueVersionRow* version : versions) {
      const std::string subject = job.subject + " script version " + std::to_string(version->id);
      if (trimmed(version->glue_type) != glue_type) {
        add(Kind::kNotImported, subject,
            "saved as " + shown(trimmed(version->glue_type)) + " while the job is " + glue_type +
                ": the history keeps versions of the job's current type only");
        continue;
      }
      if (version->glue_source.size() > kMaxGlueSourceBytes) {
        add(Kind::kNotImported, subject, "its script is longer than 1 MiB");
        continue;
      }
      auto created = epoch_ms(version->add_time, zone_);
      if (!created) {
        add(Kind::kNote, subject, "add_time " + shown(version->add_time) + " is not a date and time: dated 0");
      }
      kept.emplace_back(created.value_or(0), version);
    }
    std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second->id < b.second->id;
    });
    if (!kept.empty() && kept.back().second->glue_source == job.row->glue_source &&
        trimmed(kept.back().second->glue_remark) == trimmed(job.row->glue_remark)) {
      kept.pop_back();  // the current version, which glueSource and glueRemark already hold
    }
    if (kept.empty()) return;
    auto history = nlohmann::json::array();
    for (const auto& [created, version] : kept) {
      history.push_back({{"glueSource", version->glue_source},
                         {"glueRemark", trimmed(version->glue_remark)},
                         {"createdAt", created}});
    }
    job.json["glueHistory"] = std::move(history);
  }

  void map_children() {
    for (std::int64_t id : plan_order_) {
      JobPlan& job = plans_.at(id);
      std::set<std::int64_t> seen;
      for (const std::string& item : split_list(job.row->child_jobid)) {
        auto child = parse_id(item);
        if (!child) {
          add(Kind::kNote, job.subject, "child_jobid item " + shown(item) + " is not a job id: left out");
          continue;
        }
        if (!seen.insert(*child).second) continue;  // listed twice: XXL-JOB fires it twice; cronwheel lists it once
        if (plans_.contains(*child)) {
          job.children.push_back(*child);
        } else if (not_imported_.contains(*child)) {
          review(job, "child job " + std::to_string(*child) + " is not imported: left out of childJobs");
        } else {
          add(Kind::kNote, job.subject, "child job " + std::to_string(*child) + " does not exist: left out");
        }
      }
    }
    drop_cycle_edges();
    for (std::int64_t id : plan_order_) {
      JobPlan& job = plans_.at(id);
      if (job.children.empty()) continue;
      auto children = nlohmann::json::array();
      for (std::int64_t child_id : job.children) {
        const JobPlan& child = plans_.at(child_id);
        children.push_back(child.app_name == job.app_name ? child.name : child.app_name + "/" + child.name);
      }
      job.json["childJobs"] = std::move(children);
    }
  }

  // Depth-first from each job in id order, children in their listed order; an edge to a job on
  // the current path closes a cycle and is dropped. Iterative: chains may be long.
  void drop_cycle_edges() {
    enum class Color { kWhite, kGray, kBlack };
    std::map<std::int64_t, Color> color;
    for (std::int64_t id : plan_order_) color[id] = Color::kWhite;
    for (std::int64_t root : plan_order_) {
      if (color[root] != Color::kWhite) continue;
      std::vector<std::pair<std::int64_t, std::size_t>> stack{{root, 0}};  // (job, next child index)
      color[root] = Color::kGray;
      while (!stack.empty()) {
        auto& [id, next] = stack.back();
        JobPlan& job = plans_.at(id);
        if (next >= job.children.size()) {
          color[id] = Color::kBlack;
          stack.pop_back();
          continue;
        }
        const std::int64_t child = job.children[next];
        if (color[child] == Color::kGray) {
          std::vector<std::string> path;
          bool on = false;
          for (const auto& [path_id, unused] : stack) {
            if (path_id == child) on = true;
            if (on) path.push_back(plans_.at(path_id).name);
          }
          path.push_back(plans_.at(child).name);
          // A long cycle is shown by its ends, so the finding stays a line.
          constexpr std::size_t kShown = 8;
          std::string cycle;
          for (std::size_t i = 0; i < path.size(); ++i) {
            if (path.size() > kShown && i == kShown / 2) {
              cycle += "... (" + std::to_string(path.size() - kShown) + " more) -> ";
              i = path.size() - kShown / 2;
            }
            cycle += path[i] + (i + 1 < path.size() ? " -> " : "");
          }
          job.children.erase(job.children.begin() + static_cast<std::ptrdiff_t>(next));
          review(job, "child job " + std::to_string(child) + " closes a cycle (" + cycle +
                          "), which cronwheel refuses: left out of childJobs");
          continue;
        }
        ++next;
        if (color[child] == Color::kWhite) {
          color[child] = Color::kGray;
          stack.emplace_back(child, 0);
        }
      }
    }
  }

  void add_jobs_to_groups() {
    for (std::int64_t id : plan_order_) {
      JobPlan& job = plans_.at(id);
      job.json["running"] = options_.keep_running && job.row->trigger_status == 1 && !job.review;
      if (job.row->trigger_status == 1) ++running_in_xxl_job_;
      groups_[job.app_name]["jobs"][job.name] = std::move(job.json);
    }
  }

  void map_users() {
    users_ = nlohmann::json::array();
    std::vector<const UserRow*> rows;
    for (const auto& row : tables_.users) rows.push_back(&row);
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->id < b->id; });
    std::set<std::string> names;
    for (const UserRow* row : rows) {
      const std::string subject = "user " + std::to_string(row->id) + " " + shown(row->username);
      if (!valid_username(row->username)) {
        add(Kind::kNotImported, subject, "cronwheel user names are 1-64 letters, digits, '.', '_', '@' or '-'");
        continue;
      }
      if (!names.insert(row->username).second) continue;  // the table's unique key forbids it
      nlohmann::json user = {{"username", row->username}};
      if (row->role == 1) {
        user["role"] = "admin";
      } else {
        user["role"] = "normal";
        if (row->role != 0) {
          add(Kind::kReview, subject, "unknown role " + std::to_string(row->role) + ": imported as a normal user");
        }
        auto groups = nlohmann::json::array();
        std::set<std::string> seen;
        for (const std::string& item : split_list(row->permission)) {
          auto id = parse_id(item);
          auto group = id ? group_of_id_.find(*id) : group_of_id_.end();
          if (group == group_of_id_.end()) {
            const bool exists = id && std::any_of(tables_.groups.begin(), tables_.groups.end(),
                                                  [&](const GroupRow& g) { return g.id == *id; });
            add(Kind::kReview, subject,
                "permission " + shown(item) + (exists ? " names a group that is not imported" : " is no group") +
                    ": left out of its groups");
            continue;
          }
          if (seen.insert(group->second).second) groups.push_back(group->second);
        }
        user["groups"] = std::move(groups);
      }
      users_.push_back(std::move(user));
    }
  }

  void add_closing_notes() {
    if (!users_.empty()) {
      add(Kind::kNote, "users",
          std::to_string(users_.size()) +
              " users are created without passwords (XXL-JOB keeps unsalted MD5 digests, which cronwheel does not "
              "take): they cannot log in until an admin sets one (Users -> Edit); existing users keep theirs");
    }
    if (!options_.keep_running && running_in_xxl_job_ > 0) {
      add(Kind::kNote, "jobs",
          std::to_string(running_in_xxl_job_) +
              " jobs running in XXL-JOB are imported stopped, so that the two schedulers never both fire them: "
              "start them once XXL-JOB's are stopped (or import with --keep-running)");
    }
    if (!group_order_.empty()) {
      add(Kind::kNote, "groups",
          "executor access tokens are not in the document: give XXL-JOB's one token (the executors' "
          "xxl.job.accessToken) to the admin as --access-token, or set each group's own in the console or with "
          "PUT /api/v1/groups/{id}");
    }
  }

  const XxlJobTables& tables_;
  const MappingOptions& options_;
  const date::time_zone* zone_;
  std::vector<Finding> findings_;
  std::map<std::string, nlohmann::json> groups_;  // by app name
  std::vector<std::string> group_order_;
  std::map<std::int64_t, std::string> group_of_id_;  // imported groups' ids to app names
  std::map<std::string, std::int64_t> first_group_id_;
  std::map<std::int64_t, JobPlan> plans_;  // imported jobs by id
  std::vector<std::int64_t> plan_order_;
  std::set<std::int64_t> not_imported_;
  std::int64_t running_in_xxl_job_ = 0;
  nlohmann::json users_;
};

}  // namespace

std::string to_string(const Finding& finding) {
  const char* kind = finding.kind == Kind::kNotImported ? "not imported"
                     : finding.kind == Kind::kReview    ? "review"
                                                        : "note";
  return std::string(kind) + ": " + finding.subject + ": " + finding.message;
}

std::string job_name(const std::string& job_desc, std::int64_t id) {
  const std::string suffix = "-" + std::to_string(id);
  std::string base = slug(job_desc, kMaxJobNameChars - suffix.size());
  if (base.empty()) base = "job";
  return base + suffix;
}

MappingResult map_xxl_job(const XxlJobTables& tables, const MappingOptions& options) {
  if (!common::is_valid_time_zone(options.zone)) {
    throw std::invalid_argument("--zone: unknown time zone '" + options.zone.substr(0, 64) + "' (an IANA name such as Asia/Shanghai)");
  }
  const date::time_zone* zone = date::locate_zone(options.zone);
  return Mapper(tables, options, zone).run();
}

}  // namespace cronwheel::cli::xxl_job
