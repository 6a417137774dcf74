#pragma once

// In-memory stores with the semantics of the PostgreSQL ones (admin/pg/pg_stores.h), for
// unit tests of admin logic. The same contract suite (tests/support/store_contract_tests.h)
// runs against both, so what a test learns from a fake holds for the real thing:
//  - ids are assigned from 1 per kind of record; times are stamped from the Clock given;
//  - the schema's CHECK, UNIQUE and FOREIGN KEY rules are enforced and reported as Conflict
//    naming the API field, like PgStores does (see pg_stores.h for the list);
//  - every audited change records its AuditEntry (action, entity, before/after JSON from
//    admin/model/record_json.h) in the fake AuditStore;
//  - orders: groups by app name, jobs newest (highest id) first, users by id, tokens and
//    script versions newest first, logs by scheduled time newest first, audit newest first;
//  - calendars (FakeCalendarStore) live beside the jobs: a job names one that exists;
//  - cascades: deleting a job deletes its logs and script versions; deleting a group removes
//    it from users' groups; deleting a user deletes their sessions and tokens and keeps their
//    audit entries without the user id;
//  - the UserStore's last-admin rule (stores.h) is checked under the mutex, so the check and
//    the change are one step as in the database.
//
// Thread-safe: one mutex guards every store of a FakeStores.
//
// Values longer than their column (e.g. a 65-character app name) are not checked here: the
// API rejects them before any store sees them.

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <regex>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/model/record_json.h"
#include "admin/model/alarm_store.h"
#include "admin/model/completion_store.h"
#include "admin/model/records.h"
#include "admin/model/run_end.h"
#include "admin/model/stores.h"
#include "admin/model/token_hash.h"
#include "common/util/clock.h"
#include "tests/support/fake_follow_ups.h"

namespace cronwheel::testing {

namespace fake_stores_detail {

using namespace cronwheel::admin;

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Case-insensitive substring, as ILIKE '%text%' with the text's metacharacters escaped.
inline bool contains(std::string_view haystack, std::string_view needle) {
  return needle.empty() || lower(haystack).find(lower(needle)) != std::string::npos;
}

inline bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' '; });
}

inline bool in_scope(const GroupScope& scope, std::int64_t group) {
  return !scope || std::find(scope->begin(), scope->end(), group) != scope->end();
}

template <class T>
Page<T> page_of(std::vector<T> all, const PageRequest& page) {
  Page<T> out;
  out.total = static_cast<std::int64_t>(all.size());
  auto begin = std::min<std::int64_t>(std::max<std::int64_t>(page.offset, 0), out.total);
  auto end = std::min<std::int64_t>(begin + std::max<std::int64_t>(page.limit, 0), out.total);
  out.items.assign(std::make_move_iterator(all.begin() + begin), std::make_move_iterator(all.begin() + end));
  return out;
}

// A page of `all` (in list order, newest first) as the job and run lists page it: by offset, or
// after/before a key; the total counted up to kMaxCountedTotal.
template <class T, class KeyOf>
Page<T> keyed_page_of(std::vector<T> all, const PageRequest& page, KeyOf key_of) {
  // Whether key a comes before key b in list order.
  auto ahead = [](const PageKey& a, const PageKey& b) { return a.time > b.time || (a.time == b.time && a.id > b.id); };
  const auto size = static_cast<std::int64_t>(all.size());
  std::int64_t begin = 0;
  std::int64_t end = 0;
  bool more = false;
  if (page.before) {
    end = 0;
    while (end < size && ahead(key_of(all[end]), *page.before)) ++end;
    begin = std::max<std::int64_t>(end - page.limit, 0);
    more = begin > 0;
  } else {
    begin = std::min(page.offset, size);
    if (page.after) {
      begin = 0;
      while (begin < size && !ahead(*page.after, key_of(all[begin]))) ++begin;
    }
    end = std::min(begin + page.limit, size);
    more = end < size;
  }
  Page<T> out;
  out.items.assign(std::make_move_iterator(all.begin() + begin), std::make_move_iterator(all.begin() + end));
  if (!out.items.empty()) {
    const PageKey first = key_of(out.items.front());
    const PageKey last = key_of(out.items.back());
    if (page.before) {
      if (more) out.prev = first;
      out.next = last;
    } else {
      if (more) out.next = last;
      if (page.offset > 0 || page.after) out.prev = first;
    }
  } else if (page.before) {
    out.next = page.before;
  }
  out.total = std::min(size, kMaxCountedTotal);
  out.total_exact = size <= kMaxCountedTotal;
  return out;
}

// The text form PostgreSQL's inet gives back; empty for what inet would refuse (the stores
// record such an address as unknown rather than fail the change).
inline std::string canonical_addr(const std::string& addr) {
  char text[INET6_ADDRSTRLEN];
  unsigned char buf[sizeof(struct in6_addr)];
  if (inet_pton(AF_INET, addr.c_str(), buf) == 1) return inet_ntop(AF_INET, buf, text, sizeof text);
  if (inet_pton(AF_INET6, addr.c_str(), buf) == 1) return inet_ntop(AF_INET6, buf, text, sizeof text);
  return {};
}

template <class T>
bool one_of(const T& v, std::initializer_list<T> options) {
  for (const T& o : options) {
    if (v == o) return true;
  }
  return false;
}
inline bool one_of(const std::string& v, std::initializer_list<const char*> options) {
  for (const char* o : options) {
    if (v == o) return true;
  }
  return false;
}

inline bool valid_app_name(const std::string& s) {
  auto ok = [](char c, bool first) {
    return std::isalnum(static_cast<unsigned char>(c)) || (!first && (c == '.' || c == '_' || c == '-'));
  };
  if (s.size() < 4 || s.size() > 64) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!ok(s[i], i == 0)) return false;
  }
  return true;
}

inline bool valid_username(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '@' || c == '-';
  });
}

