#include <algorithm>

#include <nlohmann/json.hpp>

#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_stores.h"
#include "admin/model/record_json.h"
#include "admin/model/token_hash.h"

// Users, API tokens, sessions and the audit log.

namespace cronwheel::admin {

using namespace pg;

namespace pg {

void prepare_accounts(pqxx::connection& c) {
  c.prepare("user_list", "SELECT " + kUserColumns + ", count(*) OVER () AS total FROM app_user u ORDER BY u.id "
                                                    "LIMIT $1 OFFSET $2");
  c.prepare("user_count", "SELECT count(*) FROM app_user");
  c.prepare("user_get", "SELECT " + kUserColumns + " FROM app_user u WHERE u.id = $1");
  c.prepare("user_lock", "SELECT " + kUserColumns + " FROM app_user u WHERE u.id = $1 FOR UPDATE");
  // Every admin row, locked in id order: what a change that may take away an admin holds
  // while it checks that another admin remains.
  c.prepare("user_admins_lock", "SELECT id FROM app_user WHERE role = 'admin' ORDER BY id FOR UPDATE");
  c.prepare("user_exists", "SELECT 1 FROM app_user WHERE id = $1 FOR KEY SHARE");
  c.prepare("user_by_name", "SELECT " + kUserColumns + " FROM app_user u WHERE u.username = $1");
  c.prepare("user_insert", "INSERT INTO app_user (username, password_hash, role, created_at, updated_at) "
                           "VALUES ($1, $2, $3, " + ts("$4") + ", " + ts("$4") + ") RETURNING id");
  c.prepare("user_update", "UPDATE app_user SET role = $2, password_hash = COALESCE(NULLIF($3, ''), password_hash), "
                           "updated_at = " + ts("$4") + " WHERE id = $1");
  c.prepare("user_set_password", "UPDATE app_user SET password_hash = $2, updated_at = " + ts("$3") + " WHERE id = $1");
  c.prepare("user_groups_clear", "DELETE FROM user_group WHERE user_id = $1");
  c.prepare("user_groups_add",
            "INSERT INTO user_group (user_id, group_id) SELECT DISTINCT $1::bigint, unnest($2::bigint[])");
  c.prepare("user_delete", "DELETE FROM app_user WHERE id = $1");
  c.prepare("user_sessions_end",
            "DELETE FROM user_session WHERE user_id = $1 AND ($2::text IS NULL OR token_hash <> decode($2, 'hex'))");

  c.prepare("token_insert", "INSERT INTO api_token (user_id, name, token_hash, created_at, expires_at) "
                            "VALUES ($1, $2, decode($3, 'hex'), " + ts("$4") + ", " + ts("$5") + ") RETURNING " +
                                kTokenColumns);
  c.prepare("token_list", "SELECT " + kTokenColumns + " FROM api_token WHERE user_id = $1 ORDER BY id DESC");
  c.prepare("token_lock", "SELECT " + kTokenColumns + " FROM api_token WHERE id = $1 AND user_id = $2 FOR UPDATE");
  c.prepare("token_revoke", "UPDATE api_token SET revoked_at = " + ts("$2") + " WHERE id = $1 RETURNING " + kTokenColumns);
  c.prepare("token_live", "SELECT " + kTokenColumns +
                              " FROM api_token WHERE token_hash = decode($1, 'hex') AND revoked_at IS NULL"
                              " AND (expires_at IS NULL OR expires_at > " + ts("$2") + ")");
  c.prepare("user_tokens_revoke", "UPDATE api_token SET revoked_at = " + ts("$2") +
                                      " WHERE user_id = $1 AND revoked_at IS NULL RETURNING " + kTokenColumns);
  c.prepare("token_touch", "UPDATE api_token SET last_used_at = " + ts("$2") + " WHERE id = $1");

  c.prepare("session_insert", "INSERT INTO user_session (token_hash, user_id, csrf_token, created_at, expires_at) "
                              "VALUES (decode($1, 'hex'), $2, $3, " + ts("$4") + ", " + ts("$5") + ")");
  c.prepare("session_find", "SELECT s.csrf_token, " + ms("s.expires_at", "expires_at") + ", " + kUserColumns +
                                " FROM user_session s JOIN app_user u ON u.id = s.user_id"
                                " WHERE s.token_hash = decode($1, 'hex') AND s.expires_at > " + ts("$2"));
  c.prepare("session_delete", "DELETE FROM user_session WHERE token_hash = decode($1, 'hex')");
  c.prepare("session_delete_expired", "DELETE FROM user_session WHERE expires_at <= " + ts("$1"));

  const std::string where =
      " WHERE ($1::bigint IS NULL OR user_id = $1) AND ($2::text = '' OR entity_type = $2)"
      " AND ($3::bigint IS NULL OR entity_id = $3) AND ($4::bigint IS NULL OR at >= " + ts("$4") + ")"
      " AND ($5::bigint IS NULL OR at < " + ts("$5") + ")";
  c.prepare("audit_list", "SELECT " + kAuditColumns + ", count(*) OVER () AS total FROM audit_log" + where +
                              " ORDER BY at DESC, id DESC LIMIT $6 OFFSET $7");
  c.prepare("audit_count", "SELECT count(*) FROM audit_log" + where);
}

}  // namespace pg

namespace {

[[noreturn]] void no_user(std::int64_t id) { throw NotFound("user " + std::to_string(id) + " does not exist"); }

void set_groups(pqxx::work& tx, std::int64_t user_id, const std::vector<std::int64_t>& groups) {
  tx.exec_prepared("user_groups_clear", user_id);
  if (!groups.empty()) tx.exec_prepared("user_groups_add", user_id, bigint_array(groups));
}

User read_user(pqxx::work& tx, std::int64_t id) { return user_from(tx.exec_prepared1("user_get", id)); }

// Locks every admin row and answers their ids. Call it before locking any other user row: every
// transaction that takes more than one user row lock takes the admins first and in id order,
// so two of them cannot deadlock. Two changes that could each take away an admin are thereby
// serialised, and the second one sees what the first one did (READ COMMITTED re-checks a row
// it waited for, so a demoted admin no longer counts).
std::vector<std::int64_t> lock_admins(pqxx::work& tx) {
  std::vector<std::int64_t> ids;
  for (const auto& row : tx.exec_prepared("user_admins_lock")) ids.push_back(row[0].as<std::int64_t>());
  return ids;
}

// Throws unless an admin other than `target` remains among `admins` (locked by lock_admins).
void keep_an_admin(const std::vector<std::int64_t>& admins, const User& target, const char* change) {
  const bool another = std::any_of(admins.begin(), admins.end(), [&](std::int64_t id) { return id != target.id; });
  if (!another) {
    throw Conflict("user " + target.username + " is the last admin and cannot be " + change +
                       "; make another user admin first",
                   "role");
  }
}

// Revokes every token of the user that is not revoked yet, each audited as "token.revoke".
void revoke_tokens(pqxx::work& tx, std::int64_t user_id, std::int64_t now, const Actor& actor) {
  for (const auto& row : tx.exec_prepared("user_tokens_revoke", user_id, now)) {
    ApiToken revoked = token_from(row);
    ApiToken before = revoked;
    before.revoked_at.reset();
    write_audit(tx, now, actor, "token.revoke", "token", revoked.id, to_json(before), to_json(revoked));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Users

Page<User> PgUserStore::list(const PageRequest& p) {
  return db_.read([&](pqxx::read_transaction& tx) {
    auto rows = tx.exec_prepared("user_list", p.limit, p.offset);
    Page<User> page;
    page.items = all_of<User>(rows, user_from);
    page.total = page_total(rows, [&] { return tx.exec_prepared1("user_count")[0].as<std::int64_t>(); });
    return page;
  });
}

std::optional<User> PgUserStore::get(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) { return first_of<User>(tx.exec_prepared("user_get", id), user_from); });
}

std::optional<User> PgUserStore::find_by_username(std::string_view username) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return first_of<User>(tx.exec_prepared("user_by_name", std::string(username)), user_from);
  });
}

