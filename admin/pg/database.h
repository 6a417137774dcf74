#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/store_errors.h"
#include "admin/pg/database_pool_stats.h"
#include "common/util/histogram.h"

namespace cronwheel::admin {

// A small pool of PostgreSQL connections shared by the admin's threads.
//
// Contract:
//  - A connection, and every transaction made from it, belongs to one thread at a time: a
//    caller gets one for the duration of transact()/read() and gives it back after.
//  - Every new connection runs `prepare` (which registers the prepared statements of every
//    store) before first use, so statements are prepared once per connection, not per call.
//  - A broken connection is dropped and replaced on a later call; while the database cannot
//    be reached, new connections are attempted at most once per backoff step (200 ms doubling
//    to 1 s, so the node is back within a second of the database) and callers get
//    StoreUnavailable at once in between.
//  - transact() retries the whole function (in a new transaction) on serialization failures
//    and deadlocks (pqxx::transaction_rollback) and on a connection lost before commit, up to
//    max_attempts times. It never retries a commit whose outcome is unknown
//    (pqxx::in_doubt_error): that propagates.
//  - Transactions are short: never hold one across an HTTP call.
//  - Every acquire() is measured for the metrics (pool_stats()): how long it took and, when it
//    failed, why. That costs one more clock read and a few relaxed atomic adds per call, no lock
//    of its own.
class Database {
 public:
  struct Options {
    std::string url;
    std::size_t pool_size = 8;
    // How long a caller waits for a free connection before StoreUnavailable.
    std::chrono::milliseconds acquire_timeout{5000};
    int max_attempts = 3;
    // Applied to every connection (SET statement_timeout), so a stuck query cannot hold a
    // connection forever. 0: none.
    std::chrono::milliseconds statement_timeout{30'000};
  };
  using Preparer = std::function<void(pqxx::connection&)>;

  explicit Database(Options options, Preparer prepare = {});
  ~Database();

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs fn(pqxx::work&) in a read-write transaction and commits; returns what fn returns.
  template <class F>
  auto transact(F&& fn) -> std::invoke_result_t<F&, pqxx::work&> {
    using R = std::invoke_result_t<F&, pqxx::work&>;
    for (int attempt = 1;; ++attempt) {
      Lease lease = acquire();
      try {
        pqxx::work tx(lease.connection());
        if constexpr (std::is_void_v<R>) {
          fn(tx);
          tx.commit();
          return;
        } else {
          R result = fn(tx);
          tx.commit();
          return result;
        }
      } catch (const pqxx::in_doubt_error&) {
        lease.discard();
        throw;
      } catch (const pqxx::broken_connection&) {
        lease.discard();
        if (attempt >= options_.max_attempts) throw StoreUnavailable("database connection lost");
      } catch (const pqxx::transaction_rollback&) {
        if (attempt >= options_.max_attempts) throw;
      }
    }
  }

  // Runs fn(pqxx::read_transaction&) in a read-only transaction; retried like transact().
  template <class F>
  auto read(F&& fn) -> std::invoke_result_t<F&, pqxx::read_transaction&> {
    for (int attempt = 1;; ++attempt) {
      Lease lease = acquire();
      try {
        pqxx::read_transaction tx(lease.connection());
        return fn(tx);
      } catch (const pqxx::broken_connection&) {
        lease.discard();
        if (attempt >= options_.max_attempts) throw StoreUnavailable("database connection lost");
      } catch (const pqxx::transaction_rollback&) {
        if (attempt >= options_.max_attempts) throw;
      }
    }
  }

  // One connection for the caller's exclusive use until the lease ends (for work that needs a
  // session: advisory locks, several transactions in a row). discard() drops a connection
  // the caller found broken instead of returning it to the pool.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    pqxx::connection& connection() { return *connection_; }
    void discard() noexcept { discard_ = true; }

   private:
    friend class Database;
    Lease(Database* owner, std::unique_ptr<pqxx::connection> connection)
        : owner_(owner), connection_(std::move(connection)) {}
    Database* owner_;
    std::unique_ptr<pqxx::connection> connection_;
    bool discard_ = false;
  };

  // Waits up to acquire_timeout for a connection; throws StoreUnavailable.
  Lease acquire();

  const Options& options() const noexcept { return options_; }

  // Connections open now (idle and leased), for metrics.
  std::size_t open_connections() const;

  // The pool now and its acquisitions since it was made (database_pool_stats.h), for metrics.
  // Takes the pool's lock briefly; any thread.
  DatabasePoolStats pool_stats() const;

 private:
  std::unique_ptr<pqxx::connection> connect();
  void give_back(std::unique_ptr<pqxx::connection> connection, bool discard) noexcept;

  const Options options_;
  const Preparer prepare_;

  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  std::size_t open_ = 0;  // idle + leased + being opened
  std::chrono::steady_clock::time_point next_connect_attempt_{};
  std::chrono::milliseconds backoff_{0};

  // acquire()'s measures (DatabasePoolStats). The buckets reach past acquire_timeout's default
  // (5 s) plus a connect timeout (5 s); the first ones tell a free connection from a short wait.
  common::Histogram wait_seconds_{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  std::atomic<std::uint64_t> timeouts_{0}, unreachable_{0};
};

}  // namespace cronwheel::admin