inline bool fixed_seconds(const std::string& s) {
  if (s.empty() || s.size() > 10 || s[0] == '0') return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The schema's CHECK rules, in the order PostgreSQL evaluates them (by constraint name).
inline void check_group(const Group& g) {
  if (g.address_type != 0 && g.address_type != 1) throw Conflict("addressType must be 0 or 1", "addressType");
  if (!valid_app_name(g.app_name)) {
    throw Conflict("appName must be 4-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
                   "appName");
  }
  if (blank(g.title)) throw Conflict("title must not be blank", "title");
  if (g.max_running < 0 || g.max_running > 10'000) throw Conflict("maxRunning must be 0-10000", "maxRunning");
}

inline void check_job(const Job& j) {
  if (j.glue_type == GlueType::kBean && j.executor_handler.empty()) {
    throw Conflict("a BEAN job needs an executor handler", "executorHandler");
  }
  if (j.schedule_type == ScheduleType::kCron && blank(j.schedule_conf)) throw Conflict("a CRON job needs an expression", "scheduleConf");
  if (j.executor_fail_retry_count < 0 || j.executor_fail_retry_count > 100) {
    throw Conflict("executorFailRetryCount must be 0..100", "executorFailRetryCount");
  }
  if (j.executor_timeout < 0) throw Conflict("executorTimeout must not be negative", "executorTimeout");
  if (one_of(j.schedule_type, {ScheduleType::kFixRate, ScheduleType::kFixDelay}) && !fixed_seconds(j.schedule_conf)) {
    throw Conflict("a fixed schedule needs a positive number of seconds", "scheduleConf");
  }
  if (blank(j.job_desc)) throw Conflict("jobDesc must not be blank", "jobDesc");
  if (j.id != 0 && std::find(j.child_job_ids.begin(), j.child_job_ids.end(), j.id) != j.child_job_ids.end()) {
    throw Conflict("a job cannot be its own child", "childJobId");
  }
  if (j.retry_interval < 0) throw Conflict("retryInterval must not be negative", "retryInterval");
  if (!(j.retry.multiplier >= 1 && j.retry.multiplier <= 10)) throw Conflict("retryMultiplier must be 1-10", "retryMultiplier");
  if (j.retry.max_interval < 0 || j.retry.max_interval > 2'592'000) {
    throw Conflict("retryMaxInterval must be 0-2592000 seconds", "retryMaxInterval");
  }
  if (j.retry.jitter_percent < 0 || j.retry.jitter_percent > 100) throw Conflict("retryJitter must be 0-100", "retryJitter");
  if (j.max_concurrent < 0 || j.max_concurrent > 1'000) throw Conflict("maxConcurrent must be 0-1000", "maxConcurrent");
  if (j.priority < -1'000 || j.priority > 1'000) throw Conflict("priority must be -1000 to 1000", "priority");
  if (j.trigger_status != 0 && j.schedule_type == ScheduleType::kNone) throw Conflict("a job without a schedule cannot run", "scheduleType");
  if (j.trigger_last_time < 0) throw Conflict("triggerLastTime must not be negative", "triggerLastTime");
  if (j.trigger_next_time < 0) throw Conflict("triggerNextTime must not be negative", "triggerNextTime");
  if (j.trigger_status != 0 && j.trigger_status != 1) throw Conflict("triggerStatus must be 0 or 1", "triggerStatus");
}

inline void check_fire(const JobLog& l) {
  if (l.executor_fail_retry_count < 0) throw Conflict("executorFailRetryCount must not be negative", "executorFailRetryCount");
  if (!l.admin_node) throw Conflict("a pending fire needs its admin node", "adminNode");
  if (l.scheduled_time < 0) throw Conflict("scheduledTime must not be negative", "scheduledTime");
  if (!(l.shard_total >= 1 && l.shard_index >= 0 && l.shard_index < l.shard_total)) {
    throw Conflict("shard index out of range", "shardIndex");
  }
}

inline void check_user(const User& u) {
  // As app_user's CHECK: an argon2 hash, or '' (no password: a user a jobs file made).
  if (!u.password_hash.empty() && u.password_hash.rfind("$argon2", 0) != 0) {
    throw Conflict("password hash is not an argon2 hash", "password");
  }
  if (!one_of(u.role, {"admin", "normal"})) throw Conflict("role must be admin or normal", "role");
  if (!valid_username(u.username)) throw Conflict("username must be 1-64 letters, digits, '.', '_', '@' or '-'", "username");
}

inline std::vector<std::int64_t> sorted_unique(std::vector<std::int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

struct State {
  explicit State(common::Clock& c) : clock(c) {}

  std::mutex mutex;
  common::Clock& clock;

  std::map<std::int64_t, Group> groups;
  std::map<std::int64_t, Job> jobs;
  std::map<std::int64_t, JobLog> logs;
  std::map<std::int64_t, ScriptVersion> versions;
  std::map<std::int64_t, User> users;
  struct TokenRow {
    ApiToken token;
    std::string hash;  // canonical hex
  };
  std::map<std::int64_t, TokenRow> tokens;
  struct SessionRow {
    SessionStore::Session session;
    std::string hash;
  };
  std::map<std::string, SessionRow> sessions;  // by canonical hex hash
  std::map<std::int64_t, AuditEntry> audit;
  // FakeCalendarStore's calendars (fake_calendar_store.h), here so that a job naming one is
  // checked against them, as job_info's foreign key does.
  std::map<std::int64_t, Calendar> calendars;
  std::int64_t next_calendar = 1;
  // What OverviewStore reads beyond the records above (set by FakeStores::put_*).
  std::map<std::string, AdminNode> nodes;
  std::vector<RegistryEntry> registrations;
  std::optional<ScanMark> last_scan;
  // The run report: every run that reached a counted state, by log id, kept when the log is
  // deleted (job_run_report in the database). Brought up to date by count_finished_runs()
  // before anything reads it and before any log is deleted.
  struct Counted {
    std::int64_t job_group = 0;
    std::int64_t scheduled_time = 0;
    bool succeeded = false;
  };
  std::map<std::int64_t, Counted> counted_runs;
  std::int64_t next_group = 1, next_job = 1, next_log = 1, next_version = 1, next_user = 1, next_token = 1,
               next_audit = 1;

  std::int64_t now() const { return clock.now_ms(); }

  // Call with the mutex held. A log in succeeded, failed or lost counts (as it is now); one
  // that left those states stops counting; deleted logs keep counting.
  // JobStore's stop: the jobs' pending SCHEDULE and MISFIRE rows end cancelled with `note`.
  void cancel_decided(const std::vector<std::int64_t>& job_ids, const std::string& note) {
    for (auto& [id, l] : logs) {
      if (l.state != FireState::kPending || std::find(job_ids.begin(), job_ids.end(), l.job_id) == job_ids.end()) continue;
      if (l.trigger_type != TriggerType::kSchedule && l.trigger_type != TriggerType::kMisfire) continue;
      l.state = FireState::kCancelled;
      l.alarm_status = 1;
      l.trigger_msg = l.trigger_msg.empty() ? note : l.trigger_msg + "\n" + note;
    }
  }
  void count_finished_runs() {
    for (const auto& [id, l] : logs) {
      const bool finished = l.state == FireState::kSucceeded || l.state == FireState::kFailed || l.state == FireState::kLost;
      if (finished) {
        counted_runs[id] = Counted{l.job_group, l.scheduled_time, l.state == FireState::kSucceeded};
      } else {
        counted_runs.erase(id);
      }
    }
  }

  // Call with the mutex held.
  void record(AuditEntry e) {
    if (e.action.empty()) throw Conflict("audit action must not be empty", "action");
    e.id = next_audit++;
    e.at = now();
    if (e.user_id && users.count(*e.user_id) == 0) e.user_id.reset();
    e.remote_addr = canonical_addr(e.remote_addr);
    audit[e.id] = std::move(e);
  }
  void audit_change(const Actor& actor, std::string action, std::string entity_type, std::optional<std::int64_t> entity_id,
                    std::optional<nlohmann::json> before, std::optional<nlohmann::json> after) {
    AuditEntry e;
    e.user_id = actor.user_id;
    e.username = actor.username;
    e.action = std::move(action);
    e.entity_type = std::move(entity_type);
    e.entity_id = entity_id;
    if (before) e.before = before->dump();
    if (after) e.after = after->dump();
    e.remote_addr = actor.remote_addr;
    record(std::move(e));
  }

  User& user_or_throw(std::int64_t id) {
    auto it = users.find(id);
    if (it == users.end()) throw NotFound("user " + std::to_string(id) + " does not exist");
    return it->second;
  }
  void check_user_groups(const std::vector<std::int64_t>& ids) const {
    for (auto g : ids) {
      if (groups.count(g) == 0) throw Conflict("group " + std::to_string(g) + " does not exist", "groups");
    }
  }
  void end_sessions(std::int64_t user_id, const std::string& keep_hash) {
    for (auto it = sessions.begin(); it != sessions.end();) {
      it = it->second.session.user_id == user_id && it->first != keep_hash ? sessions.erase(it) : std::next(it);
    }
  }
  // Revokes the user's tokens that are not revoked yet, each audited as "token.revoke".
  void revoke_tokens(std::int64_t user_id, const Actor& actor) {
    for (auto& [id, t] : tokens) {
      if (t.token.user_id != user_id || t.token.revoked_at) continue;
      const ApiToken before = t.token;
      t.token.revoked_at = now();
      audit_change(actor, "token.revoke", "token", id, to_json(before), to_json(t.token));
    }
  }
  // UserStore's rule: some admin other than `target` remains.
  void keep_an_admin(const User& target, const char* change) const {
    for (const auto& [id, u] : users) {
      if (id != target.id && u.is_admin()) return;
    }
    throw Conflict("user " + target.username + " is the last admin and cannot be " + change +
                       "; make another user admin first",
                   "role");
  }
};

class Groups final : public GroupStore {
 public:
  explicit Groups(State& s) : s_(s) {}

  Page<Group> list(const Filter& f) override {
    std::lock_guard lock(s_.mutex);
    std::vector<Group> all;
    for (const auto& [id, g] : s_.groups) {
      if (in_scope(f.scope, id) && (contains(g.app_name, f.text) || contains(g.title, f.text))) all.push_back(g);
    }
    std::sort(all.begin(), all.end(), [](const Group& a, const Group& b) { return a.app_name < b.app_name; });
    return page_of(std::move(all), f.page);
  }
  std::optional<Group> get(std::int64_t id) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.groups.find(id);
    return it == s_.groups.end() ? std::nullopt : std::optional<Group>(it->second);
  }
  std::optional<Group> find_by_app_name(std::string_view app_name) override {
    std::lock_guard lock(s_.mutex);
    for (const auto& [id, g] : s_.groups) {
      if (g.app_name == app_name) return g;
    }
    return std::nullopt;
  }
  Group create(const Group& group, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    check_group(group);
    for (const auto& [id, g] : s_.groups) {
      if (g.app_name == group.app_name) throw Conflict("app name " + group.app_name + " is taken", "appName");
    }
    Group g = group;
    g.id = s_.next_group++;
    g.created_at = g.updated_at = s_.now();
    s_.groups[g.id] = g;
    s_.audit_change(actor, "group.create", "group", g.id, std::nullopt, to_json(g));
    return g;
  }
  Group update(const Group& group, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.groups.find(group.id);
    if (it == s_.groups.end()) throw NotFound("group " + std::to_string(group.id) + " does not exist");
    Group g = it->second;
    const Group before = g;
    g.title = group.title;
    g.address_type = group.address_type;
    g.address_list = group.address_list;
    g.access_token = group.access_token;
    g.max_running = group.max_running;
    check_group(g);
    g.updated_at = s_.now();
    it->second = g;
    s_.audit_change(actor, "group.update", "group", g.id, to_json(before), to_json(g));
    return g;
  }
  void remove(std::int64_t id, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.groups.find(id);
    if (it == s_.groups.end()) throw NotFound("group " + std::to_string(id) + " does not exist");
    auto jobs = std::count_if(s_.jobs.begin(), s_.jobs.end(), [&](const auto& j) { return j.second.job_group == id; });
    if (jobs > 0) throw Conflict("group has " + std::to_string(jobs) + (jobs == 1 ? " job" : " jobs"));
    const Group before = it->second;
    s_.groups.erase(it);
    for (auto& [uid, u] : s_.users) std::erase(u.groups, id);
    s_.audit_change(actor, "group.delete", "group", id, to_json(before), std::nullopt);
  }

 private:
  State& s_;
};

class Jobs final : public JobStore {
 public:
  explicit Jobs(State& s) : s_(s) {}

  Page<Job> list(const Filter& f) override {
    std::lock_guard lock(s_.mutex);
    std::vector<Job> all;
    for (auto it = s_.jobs.rbegin(); it != s_.jobs.rend(); ++it) {
      const Job& j = it->second;
      if (!in_scope(f.scope, j.job_group)) continue;
      if (f.job_group && j.job_group != *f.job_group) continue;
      if (f.trigger_status && j.trigger_status != *f.trigger_status) continue;
      if (f.name && j.name != *f.name) continue;
      if (!(contains(j.name, f.text) || contains(j.job_desc, f.text) || contains(j.executor_handler, f.text) ||
            contains(j.author, f.text))) {
        continue;
      }
      all.push_back(j);
    }
    return keyed_page_of(std::move(all), f.page, [](const Job& j) { return PageKey{0, j.id}; });
  }
  std::optional<Job> get(std::int64_t id) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.jobs.find(id);
    return it == s_.jobs.end() ? std::nullopt : std::optional<Job>(it->second);
  }
  std::vector<std::int64_t> existing(const std::vector<std::int64_t>& ids) override {
    std::lock_guard lock(s_.mutex);
    std::vector<std::int64_t> out;
    for (auto id : sorted_unique(ids)) {
      if (s_.jobs.count(id) != 0) out.push_back(id);
    }
    return out;
  }
  std::map<std::int64_t, std::vector<std::int64_t>> children_of(const std::vector<std::int64_t>& ids) override {
    std::lock_guard lock(s_.mutex);
    std::map<std::int64_t, std::vector<std::int64_t>> out;
    for (auto id : ids) {
      if (auto it = s_.jobs.find(id); it != s_.jobs.end()) out.emplace(id, it->second.child_job_ids);
    }
    return out;
  }
  Job create(const Job& job, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    Job j = job;
    j.id = 0;
    check_job(j);
    require_group(j.job_group);
    j.id = s_.next_job++;
    if (j.name.empty()) j.name = "job-" + std::to_string(j.id);
    check_job_name(j);
    require_calendar(j.calendar);
    j.created_at = j.updated_at = j.glue_updated_at = s_.now();
    s_.jobs[j.id] = j;
    if (auto remark = first_script_version_remark(j)) {
      ScriptVersion v{s_.next_version++, j.id, j.glue_type, j.glue_source, *remark, s_.now()};
      s_.versions[v.id] = v;
    }
    s_.audit_change(actor, "job.create", "job", j.id, std::nullopt, to_json(j));
    return j;
  }
  Job update(const Job& job, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.jobs.find(job.id);
    if (it == s_.jobs.end()) throw NotFound("job " + std::to_string(job.id) + " does not exist");
    const Job before = it->second;
    Job j = job;
    // The script's source and its history belong to ScriptStore; the store keeps the times.
    j.glue_source = before.glue_source;
    j.glue_remark = before.glue_remark;
    j.glue_updated_at = before.glue_updated_at;
    j.created_at = before.created_at;
    if (j.name.empty()) j.name = before.name;
    check_job(j);
    require_group(j.job_group);
    check_job_name(j);
    require_calendar(j.calendar);
    j.updated_at = s_.now();
    it->second = j;
    if (before.trigger_status == 1 && j.trigger_status == 0) s_.cancel_decided({j.id}, stopped_fire_note(actor, "job stopped"));
    s_.audit_change(actor, "job.update", "job", j.id, to_json(before), to_json(j));
    return j;
  }
  std::vector<JobLog> remove(std::int64_t id, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.jobs.find(id);
    if (it == s_.jobs.end()) throw NotFound("job " + std::to_string(id) + " does not exist");
    const Job before = it->second;
    // Its held runs as CompletionStore::held_runs reads them, by id.
    std::vector<JobLog> held;
    for (const auto& [log_id, l] : s_.logs) {
      if (l.job_id == id && CompletionStore::held_at(l, s_.now()) &&
          static_cast<int>(held.size()) < kMaxHeldRunsOfADeletedJob) {
        held.push_back(l);
      }
    }
    s_.jobs.erase(it);
    s_.count_finished_runs();
    std::erase_if(s_.logs, [&](const auto& l) { return l.second.job_id == id; });
    std::erase_if(s_.versions, [&](const auto& v) { return v.second.job_id == id; });
    s_.audit_change(actor, "job.delete", "job", id, to_json(before), std::nullopt);
    return held;
  }
  Job set_trigger_status(std::int64_t id, int status, std::int64_t next_time, std::string_view action,
                         const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.jobs.find(id);
    if (it == s_.jobs.end()) throw NotFound("job " + std::to_string(id) + " does not exist");
    const Job before = it->second;
    Job j = before;
    j.trigger_status = status;
    j.trigger_next_time = next_time;
    j.paused_with_group = false;
    check_job(j);
    j.updated_at = s_.now();
    it->second = j;
    if (before.trigger_status == 1 && j.trigger_status == 0) s_.cancel_decided({id}, stopped_fire_note(actor, "job stopped"));
    s_.audit_change(actor, std::string(action), "job", id, to_json(before), to_json(j));
    return j;
  }
  std::vector<std::int64_t> pause_group(std::int64_t group, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    std::vector<std::int64_t> paused;
    for (auto& [id, j] : s_.jobs) {
      if (j.job_group != group || j.trigger_status != 1) continue;
      j.trigger_status = 0;
      j.trigger_next_time = 0;
      j.paused_with_group = true;
      j.updated_at = s_.now();
      paused.push_back(id);
    }
    s_.cancel_decided(paused, stopped_fire_note(actor, "group paused"));
    s_.audit_change(actor, "group.pause", "group", group, std::nullopt, nlohmann::json{{"jobs", paused}});
    return paused;
  }
  std::vector<std::int64_t> resume_group(std::int64_t group, const std::map<std::int64_t, std::int64_t>& next_times,
                                         const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    std::vector<std::int64_t> resumed;
    for (auto& [id, j] : s_.jobs) {
      if (j.job_group != group) continue;
      auto next = next_times.find(id);
      if (j.paused_with_group && j.trigger_status == 0 && next != next_times.end()) {
        j.trigger_status = 1;
        j.trigger_next_time = next->second;
        j.updated_at = s_.now();
        resumed.push_back(id);
      }
      j.paused_with_group = false;
    }
    s_.audit_change(actor, "group.resume", "group", group, std::nullopt, nlohmann::json{{"jobs", resumed}});
    return resumed;
  }

 private:
  void require_group(std::int64_t group) const {
    if (s_.groups.count(group) == 0) throw Conflict("group " + std::to_string(group) + " does not exist", "jobGroup");
  }
  // As job_info_calendar_id_fkey (0: no calendar).
  void require_calendar(const CalendarUse& use) const {
    if (use.calendar_id != 0 && s_.calendars.count(use.calendar_id) == 0) {
      throw Conflict("the calendar does not exist", "calendarId");
    }
  }
  // As the schema's job_info_name_format and job_info_group_name_key.
  void check_job_name(const Job& j) const {
    static const std::regex format("[a-z0-9][a-z0-9._-]{0,99}");
    if (!std::regex_match(j.name, format)) {
      throw Conflict("name must be 1-100 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit",
                     "name");
    }
    for (const auto& [id, other] : s_.jobs) {
      if (id != j.id && other.job_group == j.job_group && other.name == j.name) {
        throw Conflict("name is taken by another job of the group", "name");
      }
    }
  }
  State& s_;
};

class Logs final : public LogStore {
 public:
  explicit Logs(State& s) : s_(s) {}

  Page<JobLog> list(const Filter& f) override {
    using Status = Filter::Status;
    std::lock_guard lock(s_.mutex);
    std::vector<JobLog> all;
    for (const auto& [id, l] : s_.logs) {
      if (!in_scope(f.scope, l.job_group)) continue;
      if (f.job_group && l.job_group != *f.job_group) continue;
      if (f.job_id && l.job_id != *f.job_id) continue;
      if (f.status == Status::kSuccess && l.state != FireState::kSucceeded) continue;
      if (f.status == Status::kFailure && !one_of(l.state, {FireState::kFailed, FireState::kLost})) continue;
      if (f.status == Status::kRunning && l.state != FireState::kTriggered) continue;
      if (f.status == Status::kPending && l.state != FireState::kPending) continue;
      if (f.status == Status::kCancelled && l.state != FireState::kCancelled) continue;
      if (f.from && l.scheduled_time < *f.from) continue;
      if (f.to && l.scheduled_time >= *f.to) continue;
      if (f.backfill_id && l.backfill_id != *f.backfill_id) continue;
      all.push_back(l);
    }
    std::sort(all.begin(), all.end(), newest_first);
    return keyed_page_of(std::move(all), f.page, [](const JobLog& l) { return PageKey{l.scheduled_time, l.id}; });
  }
  std::optional<JobLog> get(std::int64_t id) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.logs.find(id);
    return it == s_.logs.end() ? std::nullopt : std::optional<JobLog>(it->second);
  }
  std::optional<JobLog> retry_of(std::int64_t run_id) override {
    std::lock_guard lock(s_.mutex);
    for (const auto& [id, log] : s_.logs) {  // by id, oldest first
      if (log.parent_log_id == run_id && log.trigger_type == TriggerType::kRetry) return log;
    }
    return std::nullopt;
  }
  JobLog create_fire(const JobLog& fire, const Actor& actor) override {
    if (!one_of(fire.trigger_type, {TriggerType::kManual, TriggerType::kApi})) {
      throw std::invalid_argument("a fire asked for through the API is MANUAL or API, not " +
                                  std::string(to_string(fire.trigger_type)));
    }
    std::lock_guard lock(s_.mutex);
    auto job = s_.jobs.find(fire.job_id);
    if (job == s_.jobs.end()) throw NotFound("job " + std::to_string(fire.job_id) + " does not exist");
    JobLog l = fire;
    l.job_group = job->second.job_group;
    l.state = FireState::kPending;
    l.trigger_time.reset();
    l.trigger_code = 0;
    l.trigger_msg.clear();
    l.handle_time.reset();
    l.handle_code = 0;
    l.handle_msg.clear();
    l.alarm_status = 0;
    check_fire(l);
    l.id = s_.next_log++;
    s_.logs[l.id] = l;
    s_.audit_change(actor, "job.trigger", "job", l.job_id, std::nullopt, to_json(l));
    return l;
  }
  bool cancel_pending(std::int64_t log_id, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.logs.find(log_id);
    if (it == s_.logs.end()) throw NotFound("log " + std::to_string(log_id) + " does not exist");
    if (it->second.state != FireState::kPending) return false;
    const JobLog before = it->second;
    it->second.state = FireState::kCancelled;
    it->second.alarm_status = kAlarmNotNeeded;  // an operator's choice alarms nobody
    const JobLog cancelled = it->second;
    write_fake_follow_ups(s_.jobs, s_.logs, s_.next_log, cancelled,
                          follow_ups_of(RunEnd::kCancelled, s_.now(), cancelled.admin_node.value_or("")));
    s_.audit_change(actor, "log.cancel", "log", log_id, to_json(before), to_json(cancelled));
    return true;
  }
  std::int64_t clear(const ClearRequest& r, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    std::vector<JobLog> scope;
    for (const auto& [id, l] : s_.logs) {
      if ((!r.job_group || l.job_group == *r.job_group) && (!r.job_id || l.job_id == *r.job_id)) scope.push_back(l);
    }
    std::sort(scope.begin(), scope.end(), newest_first);
    s_.count_finished_runs();
    std::int64_t deleted = 0;
    for (std::size_t rank = 0; rank < scope.size(); ++rank) {
      const JobLog& l = scope[rank];
      if (one_of(l.state, {FireState::kPending, FireState::kSending, FireState::kTriggered})) continue;
      if (r.before && l.scheduled_time >= *r.before) continue;
      if (r.keep && static_cast<std::int64_t>(rank) < *r.keep) continue;
      s_.logs.erase(l.id);
      ++deleted;
    }
    s_.audit_change(actor, "log.clear", "log", std::nullopt, std::nullopt, clear_json(r, deleted));
    return deleted;
  }

  // What a "log.clear" audit entry records as `after`.
  static nlohmann::json clear_json(const ClearRequest& r, std::int64_t deleted) {
    auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"jobGroup", opt(r.job_group)}, {"jobId", opt(r.job_id)}, {"before", opt(r.before)},
            {"keep", opt(r.keep)},          {"deleted", deleted}};
  }

 private:
  static bool newest_first(const JobLog& a, const JobLog& b) {
    return a.scheduled_time != b.scheduled_time ? a.scheduled_time > b.scheduled_time : a.id > b.id;
  }
  State& s_;
};

