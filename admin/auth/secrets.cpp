#include "admin/auth/secrets.h"

#include <sodium.h>

#include <stdexcept>
#include <vector>

namespace cronwheel::admin {

namespace {

void ensure_sodium() {
  // sodium_init() is thread-safe and returns 1 when already initialized; the static makes
  // every later call free.
  static const int initialized = sodium_init();
  if (initialized < 0) throw std::runtime_error("libsodium cannot be initialized");
}

}  // namespace

std::string random_secret(std::size_t bytes) {
  ensure_sodium();
  std::vector<unsigned char> raw(bytes);
  randombytes_buf(raw.data(), raw.size());
  constexpr int kVariant = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
  std::string encoded(sodium_base64_ENCODED_LEN(bytes, kVariant), '\0');
  sodium_bin2base64(encoded.data(), encoded.size(), raw.data(), raw.size(), kVariant);
  sodium_memzero(raw.data(), raw.size());
  encoded.resize(encoded.find('\0'));  // the encoded length counts the terminating NUL
  return encoded;
}

std::string secret_hash(std::string_view secret) {
  ensure_sodium();
  std::string digest(crypto_hash_sha256_BYTES, '\0');
  crypto_hash_sha256(reinterpret_cast<unsigned char*>(digest.data()),
                     reinterpret_cast<const unsigned char*>(secret.data()), secret.size());
  return digest;
}

std::string to_hex(std::string_view bytes) {
  std::string hex(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  hex.pop_back();
  return hex;
}

std::string from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return {};
  std::string bytes(hex.size() / 2, '\0');
  std::size_t length = 0;
  const char* end = nullptr;
  if (sodium_hex2bin(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), hex.data(), hex.size(), nullptr,
                     &length, &end) != 0 ||
      end != hex.data() + hex.size() || length != bytes.size()) {
    return {};
  }
  return bytes;
}

bool constant_time_equals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace cronwheel::admin
