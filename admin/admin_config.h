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
  std::string log_level = "info";
};

}  // namespace cronwheel::admin