class Scripts final : public ScriptStore {
 public:
  explicit Scripts(State& s) : s_(s) {}

  Job save_version(std::int64_t job_id, const std::string& glue_source, const std::string& glue_remark,
                   const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.jobs.find(job_id);
    if (it == s_.jobs.end()) throw NotFound("job " + std::to_string(job_id) + " does not exist");
    if (blank(glue_remark)) throw Conflict("a script version needs a remark", "glueRemark");
    const Job before = it->second;
    Job& j = it->second;
    j.glue_source = glue_source;
    j.glue_remark = glue_remark;
    j.glue_updated_at = j.updated_at = s_.now();
    ScriptVersion v{s_.next_version++, job_id, j.glue_type, glue_source, glue_remark, s_.now()};
    s_.versions[v.id] = v;
    std::vector<std::int64_t> mine;
    for (const auto& [id, version] : s_.versions) {
      if (version.job_id == job_id) mine.push_back(id);
    }
    for (std::size_t i = 0; i + kVersionsKept < mine.size(); ++i) s_.versions.erase(mine[i]);
    s_.audit_change(actor, "script.save", "script", job_id, to_json(before), to_json(j));
    return j;
  }
  std::vector<ScriptVersion> versions(std::int64_t job_id) override {
    std::lock_guard lock(s_.mutex);
    std::vector<ScriptVersion> out;
    for (auto it = s_.versions.rbegin(); it != s_.versions.rend(); ++it) {
      if (it->second.job_id == job_id) out.push_back(it->second);
    }
    return out;
  }
  std::optional<ScriptVersion> get_version(std::int64_t version_id) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.versions.find(version_id);
    return it == s_.versions.end() ? std::nullopt : std::optional<ScriptVersion>(it->second);
  }

 private:
  State& s_;
};