std::int64_t PgUserStore::count() {
  return db_.read([&](pqxx::read_transaction& tx) { return tx.exec_prepared1("user_count")[0].as<std::int64_t>(); });
}

User PgUserStore::create(const User& u, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto id = tx.exec_prepared1("user_insert", u.username, u.password_hash, u.role, now)[0].as<std::int64_t>();
      set_groups(tx, id, u.groups);
      User created = read_user(tx, id);
      write_audit(tx, now, actor, "user.create", "user", id, std::nullopt, to_json(created));
      return created;
    });
  });
}

User PgUserStore::update(const User& u, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      // Only a change to another role can take an admin away; it holds the admins first.
      std::vector<std::int64_t> admins;
      if (u.role != "admin") admins = lock_admins(tx);
      auto before = first_of<User>(tx.exec_prepared("user_lock", u.id), user_from);
      if (!before) no_user(u.id);
      if (before->is_admin() && u.role != "admin") keep_an_admin(admins, *before, "demoted");
      tx.exec_prepared("user_update", u.id, u.role, u.password_hash, now);
      set_groups(tx, u.id, u.groups);
      // A password set by someone else ends every session the old password opened, and every
      // token made while it was valid.
      if (!u.password_hash.empty()) {
        tx.exec_prepared("user_sessions_end", u.id, std::optional<std::string>());
        revoke_tokens(tx, u.id, now, actor);
      }
      User updated = read_user(tx, u.id);
      write_audit(tx, now, actor, "user.update", "user", u.id, to_json(*before), to_json(updated));
      return updated;
    });
  });
}

