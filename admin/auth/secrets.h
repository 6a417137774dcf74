#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cronwheel::admin {

// Random secrets and their hashes, for session cookies, CSRF tokens, API tokens and generated
// passwords. Every function initializes libsodium on first use (sodium_init is idempotent and
// thread-safe) and throws std::runtime_error if it cannot.

// `bytes` random bytes from the operating system's CSPRNG, encoded as url-safe base64 without
// padding (A-Z a-z 0-9 - _), fit for cookies, headers and URLs as is.
std::string random_secret(std::size_t bytes = 32);

// SHA-256 of `secret`: 32 raw bytes. What the stores keep instead of a session or API token.
std::string secret_hash(std::string_view secret);

// Lower-case hex of `bytes` (for a hash in log lines and in Principal::session_hash), and
// back; from_hex returns an empty string for text that is not hex of even length.
std::string to_hex(std::string_view bytes);
std::string from_hex(std::string_view hex);

// Compares two strings in time that depends on their length only, not on where they differ.
bool constant_time_equals(std::string_view a, std::string_view b) noexcept;

}  // namespace cronwheel::admin