class Users final : public UserStore {
 public:
  explicit Users(State& s) : s_(s) {}

  Page<User> list(const PageRequest& page) override {
    std::lock_guard lock(s_.mutex);
    std::vector<User> all;
    for (const auto& [id, u] : s_.users) all.push_back(u);
    return page_of(std::move(all), page);
  }
  std::optional<User> get(std::int64_t id) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.users.find(id);
    return it == s_.users.end() ? std::nullopt : std::optional<User>(it->second);
  }
  std::optional<User> find_by_username(std::string_view username) override {
    // As PostgreSQL gets it: libpq passes text parameters as C strings, so the name ends at
    // its first NUL ("bob\0x" finds bob). Callers must not rely on the store to refuse such
    // names.
    username = username.substr(0, username.find('\0'));
    std::lock_guard lock(s_.mutex);
    for (const auto& [id, u] : s_.users) {
      if (u.username == username) return u;
    }
    return std::nullopt;
  }
  std::int64_t count() override {
    std::lock_guard lock(s_.mutex);
    return static_cast<std::int64_t>(s_.users.size());
  }
  User create(const User& user, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    check_user(user);
    auto lower = [](std::string text) {
      for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return text;
    };
    for (const auto& [id, u] : s_.users) {
      if (u.username == user.username) throw Conflict("username " + user.username + " is taken", "username");
      if (lower(u.username) == lower(user.username)) {
        throw Conflict("username is taken (in other letter case)", "username");
      }
    }
    User u = user;
    u.groups = sorted_unique(u.groups);
    s_.check_user_groups(u.groups);
    u.id = s_.next_user++;
    u.created_at = u.updated_at = s_.now();
    s_.users[u.id] = u;
    s_.audit_change(actor, "user.create", "user", u.id, std::nullopt, to_json(u));
    return u;
  }
  User update(const User& user, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    User& stored = s_.user_or_throw(user.id);
    const User before = stored;
    if (before.is_admin() && user.role != "admin") s_.keep_an_admin(before, "demoted");
    User u = before;
    u.role = user.role;
    u.groups = sorted_unique(user.groups);
    if (!user.password_hash.empty()) u.password_hash = user.password_hash;
    check_user(u);
    s_.check_user_groups(u.groups);
    u.updated_at = s_.now();
    stored = u;
    // A password set by someone else ends every session the old password opened, and every
    // token made while it was valid.
    if (!user.password_hash.empty()) {
      s_.end_sessions(u.id, {});
      s_.revoke_tokens(u.id, actor);
    }
    s_.audit_change(actor, "user.update", "user", u.id, to_json(before), to_json(u));
    return u;
  }
  void remove(std::int64_t id, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    const User before = s_.user_or_throw(id);
    if (before.is_admin()) s_.keep_an_admin(before, "deleted");
    s_.users.erase(id);
    s_.end_sessions(id, {});
    std::erase_if(s_.tokens, [&](const auto& t) { return t.second.token.user_id == id; });
    for (auto& [aid, e] : s_.audit) {
      if (e.user_id == id) e.user_id.reset();
    }
    s_.audit_change(actor, "user.delete", "user", id, to_json(before), std::nullopt);
  }
  void set_password(std::int64_t id, const std::string& password_hash, const std::string& keep_session_hash,
                    const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    User& stored = s_.user_or_throw(id);
    const User before = stored;
    User u = before;
    u.password_hash = password_hash;
    check_user(u);
    u.updated_at = s_.now();
    stored = u;
    s_.end_sessions(id, keep_session_hash.empty() ? std::string() : canonical_token_hash(keep_session_hash));
    s_.revoke_tokens(id, actor);
    s_.audit_change(actor, "user.password", "user", id, to_json(before), to_json(u));
  }

 private:
  State& s_;
};

