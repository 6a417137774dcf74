#include "common/ical/libical_session.h"

#include "common/util/utf8.h"

namespace cronwheel::common::ical::detail {

namespace {

std::mutex& libical_mutex() {
  static std::mutex mutex;
  return mutex;
}

bool is_control(char32_t c) { return c < 0x20 || (c >= 0x7F && c < 0xA0); }

void trim_spaces(std::string& text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) {
    text.clear();
    return;
  }
  text.erase(text.find_last_not_of(' ') + 1);
  text.erase(0, first);
}

}  // namespace

LibicalSession::LibicalSession() : lock_(libical_mutex()) {
  static const bool configured = [] {
    icalerror_set_errors_are_fatal(0);
    return true;
  }();
  (void)configured;
  icalerror_clear_errno();
}

std::string clean_text(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8::sequence_length(text, i);
    if (length == 0) {
      out += utf8::kReplacementCharacter;
      ++i;
    } else if (is_control(utf8::decode(text, i, length))) {
      out += ' ';
      i += length;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  trim_spaces(out);
  out.resize(utf8::prefix_length(out, max_bytes));
  trim_spaces(out);
  return out;
}

std::uint64_t fnv1a64(std::string_view text) noexcept {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::string with_thousands(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return value < 0 ? "-" + digits : digits;
}

}  // namespace cronwheel::common::ical::detail
