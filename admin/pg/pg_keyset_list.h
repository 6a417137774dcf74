#pragma once

// The paged read behind the job and run lists (admin/store/pg_*.cpp only), built to stay fast
// with millions of rows:
//  - newest first by (time column, id), or by id alone, so each page is an index scan that
//    stops after limit + 1 rows; `after`/`before` keys page from where the last page ended
//    (keyset), offsets are capped by the API;
//  - a restriction to groups reads each group's newest rows through its own (job_group, ...)
//    index and merges them (a LATERAL join), so a user whose groups hold few rows never waits
//    for everyone else's;
//  - the statement is planned for the filters actually given (only they appear in it, their
//    values bound as parameters), never a catch-all "$n IS NULL OR ..." that one cached plan
//    has to serve for every combination;
//  - the total is counted only up to kMaxCountedTotal and within a time budget; beyond either
//    it is reported as a lower bound.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/records.h"
#include "admin/model/stores.h"

namespace cronwheel::admin::pg {

// Parameters of one dynamically built statement, as text with a cast at their placeholder.
class StatementParams {
 public:
  // Adds `value` and returns its placeholder, e.g. "$3::bigint".
  std::string add(std::string value, const char* type);
  std::string add(std::int64_t value) { return add(std::to_string(value), "bigint"); }
  const std::vector<std::string>& values() const { return values_; }

 private:
  std::vector<std::string> values_;
};

struct KeysetList {
  std::string table;                       // "job_info", "job_log"
  std::string columns;                     // the SELECT list (must include id and time_column)
  std::optional<std::string> time_column;  // ordered by (time, id); by id alone without it
  // Filters joined with AND, their placeholders taken from `params`.
  std::vector<std::string> conditions;
  StatementParams params;
  // Only rows of these groups (job_group); none: every group.
  std::optional<std::vector<std::int64_t>> groups;
  PageRequest page;
  // How long counting the total may take before it is given up (the page is read first).
  std::chrono::milliseconds count_budget{50};
};

struct KeysetRows {
  pqxx::result rows;  // the page's rows, newest first (at most page.limit)
  std::vector<std::size_t> order;  // indexes into rows, in list order
  std::int64_t total = 0;
  bool total_exact = true;
  std::optional<PageKey> next;
  std::optional<PageKey> prev;
};

// Reads the page `list` describes, and its total.
KeysetRows read_keyset_page(pqxx::dbtransaction& tx, KeysetList list);

// The page of records `from` makes of the rows.
template <class T, class From>
Page<T> page_from(const KeysetRows& read, From from) {
  Page<T> page;
  page.items.reserve(read.order.size());
  for (auto i : read.order) page.items.push_back(from(read.rows[static_cast<pqxx::result::size_type>(i)]));
  page.total = read.total;
  page.total_exact = read.total_exact;
  page.next = read.next;
  page.prev = read.prev;
  return page;
}

}  // namespace cronwheel::admin::pg