class Tokens final : public TokenStore {
 public:
  // authenticate() records use at most once a minute, so a busy token does not write per call.
  static constexpr std::int64_t kLastUsedResolutionMs = 60'000;

  explicit Tokens(State& s) : s_(s) {}

  ApiToken create(std::int64_t user_id, const std::string& name, const std::string& token_hash,
                  std::optional<std::int64_t> expires_at, const Actor& actor) override {
    const auto hash = canonical_token_hash(token_hash);
    std::lock_guard lock(s_.mutex);
    s_.user_or_throw(user_id);
    // CHECK rules in PostgreSQL's order (by constraint name), then the unique ones.
    if (expires_at && *expires_at <= s_.now()) throw Conflict("a token must expire after it is created", "expiresAt");
    if (blank(name)) throw Conflict("token name must not be blank", "name");
    for (const auto& [id, t] : s_.tokens) {
      if (t.token.user_id == user_id && t.token.name == name && !t.token.revoked_at) {
        throw Conflict("a token named " + name + " exists", "name");
      }
      if (t.hash == hash) throw Conflict("token hash collision", "token");
    }
    ApiToken t;
    t.id = s_.next_token++;
    t.user_id = user_id;
    t.name = name;
    t.created_at = s_.now();
    t.expires_at = expires_at;
    s_.tokens[t.id] = {t, hash};
    s_.audit_change(actor, "token.create", "token", t.id, std::nullopt, to_json(t));
    return t;
  }
  std::vector<ApiToken> list(std::int64_t user_id) override {
    std::lock_guard lock(s_.mutex);
    std::vector<ApiToken> out;
    for (auto it = s_.tokens.rbegin(); it != s_.tokens.rend(); ++it) {
      if (it->second.token.user_id == user_id) out.push_back(it->second.token);
    }
    return out;
  }
  bool revoke(std::int64_t user_id, std::int64_t token_id, const Actor& actor) override {
    std::lock_guard lock(s_.mutex);
    auto it = s_.tokens.find(token_id);
    if (it == s_.tokens.end() || it->second.token.user_id != user_id) return false;
    if (it->second.token.revoked_at) return true;  // already revoked: nothing changes
    const ApiToken before = it->second.token;
    it->second.token.revoked_at = s_.now();
    s_.audit_change(actor, "token.revoke", "token", token_id, to_json(before), to_json(it->second.token));
    return true;
  }
  std::optional<std::pair<ApiToken, User>> authenticate(const std::string& token_hash) override {
    const auto hash = canonical_token_hash(token_hash);
    std::lock_guard lock(s_.mutex);
    const auto now = s_.now();
    for (auto& [id, t] : s_.tokens) {
      if (t.hash != hash || t.token.revoked_at || (t.token.expires_at && *t.token.expires_at <= now)) continue;
      if (!t.token.last_used_at || now - *t.token.last_used_at >= kLastUsedResolutionMs) t.token.last_used_at = now;
      return std::make_pair(t.token, s_.users.at(t.token.user_id));
    }
    return std::nullopt;
  }

