#include "common/util/log_format.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

namespace cronwheel::common {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void escape_into(std::string_view text, spdlog::memory_buf_t& out) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t kept = 0;  // start of the run of bytes not yet copied
  auto flush = [&](std::size_t upto) {
    out.append(text.data() + kept, text.data() + upto);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = bytes[i];
    const bool c1 = c == 0xc2 && i + 1 < text.size() && bytes[i + 1] >= 0x80 && bytes[i + 1] <= 0x9f;
    if (c >= 0x20 && c != 0x7f && !c1) continue;
    flush(i);
    char escaped[6] = {'\\', 'x', kHex[c >> 4], kHex[c & 0xf], 0, 0};
    std::size_t length = 4;
    if (c == '\n' || c == '\r' || c == '\t') {
      escaped[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
      length = 2;
    } else if (c1) {
      const unsigned char code = bytes[i + 1];
      escaped[1] = 'u';
      escaped[2] = '0';
      escaped[3] = '0';
      escaped[4] = kHex[code >> 4];
      escaped[5] = kHex[code & 0xf];
      length = 6;
      ++i;  // the second byte of the sequence
    }
    out.append(escaped, escaped + length);
    kept = i + 1;
  }
  flush(text.size());
}

// The message, escaped: %E in the pattern below.
class EscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    escape_into(std::string_view(msg.payload.data(), msg.payload.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<EscapedMessage>(); }
};

}  // namespace

std::string escape_control_characters(std::string_view text) {
  spdlog::memory_buf_t buffer;
  escape_into(text, buffer);
  return std::string(buffer.data(), buffer.size());
}

std::unique_ptr<spdlog::formatter> escaping_log_formatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<EscapedMessage>('E').set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %E");
  return formatter;
}

void use_escaping_log_format() { spdlog::set_formatter(escaping_log_formatter()); }

}  // namespace cronwheel::common
