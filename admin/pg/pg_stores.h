#pragma once

// The stores of admin/model/stores.h over PostgreSQL (schema: sql/*.sql).
//
// Beyond the shared contract in stores.h:
//  - Every statement is prepared on each new connection: pass PgStores::prepare as the
//    Database's Preparer. A method runs in one Database::transact()/read() call, so a change,
//    its audit entry and any cascade commit or roll back together.
//  - Times the stores stamp (created_at, updated_at, audit `at`, revoked_at, last_used_at,
//    session expiry checks) come from the Clock given, not from the database's now(), so the
//    stores behave the same under a test's FakeClock as the fakes do; timestamptz columns are
//    converted to and from epoch milliseconds exactly.
//  - Database rule violations become Conflict naming the REST API field (`appName`, `title`,
//    `jobGroup`, `jobDesc`, `scheduleType`, `scheduleConf`, `executorHandler`, `childJobId`,
//    `glueRemark`, `username`, `role`, `password`, `groups`, `name`, `expiresAt`, ...); a
//    reference to a missing user (token or session creation) becomes NotFound. Values longer
//    than their column are the API's to reject: the database refuses them (pqxx::data_exception).
//  - Text filters are case-insensitive substrings with LIKE's metacharacters taken literally.
//  - Orders: groups by app name (byte order), jobs newest first, users by id, tokens and script
//    versions newest first, logs by scheduled time newest first, audit entries newest first.
//  - An actor whose user no longer exists is recorded by name only; a remote address that is not
//    an IP address is recorded as unknown rather than failing the change.
//  - Token and session hashes are taken as 32 raw bytes or 64 hex digits
//    (admin/model/token_hash.h); SessionStore::find answers with the hash as it was asked.
//  - TokenStore::authenticate writes last_used_at at most once a minute per token, and judges
//    expiry by the Clock given, like sessions.
//  - UserStore keeps an admin by locking every admin row (SELECT ... FOR UPDATE, in id order)
//    before the row it changes, in every update to a non-admin role and every delete; see
//    pg_account_stores.cpp.
//
// Thread-safe: each call takes its own pooled connection.

#include <memory>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/pg/pg_overview_store.h"
#include "admin/model/stores.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class PgGroupStore final : public GroupStore {
 public:
  PgGroupStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  Page<Group> list(const Filter& filter) override;
  std::optional<Group> get(std::int64_t id) override;
  std::optional<Group> find_by_app_name(std::string_view app_name) override;
  Group create(const Group& group, const Actor& actor) override;
  Group update(const Group& group, const Actor& actor) override;
  void remove(std::int64_t id, const Actor& actor) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