 private:
  State& s_;
};

class Sessions final : public SessionStore {
 public:
  explicit Sessions(State& s) : s_(s) {}

  void create(const Session& session) override {
    const auto hash = canonical_token_hash(session.token_hash);
    std::lock_guard lock(s_.mutex);
    s_.user_or_throw(session.user_id);
    if (session.expires_at <= s_.now()) throw Conflict("a session must expire after it starts", "expiresAt");
    if (s_.sessions.count(hash) != 0) throw Conflict("session exists", "token");
    s_.sessions[hash] = {session, hash};
  }
  std::optional<std::pair<Session, User>> find(const std::string& token_hash) override {
    const auto hash = canonical_token_hash(token_hash);
    std::lock_guard lock(s_.mutex);
    auto it = s_.sessions.find(hash);
    if (it == s_.sessions.end() || it->second.session.expires_at <= s_.now()) return std::nullopt;
    Session found = it->second.session;
    found.token_hash = token_hash;
    return std::make_pair(found, s_.users.at(found.user_id));
  }
  void remove(const std::string& token_hash) override {
    const auto hash = canonical_token_hash(token_hash);
    std::lock_guard lock(s_.mutex);
    s_.sessions.erase(hash);
  }
  std::int64_t remove_expired() override {
    std::lock_guard lock(s_.mutex);
    const auto now = s_.now();
    return static_cast<std::int64_t>(
        std::erase_if(s_.sessions, [&](const auto& kv) { return kv.second.session.expires_at <= now; }));
  }

