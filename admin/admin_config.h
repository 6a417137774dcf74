#pragma once

#include <string>

namespace cronwheel::admin {

// Settings of one admin node. Every flag has an environment variable (see main.cpp and the
// README's configuration table).
struct AdminConfig {
  std::string db_url = "postgresql://cronwheel@127.0.0.1:5432/cronwheel";
  std::string listen = "0.0.0.0:8080";  // host:port; port 0 picks a free one
  std::string node_id;                  // default: <hostname>:<port>
  int http_threads = 32;                // HTTP worker threads
  int db_wait_seconds = 60;             // how long start-up waits for the database
  int db_pool_size = 8;                 // PostgreSQL connections the node's work shares
  std::string log_level = "info";

  // Sent as XXL-JOB-ACCESS-TOKEN to executors whose group has no token of its own.
  std::string access_token;

  // REST API sessions: how long a console login lasts, and whether the cookie is marked
  // Secure (set it when the console is served over HTTPS, e.g. behind a TLS proxy).
  int session_hours = 12;
  bool secure_cookie = false;

  // The password of the `admin` user created on first start (no users yet); empty: a random
  // one, printed once to the log. Read from CRONWHEEL_ADMIN_PASSWORD only, never a flag: a
  // process's arguments are visible to every local user.
  std::string admin_password;
};

}  // namespace cronwheel::admin