void PgUserStore::remove(std::int64_t id, const Actor& actor) {
  const auto now = clock_.now_ms();
  mapped([&] {
    db_.transact([&](pqxx::work& tx) {
      const auto admins = lock_admins(tx);
      auto before = first_of<User>(tx.exec_prepared("user_lock", id), user_from);
      if (!before) no_user(id);
      if (before->is_admin()) keep_an_admin(admins, *before, "deleted");
      // Sessions, tokens and group grants go with the user (ON DELETE CASCADE); audit entries
      // stay and lose the user id (ON DELETE SET NULL).
      tx.exec_prepared("user_delete", id);
      write_audit(tx, now, actor, "user.delete", "user", id, to_json(*before), std::nullopt);
    });
  });
}

void PgUserStore::set_password(std::int64_t id, const std::string& password_hash, const std::string& keep_session_hash,
                               const Actor& actor) {
  const auto now = clock_.now_ms();
  std::optional<std::string> keep;
  if (!keep_session_hash.empty()) keep = canonical_token_hash(keep_session_hash);
  mapped([&] {
    db_.transact([&](pqxx::work& tx) {
      auto before = first_of<User>(tx.exec_prepared("user_lock", id), user_from);
      if (!before) no_user(id);
      tx.exec_prepared("user_set_password", id, password_hash, now);
      tx.exec_prepared("user_sessions_end", id, keep);
      revoke_tokens(tx, id, now, actor);
      write_audit(tx, now, actor, "user.password", "user", id, to_json(*before), to_json(read_user(tx, id)));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// API tokens

ApiToken PgTokenStore::create(std::int64_t user_id, const std::string& name, const std::string& token_hash,
                              std::optional<std::int64_t> expires_at, const Actor& actor) {
  const auto hash = canonical_token_hash(token_hash);
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      if (tx.exec_prepared("user_exists", user_id).empty()) no_user(user_id);
      ApiToken created = token_from(tx.exec_prepared1("token_insert", user_id, name, hash, now, expires_at));
      write_audit(tx, now, actor, "token.create", "token", created.id, std::nullopt, to_json(created));
      return created;
    });
  });
}

std::vector<ApiToken> PgTokenStore::list(std::int64_t user_id) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<ApiToken>(tx.exec_prepared("token_list", user_id), token_from);
  });
}

