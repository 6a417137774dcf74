#include "admin/alarm/webhook_signature.h"

#include <sodium.h>

#include <stdexcept>

namespace cronwheel::admin {

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  if (sodium_init() < 0) throw std::runtime_error("cannot initialize libsodium");
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(message.data()), message.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&state, mac);
  char hex[2 * crypto_auth_hmacsha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
  return hex;
}

std::string webhook_signature(std::string_view secret, std::int64_t timestamp_s, std::string_view body) {
  std::string message = std::to_string(timestamp_s);
  message += '.';
  message += body;
  return "sha256=" + hmac_sha256_hex(secret, message);
}

}  // namespace cronwheel::admin
