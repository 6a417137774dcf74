#pragma once

// A TestDatabase at this build's schema, and the options the PostgreSQL stores' tests open their
// pool on it with.

#include <cstddef>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/pg/migrator.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {

// Applies every migration of this build to `db`. Returns true, for a fixture member initialised
// before the pool that needs the schema.
inline bool migrate_schema(const TestDatabase& db) {
  pqxx::connection c(db.url());
  admin::Migrator().migrate(c);
  return true;
}

// A pool of `pool_size` connections to `db`, the other options as in production.
inline admin::Database::Options pool_options(const TestDatabase& db, std::size_t pool_size) {
  admin::Database::Options o;
  o.url = db.url();
  o.pool_size = pool_size;
  return o;
}

}  // namespace cronwheel::testing