bool PgTokenStore::revoke(std::int64_t user_id, std::int64_t token_id, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<ApiToken>(tx.exec_prepared("token_lock", token_id, user_id), token_from);
      if (!before) return false;
      if (before->revoked_at) return true;  // already revoked: nothing changes
      ApiToken revoked = token_from(tx.exec_prepared1("token_revoke", token_id, now));
      write_audit(tx, now, actor, "token.revoke", "token", token_id, to_json(*before), to_json(revoked));
      return true;
    });
  });
}

std::optional<std::pair<ApiToken, User>> PgTokenStore::authenticate(const std::string& token_hash) {
  const auto hash = canonical_token_hash(token_hash);
  const auto now = clock_.now_ms();
  return db_.transact([&](pqxx::work& tx) -> std::optional<std::pair<ApiToken, User>> {
    auto token = first_of<ApiToken>(tx.exec_prepared("token_live", hash, now), token_from);
    if (!token) return std::nullopt;
    if (!token->last_used_at || now - *token->last_used_at >= kLastUsedResolutionMs) {
      tx.exec_prepared("token_touch", token->id, now);
      token->last_used_at = now;
    }
    return std::make_pair(*token, read_user(tx, token->user_id));
  });
}

// ---------------------------------------------------------------------------------------------
// Sessions

void PgSessionStore::create(const Session& s) {
  const auto hash = canonical_token_hash(s.token_hash);
  const auto now = clock_.now_ms();
  mapped([&] {
    db_.transact([&](pqxx::work& tx) {
      if (tx.exec_prepared("user_exists", s.user_id).empty()) no_user(s.user_id);
      tx.exec_prepared("session_insert", hash, s.user_id, s.csrf_token, now, s.expires_at);
    });
  });
}

std::optional<std::pair<SessionStore::Session, User>> PgSessionStore::find(const std::string& token_hash) {
  const auto hash = canonical_token_hash(token_hash);
  const auto now = clock_.now_ms();
  return db_.read([&](pqxx::read_transaction& tx) -> std::optional<std::pair<Session, User>> {
    auto rows = tx.exec_prepared("session_find", hash, now);
    if (rows.empty()) return std::nullopt;
    User user = user_from(rows[0]);
    Session session{token_hash, user.id, rows[0]["csrf_token"].as<std::string>(), rows[0]["expires_at"].as<std::int64_t>()};
    return std::make_pair(std::move(session), std::move(user));
  });
}

void PgSessionStore::remove(const std::string& token_hash) {
  const auto hash = canonical_token_hash(token_hash);
  db_.transact([&](pqxx::work& tx) { tx.exec_prepared("session_delete", hash); });
}

std::int64_t PgSessionStore::remove_expired() {
  const auto now = clock_.now_ms();
  return db_.transact([&](pqxx::work& tx) {
    return static_cast<std::int64_t>(tx.exec_prepared("session_delete_expired", now).affected_rows());
  });
}

// ---------------------------------------------------------------------------------------------
// Audit

Page<AuditEntry> PgAuditStore::list(const Filter& f) {
  return db_.read([&](pqxx::read_transaction& tx) {
    auto rows = tx.exec_prepared("audit_list", f.user_id, f.entity_type, f.entity_id, f.from, f.to, f.page.limit,
                                 f.page.offset);
    Page<AuditEntry> page;
    page.items = all_of<AuditEntry>(rows, audit_from);
    page.total = page_total(rows, [&] {
      return tx.exec_prepared1("audit_count", f.user_id, f.entity_type, f.entity_id, f.from, f.to)[0].as<std::int64_t>();
    });
    return page;
  });
}

void PgAuditStore::record(const AuditEntry& e) {
  for (const auto* text : {&e.before, &e.after}) {
    if (*text && !nlohmann::json::accept(**text)) throw std::invalid_argument("audit before/after must be JSON");
  }
  const auto now = clock_.now_ms();
  mapped([&] {
    db_.transact([&](pqxx::work& tx) {
      tx.exec_prepared("audit_insert", now, e.user_id, e.username, e.action, e.entity_type, e.entity_id, e.before,
                       e.after, inet_param(e.remote_addr));
    });
  });
}

}  // namespace cronwheel::admin
