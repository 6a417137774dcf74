#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace cronwheel::admin {

// The SHA-256 of a session or API token secret as the stores take it: either the 32 raw bytes
// or their 64 hex digits (either case). Both name the same hash, so callers may keep whichever
// form they hold. Returns the canonical form the stores key on: 64 lowercase hex digits.
// Throws std::invalid_argument for anything else.
inline std::string canonical_token_hash(std::string_view hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  if (hash.size() == 32) {
    hex.reserve(64);
    for (unsigned char c : hash) {
      hex.push_back(kDigits[c >> 4]);
      hex.push_back(kDigits[c & 0xf]);
    }
    return hex;
  }
  if (hash.size() == 64) {
    hex.reserve(64);
    for (char c : hash) {
      if (c >= '0' && c <= '9') {
        hex.push_back(c);
      } else if (c >= 'a' && c <= 'f') {
        hex.push_back(c);
      } else if (c >= 'A' && c <= 'F') {
        hex.push_back(static_cast<char>(c - 'A' + 'a'));
      } else {
        throw std::invalid_argument("token hash: 64 characters that are not hex digits");
      }
    }
    return hex;
  }
  throw std::invalid_argument("token hash: expected 32 bytes or 64 hex digits, got " +
                              std::to_string(hash.size()) + " characters");
}

}  // namespace cronwheel::admin
