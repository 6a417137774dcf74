#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace cronwheel::admin {

// Hashes and verifies user passwords with libsodium's crypto_pwhash_str: argon2id, a random
// salt, and the cost parameters encoded in the resulting "$argon2id$..." string, so a hash made
// with other parameters still verifies.
//
// argon2id is deliberately expensive: at the interactive limits one hash or verify takes tens
// of milliseconds of CPU and 64 MiB of memory. At most `max_concurrent` of them run at once
// (the others wait for a turn), so a burst of logins cannot exhaust the node's memory.
//
// Thread-safe.
class PasswordHasher {
 public:
  enum class Strength {
    kInteractive,  // OPSLIMIT/MEMLIMIT_INTERACTIVE: production
    kMinimum,      // OPSLIMIT/MEMLIMIT_MIN: tests only, where the cost would only slow them down
  };
  struct Options {
    Strength strength = Strength::kInteractive;
    std::size_t max_concurrent = 4;
  };

  // Passwords people choose have at least this many characters (checked where they are chosen:
  // the API and the bootstrap user).
  static constexpr std::size_t kMinPasswordLength = 8;
  // Passwords longer than this are refused before hashing (argon2 would accept them, but
  // nobody needs them and they only cost time).
  static constexpr std::size_t kMaxPasswordBytes = 1024;

  PasswordHasher();
  explicit PasswordHasher(Options options);
  ~PasswordHasher();

  PasswordHasher(const PasswordHasher&) = delete;
  PasswordHasher& operator=(const PasswordHasher&) = delete;

  // The crypto_pwhash_str string for `password`. Throws std::length_error when the password is
  // longer than kMaxPasswordBytes, std::runtime_error when libsodium cannot get the memory.
  std::string hash(std::string_view password) const;

  // True when `password` matches `hash`. False for a wrong password, a hash that is not a
  // crypto_pwhash_str string, and a password longer than kMaxPasswordBytes.
  bool verify(std::string_view hash, std::string_view password) const;

  // A valid hash of no real password. Verifying against it costs what verifying a real one
  // does, so a login for an unknown user takes as long as one with a wrong password.
  const std::string& decoy_hash() const noexcept { return decoy_hash_; }

 private:
  class Gate;

  Options options_;
  std::unique_ptr<Gate> gate_;
  std::string decoy_hash_;
};

}  // namespace cronwheel::admin
