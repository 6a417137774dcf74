#include "common/util/log_format.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include "common/util/utf8.h"

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

// `text` as the inside of a JSON string.
void json_escape_into(std::string_view text, spdlog::memory_buf_t& out) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = bytes[i];
    if (c == '"' || c == '\\') {
      const char escaped[2] = {'\\', static_cast<char>(c)};
      out.append(escaped, escaped + 2);
      ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      const char escaped[2] = {'\\', c == '\n' ? 'n' : c == '\r' ? 'r' : 't'};
      out.append(escaped, escaped + 2);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
      out.append(escaped, escaped + 6);
      ++i;
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (const std::size_t n = utf8::sequence_length(text, i); n == 0) {
      constexpr std::string_view kReplacement = "\\ufffd";
      out.append(kReplacement.data(), kReplacement.data() + kReplacement.size());
      ++i;
    } else if (n == 2 && c == 0xc2 && bytes[i + 1] <= 0x9f) {  // a C1 control
      const char escaped[6] = {'\\', 'u', '0', '0', kHex[bytes[i + 1] >> 4], kHex[bytes[i + 1] & 0xf]};
      out.append(escaped, escaped + 6);
      i += 2;
    } else {
      out.append(text.data() + i, text.data() + i + n);
      i += n;
    }
  }
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    const auto since_epoch = msg.time.time_since_epoch();
    const auto seconds_part = duration_cast<seconds>(since_epoch);
    const auto millis = duration_cast<milliseconds>(since_epoch - seconds_part).count();
    const std::time_t t = static_cast<std::time_t>(seconds_part.count());
    std::tm utc{};
    ::gmtime_r(&t, &utc);
    char time[40];
    const int length = std::snprintf(time, sizeof time, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                                     static_cast<int>(millis));
    constexpr std::string_view kTime = "{\"time\":\"", kLevel = "\",\"level\":\"", kMsg = "\",\"msg\":\"",
                               kEnd = "\"}\n";
    dest.append(kTime.data(), kTime.data() + kTime.size());
    dest.append(time, time + length);
    dest.append(kLevel.data(), kLevel.data() + kLevel.size());
    const auto level = spdlog::level::to_string_view(msg.level);
    dest.append(level.data(), level.data() + level.size());
    dest.append(kMsg.data(), kMsg.data() + kMsg.size());
    json_escape_into(std::string_view(msg.payload.data(), msg.payload.size()), dest);
    dest.append(kEnd.data(), kEnd.data() + kEnd.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
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

std::unique_ptr<spdlog::formatter> json_log_formatter() { return std::make_unique<JsonFormatter>(); }

void use_log_format(std::string_view format) {
  if (format == "json") {
    spdlog::set_formatter(json_log_formatter());
  } else if (format == "text") {
    spdlog::set_formatter(escaping_log_formatter());
  } else {
    throw std::invalid_argument("log format: expected text or json, got '" + std::string(format) + "'");
  }
}

}  // namespace cronwheel::common
