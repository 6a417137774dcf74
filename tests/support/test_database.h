#pragma once

#include <atomic>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include <pqxx/pqxx>

namespace cronwheel::testing {

// A fresh, empty PostgreSQL database for one test, dropped afterwards.
//
// The server comes from CRONWHEEL_TEST_DB_URL (scripts/test.sh starts a throwaway cluster
// and sets it); the URL must name a superuser, since each test creates its own database.
// Running a db test without it is an error, not a skip: a skipped test proves nothing.
class TestDatabase {
 public:
  TestDatabase() : server_url_(server_url()) {
    static std::atomic<int> counter{0};
    std::random_device random;
    name_ = "cw_test_" + std::to_string(random() % 1000000) + "_" + std::to_string(++counter);
    pqxx::connection admin(server_url_);
    pqxx::nontransaction tx(admin);
    tx.exec("CREATE DATABASE " + tx.quote_name(name_));
    url_ = with_database(server_url_, name_);
  }

  ~TestDatabase() {
    try {
      pqxx::connection admin(server_url_);
      pqxx::nontransaction tx(admin);
      tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(name_) + " WITH (FORCE)");
    } catch (const std::exception&) {
      // Leave it; the throwaway cluster goes away with the test run.
    }
  }

  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

  static std::string server_url() {
    const char* url = std::getenv("CRONWHEEL_TEST_DB_URL");
    if (url == nullptr || *url == '\0') {
      throw std::runtime_error(
          "CRONWHEEL_TEST_DB_URL is not set: run db tests through scripts/test.sh, or point it "
          "at a PostgreSQL superuser, e.g. postgresql://cronwheel@127.0.0.1:5432/postgres");
    }
    return url;
  }

  // The same server URL with another database name: postgresql://user@host:port/<name>.
  static std::string with_database(const std::string& url, const std::string& database) {
    auto scheme = url.find("://");
    auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    auto query = url.find('?');
    std::string base = slash == std::string::npos ? url.substr(0, query) : url.substr(0, slash);
    std::string rest = query == std::string::npos ? "" : url.substr(query);
    return base + "/" + database + rest;
  }

 private:
  std::string server_url_;
  std::string name_;
  std::string url_;
};

}  // namespace cronwheel::testing
