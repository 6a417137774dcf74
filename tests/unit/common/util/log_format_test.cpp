#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

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

}  // namespace
}  // namespace cronwheel
