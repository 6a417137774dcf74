#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include "common/util/log_format.h"

namespace cronwheel {
namespace {

using common::escape_control_characters;

TEST(LogFormat, ControlCharactersAreEscaped) {
  EXPECT_EQ(escape_control_characters("GET /api\n[error] forged"), "GET /api\\n[error] forged");
  EXPECT_EQ(escape_control_characters("a\r\tb"), "a\\r\\tb");
  EXPECT_EQ(escape_control_characters(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(escape_control_characters("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(escape_control_characters("next\xc2\x85line"), "next\\u0085line");
}

TEST(LogFormat, PrintableTextAndUtf8AreKept) {
  EXPECT_EQ(escape_control_characters("plain text"), "plain text");
  EXPECT_EQ(escape_control_characters("调度 é ✓"), "调度 é ✓");
  EXPECT_EQ(escape_control_characters("trailing\xc2"), "trailing\xc2");  // a cut sequence is not a control
  EXPECT_EQ(escape_control_characters(""), "");
}

TEST(LogFormat, EveryLogLineStaysOneLine) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(common::escaping_log_formatter());
  logger.warn("registry: {} registered", "app\n[2026-01-01 00:00:00.000] [info] forged line");
  const std::string line = out.str();
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  EXPECT_NE(line.find("[warning] registry: app\\n[2026-01-01"), std::string::npos) << line;
}

std::string json_line(const std::string& message, spdlog::level::level_enum level = spdlog::level::info) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(common::json_log_formatter());
  logger.log(level, "{}", message);
  return out.str();
}

TEST(LogFormat, JsonLinesAreOneValidObjectEach) {
  const std::string line = json_line("registry: \"app\" \\ registered\n{\"forged\":1}", spdlog::level::warn);
  ASSERT_EQ(line.find('\n'), line.size() - 1) << line;
  auto json = nlohmann::json::parse(line);
  EXPECT_EQ(json["level"], "warning");
  EXPECT_EQ(json["msg"], "registry: \"app\" \\ registered\n{\"forged\":1}");
  const std::string time = json["time"];
  ASSERT_EQ(time.size(), 24u) << time;  // 2026-11-27T16:55:00.123Z
  EXPECT_EQ(time[10], 'T');
  EXPECT_EQ(time.back(), 'Z');
}

TEST(LogFormat, JsonEscapesControlsAndReplacesInvalidUtf8) {
  const std::string line = json_line(std::string("a\x1b[31m\x7f \xc2\x85 \xff\xfe 调度 \xe2\x82", 23));
  EXPECT_NE(line.find("a\\u001b[31m\\u007f \\u0085 \\ufffd\\ufffd 调度 \\ufffd\\ufffd\"}"), std::string::npos) << line;
  auto json = nlohmann::json::parse(line);  // valid JSON, valid UTF-8
  EXPECT_EQ(json["msg"], "a\x1b[31m\x7f \xc2\x85 \xef\xbf\xbd\xef\xbf\xbd 调度 \xef\xbf\xbd\xef\xbf\xbd");
}

TEST(LogFormat, UnknownFormatsAreRefused) { EXPECT_THROW(common::use_log_format("xml"), std::invalid_argument); }

}  // namespace
}  // namespace cronwheel
