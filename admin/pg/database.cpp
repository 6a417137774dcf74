#include "admin/pg/database.h"

#include <spdlog/spdlog.h>

#include "admin/pg/connection_string.h"

namespace cronwheel::admin {

namespace {
constexpr auto kFirstBackoff = std::chrono::milliseconds(200);
constexpr auto kMaxBackoff = std::chrono::milliseconds(1000);
constexpr int kConnectTimeoutSeconds = 5;
}  // namespace

Database::Database(Options options, Preparer prepare)
    : options_(std::move(options)), prepare_(std::move(prepare)) {
  if (options_.pool_size == 0) throw std::invalid_argument("database pool size must be at least 1");
}

Database::~Database() = default;

Database::Lease::Lease(Lease&& other) noexcept
    : owner_(other.owner_), connection_(std::move(other.connection_)), discard_(other.discard_) {
  other.owner_ = nullptr;
}

Database::Lease::~Lease() {
  if (owner_ != nullptr && connection_) owner_->give_back(std::move(connection_), discard_);
}

std::unique_ptr<pqxx::connection> Database::connect() {
  std::string url = with_connection_parameter(options_.url, "connect_timeout",
                                              std::to_string(kConnectTimeoutSeconds));
  auto connection = std::make_unique<pqxx::connection>(url);
  // Set on the session rather than in the connection string: a URL with options of its own
  // (options=-c search_path=...) would otherwise lose it. libpqxx sets it again on reconnects.
  // An operator's own statement_timeout in the string wins.
  if (options_.statement_timeout.count() > 0 && options_.url.find("statement_timeout") == std::string::npos) {
    connection->set_variable("statement_timeout", std::to_string(options_.statement_timeout.count()));
  }
  if (prepare_) prepare_(*connection);
  return connection;
}

Database::Lease Database::acquire() {
  const auto started = std::chrono::steady_clock::now();
  // Observes the call's duration however it ends; declared before the lock, so it runs after
  // the lock is released.
  struct Measure {
    common::Histogram& wait_seconds;
    std::chrono::steady_clock::time_point started;
    ~Measure() {
      wait_seconds.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  } measure{wait_seconds_, started};
  std::unique_lock lock(mutex_);
  const auto deadline = started + options_.acquire_timeout;
  for (;;) {
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(connection));
    }
    if (open_ < options_.pool_size) {
      const auto now = std::chrono::steady_clock::now();
      if (now < next_connect_attempt_) {
        unreachable_.fetch_add(1, std::memory_order_relaxed);
        throw StoreUnavailable("database unreachable; next connection attempt in " +
                                  std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     next_connect_attempt_ - now)
                                                     .count()) +
                                  " ms");
      }
      ++open_;
      lock.unlock();
      try {
        auto connection = connect();
        lock.lock();
        backoff_ = std::chrono::milliseconds(0);
        next_connect_attempt_ = {};
        return Lease(this, std::move(connection));
      } catch (const std::exception& e) {
        lock.lock();
        --open_;
        backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
        next_connect_attempt_ = std::chrono::steady_clock::now() + backoff_;
        available_.notify_one();
        unreachable_.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("cannot connect to the database (retrying in {} ms): {}", backoff_.count(), e.what());
        throw StoreUnavailable(std::string("cannot connect to the database: ") + e.what());
      }
    }
    if (available_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= options_.pool_size) {
      timeouts_.fetch_add(1, std::memory_order_relaxed);
      throw StoreUnavailable("no database connection free within " +
                                std::to_string(options_.acquire_timeout.count()) + " ms");
    }
  }
}

void Database::give_back(std::unique_ptr<pqxx::connection> connection, bool discard) noexcept {
  std::unique_ptr<pqxx::connection> closing;  // closed outside the lock: it talks to the server
  {
    std::lock_guard lock(mutex_);
    if (discard || !connection->is_open()) {
      --open_;
      closing = std::move(connection);
    } else {
      idle_.push_back(std::move(connection));
    }
  }
  available_.notify_one();
}

std::size_t Database::open_connections() const {
  std::lock_guard lock(mutex_);
  return open_;
}

DatabasePoolStats Database::pool_stats() const {
  DatabasePoolStats stats;
  stats.size = options_.pool_size;
  {
    std::lock_guard lock(mutex_);
    stats.idle = idle_.size();
    stats.in_use = open_ - idle_.size();
  }
  stats.wait_seconds = wait_seconds_.snapshot();
  stats.timeouts = timeouts_.load(std::memory_order_relaxed);
  stats.unreachable = unreachable_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace cronwheel::admin