 private:
  State& s_;
};

class Overview final : public OverviewStore {
 public:
  explicit Overview(State& s) : s_(s) {}

  NodesOverview nodes() override {
    std::lock_guard lock(s_.mutex);
    NodesOverview out;
    for (const auto& [id, n] : s_.nodes) out.nodes.push_back({n, n.lease_until > s_.now()});
    out.last_scan = s_.last_scan;
    return out;
  }

  Page<RegistryEntry> registrations(std::string_view app_name, std::int64_t dead_after_ms,
                                    const PageRequest& page) override {
    std::lock_guard lock(s_.mutex);
    std::vector<RegistryEntry> live;
    for (const auto& e : s_.registrations) {
      if (e.registry_group == "EXECUTOR" && e.registry_key == app_name && alive(e, dead_after_ms)) live.push_back(e);
    }
    std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) { return a.registry_value < b.registry_value; });
    return page_of(std::move(live), page);
  }

  std::vector<std::string> handlers(std::string_view app_name, std::int64_t dead_after_ms) override {
    std::lock_guard lock(s_.mutex);
    std::set<std::string> names;
    for (const auto& e : s_.registrations) {
      if (e.registry_group == "EXECUTOR" && e.registry_key == app_name && alive(e, dead_after_ms)) {
        names.insert(e.handlers.begin(), e.handlers.end());
      }
    }
    return {names.begin(), names.end()};
  }

  Dashboard dashboard(const DashboardQuery& q) override {
    if (q.day_starts.empty()) throw std::invalid_argument("dashboard: day_starts needs at least one instant");
    std::lock_guard lock(s_.mutex);
    s_.count_finished_runs();
    Dashboard d;
    for (const auto& [id, j] : s_.jobs) {
      if (!in_scope(q.scope, j.job_group)) continue;
      ++d.jobs_total;
      d.jobs_enabled += j.trigger_status == 1 ? 1 : 0;
    }
    std::vector<JobLog> failures;
    for (const auto& [id, l] : s_.logs) {
      if (!in_scope(q.scope, l.job_group)) continue;
      d.running += one_of(l.state, {FireState::kSending, FireState::kTriggered}) ? 1 : 0;
      d.pending += l.state == FireState::kPending && l.scheduled_time < q.today_end ? 1 : 0;
      if (one_of(l.state, {FireState::kFailed, FireState::kLost})) failures.push_back(l);
    }
    std::sort(failures.begin(), failures.end(), [](const JobLog& a, const JobLog& b) {
      return a.scheduled_time != b.scheduled_time ? a.scheduled_time > b.scheduled_time : a.id > b.id;
    });
    for (const auto& l : failures) {
      if (static_cast<int>(d.latest_failures.size()) >= q.failures) break;
      d.latest_failures.push_back({l, s_.jobs.at(l.job_id).job_desc});
    }
    std::set<std::string> apps, addresses;
    for (const auto& [id, g] : s_.groups) {
      if (in_scope(q.scope, id)) apps.insert(g.app_name);
    }
    for (const auto& e : s_.registrations) {
      if (e.registry_group == "EXECUTOR" && apps.count(e.registry_key) && alive(e, q.executor_dead_after_ms)) {
        addresses.insert(e.registry_value);
      }
    }
    d.executors_online = static_cast<std::int64_t>(addresses.size());
    for (const auto& [id, n] : s_.nodes) d.nodes_alive += n.lease_until > s_.now() ? 1 : 0;
    d.days = days(q.day_starts, q.scope);
    d.today = days({q.today_start, q.today_end}, q.scope).front();
    return d;
  }

 private:
  bool alive(const RegistryEntry& e, std::int64_t dead_after_ms) const { return e.updated_at > s_.now() - dead_after_ms; }

  // As the report counts: a run goes to the day in which its quarter hour starts.
  std::vector<RunCounts> days(const std::vector<std::int64_t>& bounds, const GroupScope& scope) const {
    constexpr std::int64_t kQuarterMs = 900'000;
    std::vector<RunCounts> out(bounds.size() - 1);
    for (const auto& [id, c] : s_.counted_runs) {
      if (!in_scope(scope, c.job_group)) continue;
      const std::int64_t quarter = c.scheduled_time / kQuarterMs * kQuarterMs;
      auto after = std::upper_bound(bounds.begin(), bounds.end(), quarter);
      if (after == bounds.begin() || after == bounds.end()) continue;
      auto& day = out[static_cast<std::size_t>(after - bounds.begin() - 1)];
      (c.succeeded ? day.succeeded : day.failed) += 1;
    }
    return out;
  }

  State& s_;
};

