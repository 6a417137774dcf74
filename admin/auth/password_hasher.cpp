#include "admin/auth/password_hasher.h"

#include <sodium.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "admin/auth/secrets.h"

namespace cronwheel::admin {

// Lets at most `limit` hashes run at once.
class PasswordHasher::Gate {
 public:
  explicit Gate(std::size_t limit) : free_(limit == 0 ? 1 : limit) {}

  class Turn {
   public:
    explicit Turn(Gate& gate) : gate_(gate) {
      std::unique_lock lock(gate_.mutex_);
      gate_.freed_.wait(lock, [this] { return gate_.free_ > 0; });
      --gate_.free_;
    }
    ~Turn() {
      {
        std::lock_guard lock(gate_.mutex_);
        ++gate_.free_;
      }
      gate_.freed_.notify_one();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    Gate& gate_;
  };

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  std::size_t free_;
};

PasswordHasher::PasswordHasher() : PasswordHasher(Options{}) {}

PasswordHasher::PasswordHasher(Options options)
    : options_(options), gate_(std::make_unique<Gate>(options.max_concurrent)) {
  // Also initializes libsodium before the first hash.
  decoy_hash_ = hash(random_secret(16));
}

PasswordHasher::~PasswordHasher() = default;

std::string PasswordHasher::hash(std::string_view password) const {
  if (password.size() > kMaxPasswordBytes) {
    throw std::length_error("password longer than " + std::to_string(kMaxPasswordBytes) + " bytes");
  }
  const bool interactive = options_.strength == Strength::kInteractive;
  const unsigned long long ops = interactive ? crypto_pwhash_OPSLIMIT_INTERACTIVE : crypto_pwhash_OPSLIMIT_MIN;
  const std::size_t mem = interactive ? crypto_pwhash_MEMLIMIT_INTERACTIVE : crypto_pwhash_MEMLIMIT_MIN;
  char out[crypto_pwhash_STRBYTES] = {};
  Gate::Turn turn(*gate_);
  if (crypto_pwhash_str(out, password.data(), password.size(), ops, mem) != 0) {
    throw std::runtime_error("password hashing ran out of memory");
  }
  return out;
}

bool PasswordHasher::verify(std::string_view hash, std::string_view password) const {
  if (password.size() > kMaxPasswordBytes) return false;
  // crypto_pwhash_str_verify reads a NUL-terminated string of at most STRBYTES.
  if (hash.empty() || hash.size() >= crypto_pwhash_STRBYTES || hash.find('\0') != std::string_view::npos) {
    return false;
  }
  char stored[crypto_pwhash_STRBYTES] = {};
  hash.copy(stored, hash.size());
  Gate::Turn turn(*gate_);
  return crypto_pwhash_str_verify(stored, password.data(), password.size()) == 0;
}

}  // namespace cronwheel::admin