class PgJobStore final : public JobStore {
 public:
  PgJobStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  Page<Job> list(const Filter& filter) override;
  std::optional<Job> get(std::int64_t id) override;
  std::vector<std::int64_t> existing(const std::vector<std::int64_t>& ids) override;
  std::map<std::int64_t, std::vector<std::int64_t>> children_of(const std::vector<std::int64_t>& ids) override;
  Job create(const Job& job, const Actor& actor) override;
  Job update(const Job& job, const Actor& actor) override;
  std::vector<JobLog> remove(std::int64_t id, const Actor& actor) override;
  Job set_trigger_status(std::int64_t id, int status, std::int64_t next_time, std::string_view action,
                         const Actor& actor) override;
  std::vector<std::int64_t> pause_group(std::int64_t group, const Actor& actor) override;
  std::vector<std::int64_t> resume_group(std::int64_t group, const std::map<std::int64_t, std::int64_t>& next_times,
                                         const Actor& actor) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

class PgLogStore final : public LogStore {
 public:
  PgLogStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  Page<JobLog> list(const Filter& filter) override;
  std::optional<JobLog> get(std::int64_t id) override;
  std::optional<JobLog> retry_of(std::int64_t run_id) override;
  std::map<std::int64_t, std::int64_t> groups_of(const std::vector<std::int64_t>& ids) override;
  JobLog create_fire(const JobLog& fire, const Actor& actor) override;
  bool cancel_pending(std::int64_t log_id, const Actor& actor) override;
  std::int64_t clear(const ClearRequest& request, const Actor& actor) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

class PgScriptStore final : public ScriptStore {
 public:
  PgScriptStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  Job save_version(std::int64_t job_id, const std::string& glue_source, const std::string& glue_remark,
                   const Actor& actor) override;
  std::vector<ScriptVersion> versions(std::int64_t job_id) override;
  std::optional<ScriptVersion> get_version(std::int64_t version_id) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

class PgUserStore final : public UserStore {
 public:
  PgUserStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  Page<User> list(const PageRequest& page) override;
  std::optional<User> get(std::int64_t id) override;
  std::optional<User> find_by_username(std::string_view username) override;
  std::int64_t count() override;
  User create(const User& user, const Actor& actor) override;
  User update(const User& user, const Actor& actor) override;
  void remove(std::int64_t id, const Actor& actor) override;
  void set_password(std::int64_t id, const std::string& password_hash, const std::string& keep_session_hash,
                    const Actor& actor) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

class PgTokenStore final : public TokenStore {
 public:
  // How stale last_used_at may get before authenticate() writes it again.
  static constexpr std::int64_t kLastUsedResolutionMs = 60'000;

  PgTokenStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  ApiToken create(std::int64_t user_id, const std::string& name, const std::string& token_hash,
                  std::optional<std::int64_t> expires_at, const Actor& actor) override;
  std::vector<ApiToken> list(std::int64_t user_id) override;
  bool revoke(std::int64_t user_id, std::int64_t token_id, const Actor& actor) override;
  std::optional<std::pair<ApiToken, User>> authenticate(const std::string& token_hash) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

class PgSessionStore final : public SessionStore {
 public:
  PgSessionStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  void create(const Session& session) override;
  std::optional<std::pair<Session, User>> find(const std::string& token_hash) override;
  void remove(const std::string& token_hash) override;
  std::int64_t remove_expired() override;

 private:
  Database& db_;
  common::Clock& clock_;
};

class PgAuditStore final : public AuditStore {
 public:
  PgAuditStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}
  Page<AuditEntry> list(const Filter& filter) override;
  void record(const AuditEntry& entry) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

// One of each store over one Database.
//
//   Database db(options, &PgStores::prepare);
//   PgStores pg(db);
//   ApiRouter ... pg.stores() ...
class PgStores {
 public:
  explicit PgStores(Database& db, common::Clock& clock = common::SystemClock::instance())
      : groups_(db, clock),
        jobs_(db, clock),
        logs_(db, clock),
        scripts_(db, clock),
        users_(db, clock),
        tokens_(db, clock),
        sessions_(db, clock),
        audit_(db, clock),
        overview_(db) {}

  PgStores(const PgStores&) = delete;
  PgStores& operator=(const PgStores&) = delete;

  // Registers every statement the stores use on a new connection (the Database's Preparer).
  static void prepare(pqxx::connection& connection);

  Stores stores() { return {groups_, jobs_, logs_, scripts_, users_, tokens_, sessions_, audit_, overview_}; }

  GroupStore& groups() { return groups_; }
  JobStore& jobs() { return jobs_; }
  LogStore& logs() { return logs_; }
  ScriptStore& scripts() { return scripts_; }
  UserStore& users() { return users_; }
  TokenStore& tokens() { return tokens_; }
  SessionStore& sessions() { return sessions_; }
  AuditStore& audit() { return audit_; }
  OverviewStore& overview() { return overview_; }

 private:
  PgGroupStore groups_;
  PgJobStore jobs_;
  PgLogStore logs_;
  PgScriptStore scripts_;
  PgUserStore users_;
  PgTokenStore tokens_;
  PgSessionStore sessions_;
  PgAuditStore audit_;
  PgOverviewStore overview_;
};

}  // namespace cronwheel::admin
