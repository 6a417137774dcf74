#include "common/util/utf8.h"

namespace cronwheel::common::utf8 {
namespace {

bool is_continuation(unsigned char c) noexcept { return (c & 0xC0) == 0x80; }

}  // namespace

std::size_t sequence_length(std::string_view text, std::size_t i) noexcept {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  // The second byte's range: narrower after E0 (overlong), ED (surrogates), F0 (overlong) and
  // F4 (past U+10FFFF); C0, C1 and F5-FF never start a sequence.
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() - i < n) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (!is_continuation(byte(i + k))) return 0;
  }
  return n;
}

char32_t decode(std::string_view text, std::size_t i, std::size_t length) noexcept {
  static constexpr unsigned char kLeadBits[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t code = static_cast<unsigned char>(text[i]) & kLeadBits[length];
  for (std::size_t k = 1; k < length; ++k) code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return code;
}

bool is_valid(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::size_t char_count(std::string_view text) noexcept {
  std::size_t count = 0;
  for (unsigned char c : text) count += is_continuation(c) ? 0 : 1;
  return count;
}

std::size_t prefix_length(std::string_view text, std::size_t max_bytes) noexcept {
  if (text.size() <= max_bytes) return text.size();
  // text[max_bytes] is the first byte left out: a cut there is inside a character when it is a
  // continuation byte of a lead byte at most three bytes back.
  for (std::size_t back = 0; back <= 3 && back <= max_bytes; ++back) {
    const auto c = static_cast<unsigned char>(text[max_bytes - back]);
    if (!is_continuation(c)) return c >= 0xC0 ? max_bytes - back : max_bytes;
  }
  return max_bytes;
}

std::size_t char_prefix_length(std::string_view text, std::size_t max_chars) noexcept {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_continuation(static_cast<unsigned char>(text[i])) && chars++ == max_chars) return i;
  }
  return text.size();
}

}  // namespace cronwheel::common::utf8
