// What `cronwheel` prints: aligned tables, cells fit for a terminal, local times with their
// offset, and YAML that reads back as the same JSON.

#include "cli/output.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <ctime>
#include <sstream>
#include <string>

namespace cronwheel::cli {
namespace {

using nlohmann::json;

// Sets TZ for one test and puts the old value back.
class ZoneGuard {
 public:
  explicit ZoneGuard(const char* zone) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    ::setenv("TZ", zone, 1);
    ::tzset();
  }
  ~ZoneGuard() {
    if (old_.empty()) ::unsetenv("TZ");
    else ::setenv("TZ", old_.c_str(), 1);
    ::tzset();
  }

 private:
  std::string old_;
};

std::string printed(const Table& table) {
  std::ostringstream out;
  table.print(out);
  return out.str();
}

TEST(Table, PadsColumnsToTheWidestCellAndNeverEndsALineInSpaces) {
  Table table({"ID", "JOB", "STATUS"});
  table.add_row({"7", "billing/nightly-invoices", "running"});
  table.add_row({"1234", "ops/x", ""});
  EXPECT_EQ(printed(table),
            "ID    JOB                       STATUS\n"
            "7     billing/nightly-invoices  running\n"
            "1234  ops/x\n");
}

TEST(Table, AlignsByDisplayWidthSoWideCharactersTakeTwoColumns) {
  Table table({"NAME", "X"});
  table.add_row({"数据同步", "a"});  // 4 characters, 8 columns
  table.add_row({"café", "b"});      // 4 characters, 4 columns
  EXPECT_EQ(printed(table),
            "NAME      X\n"
            "数据同步  a\n"
            "café      b\n");
}

TEST(Table, MissingCellsAreEmpty) {
  Table table({"A", "B", "C"});
  table.add_row({"1"});
  EXPECT_EQ(printed(table), "A  B  C\n1\n");
}

TEST(CellText, ControlCharactersBecomeSpacesAndBadBytesQuestionMarks) {
  EXPECT_EQ(cell_text("a\nb\tc\x1b[31m"), "a b c [31m");
  EXPECT_EQ(cell_text("ok\xff\xfe!"), "ok?" "?!");
}

TEST(CellText, CutsAtTheWidthWithAnEllipsis) {
  EXPECT_EQ(cell_text("abcdefghij", 5), "abcd…");
  EXPECT_EQ(cell_text("abcde", 5), "abcde");  // fits: not cut
  EXPECT_EQ(cell_text("数据同步任务", 5), "数据…");
  EXPECT_EQ(display_width(cell_text("数据同步任务", 5)), 5u);
}

TEST(LocalTime, IsIsoWithTheZonesOffset) {
  ZoneGuard zone("Asia/Kolkata");
  EXPECT_EQ(local_time(0), "-");
  EXPECT_EQ(local_time(-5), "-");
  EXPECT_EQ(local_time(1767225600000), "2026-01-01T05:30:00+05:30");
  EXPECT_EQ(local_time(1767225600999), "2026-01-01T05:30:00+05:30");  // to the second, down
}

TEST(LocalTime, NegativeOffsetsAndSummerTime) {
  ZoneGuard zone("America/New_York");
  EXPECT_EQ(local_time(1767225600000), "2025-12-31T19:00:00-05:00");
  EXPECT_EQ(local_time(1782864000000), "2026-06-30T20:00:00-04:00");
}

TEST(Yaml, StringsThatWouldReadAsOtherTypesAreQuotedSoTheyReadBackAsStrings) {
  const json document = {{"flags", {"true", "yes", "off", "null", "~", "123", "007", "1e3", "-1", ".5", "", "Y"}},
                         {"plain", "billing job"},
                         {"multi", "line 1\nline 2"},
                         {"number", 42},
                         {"big", 9007199254740993LL},
                         {"float", 1.25},
                         {"yes", true},
                         {"nothing", nullptr},
                         {"empty", json::array()},
                         {"nested", {{"a", json::object()}}}};
  std::ostringstream out;
  print_yaml(out, document);
  const YAML::Node read = YAML::Load(out.str());
  for (std::size_t i = 0; i < document["flags"].size(); ++i) {
    // A string scalar: quoted ("!" tag) in yaml-cpp, which resolves plain scalars later.
    EXPECT_EQ(read["flags"][i].Tag(), "!") << out.str();
    EXPECT_EQ(read["flags"][i].as<std::string>(), document["flags"][i].get<std::string>());
  }
  EXPECT_EQ(read["plain"].as<std::string>(), "billing job");
  EXPECT_EQ(read["multi"].as<std::string>(), "line 1\nline 2");
  EXPECT_EQ(read["number"].as<long long>(), 42);
  EXPECT_EQ(read["big"].as<long long>(), 9007199254740993LL);
  EXPECT_DOUBLE_EQ(read["float"].as<double>(), 1.25);
  EXPECT_TRUE(read["yes"].as<bool>());
  EXPECT_TRUE(read["nothing"].IsNull());
  EXPECT_TRUE(read["empty"].IsSequence());
  EXPECT_EQ(read["empty"].size(), 0u);
  EXPECT_TRUE(read["nested"]["a"].IsMap());
}

TEST(Yaml, EmptyListsAndMapsStayOnTheirKeysLine) {
  std::ostringstream out;
  print_yaml(out, {{"a", json::array()}, {"b", json::object()}, {"c", {1}}});
  EXPECT_EQ(out.str(), "a: []\nb: {}\nc:\n  - 1\n");
}

TEST(Json, IsTheDocumentIndented) {
  std::ostringstream out;
  print_json(out, {{"a", 1}});
  EXPECT_EQ(out.str(), "{\n  \"a\": 1\n}\n");
}

TEST(TextOf, ReadsLenientlyForDisplay) {
  const json job = {{"s", "x"}, {"n", 5}, {"list", {1, 2}}, {"names", {"a", "b"}}, {"none", nullptr}};
  EXPECT_EQ(text_of(job, "s"), "x");
  EXPECT_EQ(text_of(job, "n"), "5");
  EXPECT_EQ(text_of(job, "list"), "1, 2");
  EXPECT_EQ(text_of(job, "names"), "a, b");
  EXPECT_EQ(text_of(job, "none"), "");
  EXPECT_EQ(text_of(job, "missing"), "");
  EXPECT_EQ(text_of(json::array(), "s"), "");
  EXPECT_EQ(int_of(job, "s", -1), -1);
  EXPECT_EQ(int_of(job, "n"), 5);
}

TEST(OutputFormat, NamesParse) {
  EXPECT_EQ(parse_output_format("table"), OutputFormat::kTable);
  EXPECT_EQ(parse_output_format("json"), OutputFormat::kJson);
  EXPECT_EQ(parse_output_format("yaml"), OutputFormat::kYaml);
  EXPECT_THROW(parse_output_format("xml"), std::invalid_argument);
}

}  // namespace
}  // namespace cronwheel::cli