class Audit final : public AuditStore {
 public:
  explicit Audit(State& s) : s_(s) {}

  Page<AuditEntry> list(const Filter& f) override {
    std::lock_guard lock(s_.mutex);
    std::vector<AuditEntry> all;
    for (auto it = s_.audit.rbegin(); it != s_.audit.rend(); ++it) {
      const AuditEntry& e = it->second;
      if (f.user_id && e.user_id != f.user_id) continue;
      if (!f.entity_type.empty() && e.entity_type != f.entity_type) continue;
      if (f.entity_id && e.entity_id != f.entity_id) continue;
      if (f.from && e.at < *f.from) continue;
      if (f.to && e.at >= *f.to) continue;
      all.push_back(e);
    }
    std::stable_sort(all.begin(), all.end(), [](const AuditEntry& a, const AuditEntry& b) { return a.at > b.at; });
    return page_of(std::move(all), f.page);
  }
  void record(const AuditEntry& entry) override {
    for (const auto* text : {&entry.before, &entry.after}) {
      if (*text && !nlohmann::json::accept(**text)) throw std::invalid_argument("audit before/after must be JSON");
    }
    std::lock_guard lock(s_.mutex);
    s_.record(entry);
  }

 private:
  State& s_;
};

}  // namespace fake_stores_detail

// One of each fake store over shared in-memory data; `stores()` hands them to code under test.
class FakeStores {
 public:
  explicit FakeStores(common::Clock& clock = common::SystemClock::instance())
      : state_(clock),
        groups_(state_),
        jobs_(state_),
        logs_(state_),
        scripts_(state_),
        users_(state_),
        tokens_(state_),
        sessions_(state_),
        audit_(state_),
        overview_(state_) {}

  FakeStores(const FakeStores&) = delete;
  FakeStores& operator=(const FakeStores&) = delete;

  admin::Stores stores() { return {groups_, jobs_, logs_, scripts_, users_, tokens_, sessions_, audit_, overview_}; }

  admin::GroupStore& groups() { return groups_; }
  admin::JobStore& jobs() { return jobs_; }
  admin::LogStore& logs() { return logs_; }
  admin::ScriptStore& scripts() { return scripts_; }
  admin::UserStore& users() { return users_; }
  admin::TokenStore& tokens() { return tokens_; }
  admin::SessionStore& sessions() { return sessions_; }
  admin::AuditStore& audit() { return audit_; }
  admin::OverviewStore& overview() { return overview_; }

  // Test setup beyond what the interfaces offer (the scheduling core writes these states):
  // stores a log row as given, with a new id unless it has one. Not audited. Like the
  // database, refuses a second scheduled fire of a job for the same time and shard.
  admin::JobLog put_log(admin::JobLog log) {
    std::lock_guard lock(state_.mutex);
    auto scheduled = [](const admin::JobLog& l) { return l.trigger_type == admin::TriggerType::kSchedule || l.trigger_type == admin::TriggerType::kMisfire; };
    for (const auto& [id, l] : state_.logs) {
      if (id != log.id && scheduled(l) && scheduled(log) && l.job_id == log.job_id &&
          l.scheduled_time == log.scheduled_time && l.shard_index == log.shard_index) {
        throw admin::Conflict("this fire exists already", "scheduledTime");
      }
    }
    if (log.id == 0) log.id = state_.next_log++;
    state_.next_log = std::max(state_.next_log, log.id + 1);
    state_.logs[log.id] = log;
    return log;
  }

  // Test setup for a job or workflow naming a calendar without a CalendarStore: a calendar of
  // that name, no days, as FakeCalendarStore (fake_calendar_store.h) keeps one. Not audited.
  // Answers its id.
  std::int64_t put_calendar(const std::string& name) {
    std::lock_guard lock(state_.mutex);
    admin::Calendar c;
    c.id = state_.next_calendar++;
    c.name = name;
    c.created_at = c.updated_at = state_.now();
    state_.calendars[c.id] = c;
    return c.id;
  }

  // Test setup for OverviewStore (the scheduling core and the registry write these): an admin
  // node row as given (alive while lease_until is later than the clock's now), a registration
  // as given (EXECUTOR, alive while updated within the dead timeout), the last scan's mark.
  void put_node(const admin::AdminNode& node) {
    std::lock_guard lock(state_.mutex);
    state_.nodes[node.node_id] = node;
  }
  void put_registration(admin::RegistryEntry entry) {
    std::lock_guard lock(state_.mutex);
    std::erase_if(state_.registrations, [&](const admin::RegistryEntry& e) {
      return e.registry_group == entry.registry_group && e.registry_key == entry.registry_key &&
             e.registry_value == entry.registry_value;
    });
    entry.id = static_cast<std::int64_t>(state_.registrations.size()) + 1;
    state_.registrations.push_back(std::move(entry));
  }
  void put_last_scan(admin::ScanMark mark) {
    std::lock_guard lock(state_.mutex);
    state_.last_scan = std::move(mark);
  }

  // For fakes of other stores over the same data (tests/support/fake_*_store.h): runs
  // fn(State&) under the stores' mutex, so a change spanning several records is one step, as
  // in a database transaction. fn must not call back into these stores (the mutex is held).
  template <class F>
  decltype(auto) with_state(F&& fn) {
    std::lock_guard lock(state_.mutex);
    return fn(state_);
  }

 private:
  fake_stores_detail::State state_;
  fake_stores_detail::Groups groups_;
  fake_stores_detail::Jobs jobs_;
  fake_stores_detail::Logs logs_;
  fake_stores_detail::Scripts scripts_;
  fake_stores_detail::Users users_;
  fake_stores_detail::Tokens tokens_;
  fake_stores_detail::Sessions sessions_;
  fake_stores_detail::Audit audit_;
  fake_stores_detail::Overview overview_;
};

}  // namespace cronwheel::testing
