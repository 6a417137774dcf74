#include "admin/pg/pg_keyset_list.h"

#include <algorithm>
#include <numeric>

#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin::pg {

std::string StatementParams::add(std::string value, const char* type) {
  values_.push_back(std::move(value));
  return "$" + std::to_string(values_.size()) + "::" + type;
}

namespace {

// PostgreSQL's SQLSTATE for a statement cancelled by statement_timeout.
constexpr const char* kQueryCanceled = "57014";

std::string where_of(const std::vector<std::string>& conditions) {
  if (conditions.empty()) return "";
  std::string out = " WHERE ";
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    if (i > 0) out += " AND ";
    out += "(" + conditions[i] + ")";
  }
  return out;
}

// ORDER BY for newest first, or for the reverse walk that reads the page before a key.
std::string order_of(const KeysetList& list, bool backward) {
  const char* dir = backward ? " ASC" : " DESC";
  if (list.time_column) return " ORDER BY " + *list.time_column + dir + ", id" + dir;
  return std::string(" ORDER BY id") + dir;
}

// The condition for rows beyond `key` in the direction of the walk.
std::string key_condition(KeysetList& list, const PageKey& key, bool backward) {
  const char* op = backward ? " > " : " < ";
  const auto id = list.params.add(key.id);
  if (list.time_column) return "(" + *list.time_column + ", id)" + op + "(" + list.params.add(key.time) + ", " + id + ")";
  return "id" + std::string(op) + id;
}

PageKey key_of(const KeysetList& list, const pqxx::row& row) {
  PageKey key;
  key.id = row["id"].as<std::int64_t>();
  if (list.time_column) key.time = row[*list.time_column].as<std::int64_t>();
  return key;
}

pqxx::result exec(pqxx::dbtransaction& tx, const std::string& sql, const StatementParams& params) {
  return tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params.values()));
}

// Counts the rows `conditions` select, up to kMaxCountedTotal + 1, within the budget; nothing
// when the budget ran out.
std::optional<std::int64_t> count_capped(pqxx::dbtransaction& tx, const KeysetList& list,
                                         const std::vector<std::string>& conditions, const StatementParams& params) {
  const std::string sql = "SELECT count(*) FROM (SELECT 1 FROM " + list.table + where_of(conditions) + " LIMIT " +
                          std::to_string(kMaxCountedTotal + 1) + ") counted";
  pqxx::subtransaction counting(tx, "count");
  // SET LOCAL lasts to the end of the enclosing transaction, which ends with this read.
  counting.exec("SET LOCAL statement_timeout = " + std::to_string(list.count_budget.count()));
  try {
    auto n = exec(counting, sql, params)[0][0].as<std::int64_t>();
    counting.commit();
    return n;
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() != kQueryCanceled) throw;
    counting.abort();
    return std::nullopt;
  }
}

}  // namespace

KeysetRows read_keyset_page(pqxx::dbtransaction& tx, KeysetList list) {
  KeysetRows out;
  // statement_timeout 0 would mean no limit at all.
  list.count_budget = std::max(list.count_budget, std::chrono::milliseconds(1));
  const PageRequest page = list.page;
  if (list.groups && list.groups->empty()) return out;

  // The count sees the filters and the groups, never the page's key.
  std::vector<std::string> count_conditions = list.conditions;
  StatementParams count_params = list.params;
  if (list.groups) count_conditions.push_back("job_group = ANY (" + count_params.add(bigint_array(*list.groups), "bigint[]") + ")");

  const bool backward = page.before.has_value();
  std::vector<std::string> conditions = list.conditions;
  if (page.after) conditions.push_back(key_condition(list, *page.after, false));
  if (page.before) conditions.push_back(key_condition(list, *page.before, true));
  const std::int64_t fetch = page.limit + 1;
  const std::string order = order_of(list, backward);
  std::string sql;
  if (list.groups) {
    // One index scan per group, each stopping at offset + limit + 1 rows, merged; the scans
    // read only the keys (index-only where the filters allow), whole rows are read for the
    // page alone.
    const auto groups = list.params.add(bigint_array(*list.groups), "bigint[]");
    conditions.insert(conditions.begin(), "job_group = listed.group_id");
    const std::string keys = list.time_column ? "id, " + *list.time_column : "id";
    sql = "SELECT " + list.columns + " FROM " + list.table + " WHERE id IN (SELECT page.id FROM unnest(" + groups +
          ") AS listed(group_id) CROSS JOIN LATERAL (SELECT " + keys + " FROM " + list.table + where_of(conditions) +
          order + " LIMIT " + std::to_string(page.offset + fetch) + ") page" + order + " LIMIT " +
          std::to_string(fetch) + " OFFSET " + std::to_string(page.offset) + ")" + order;
  } else {
    sql = "SELECT " + list.columns + " FROM " + list.table + where_of(conditions) + order + " LIMIT " +
          std::to_string(fetch) + " OFFSET " + std::to_string(page.offset);
  }
  out.rows = exec(tx, sql, list.params);

  const auto got = static_cast<std::int64_t>(out.rows.size());
  const bool more = got > page.limit;
  const auto shown = std::min(got, page.limit);
  out.order.resize(static_cast<std::size_t>(shown));
  std::iota(out.order.begin(), out.order.end(), std::size_t{0});
  if (backward) std::reverse(out.order.begin(), out.order.end());
  auto row_at = [&](std::size_t i) { return out.rows[static_cast<pqxx::result::size_type>(out.order[i])]; };

  if (shown > 0) {
    const PageKey first = key_of(list, row_at(0));
    const PageKey last = key_of(list, row_at(out.order.size() - 1));
    if (backward) {
      if (more) out.prev = first;
      out.next = last;
    } else {
      if (more) out.next = last;
      if (page.offset > 0 || page.after) out.prev = first;
    }
  } else if (backward) {
    out.next = page.before;
  }

  // A first page that holds everything is its own count.
  if (!page.after && !page.before && page.offset == 0 && !more) {
    out.total = shown;
    return out;
  }
  if (auto counted = count_capped(tx, list, count_conditions, count_params)) {
    out.total = std::min(*counted, kMaxCountedTotal);
    out.total_exact = *counted <= kMaxCountedTotal;
  } else {
    out.total = (page.after || page.before ? 0 : page.offset) + shown + (more ? 1 : 0);
    out.total_exact = false;
  }
  return out;
}

}  // namespace cronwheel::admin::pg
