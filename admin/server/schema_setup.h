#pragma once

#include <optional>
#include <string>

#include "admin/admin_config.h"

namespace cronwheel::admin {

// What start-up does with the database before a node serves, kept in the composition root so
// that main.cpp names no adapter.

// What libpq finds wrong with --db-url before anything waits for the database (a URL it cannot
// read never becomes reachable); nullopt when it can be used. Never repeats the URL's password.
std::optional<std::string> db_url_problem(const std::string& db_url);

// Connects to config.db_url, retrying while the database is not up yet for at most
// config.db_wait_seconds (a cluster starting beside the admin nodes is normal), and applies
// the pending migrations, logging each one and the version reached. Throws when the database
// stays unreachable or a migration fails.
void migrate_schema(const AdminConfig& config);

}  // namespace cronwheel::admin
