#include <gtest/gtest.h>

#include <string>

#include "tests/unit/common/protocol/protocol_error_of.h"

#include "common/protocol/json_reader.h"

namespace cronwheel {
namespace {

using namespace common::protocol;
using nlohmann::json;
using testing::protocol_error_of;

TEST(JsonReader, MalformedJsonIsAProtocolErrorWithPosition) {
  auto message = protocol_error_of([] { parse_json(R"({"jobId":1,)"); });
  EXPECT_EQ(message.rfind("malformed JSON: parse error at line 1, column 12", 0), 0u) << message;
}

TEST(JsonReader, EmptyBodyIsAProtocolError) {
  EXPECT_EQ(protocol_error_of([] { parse_json(""); }), "empty body, expected JSON");
  EXPECT_EQ(protocol_error_of([] { parse_json(" \r\n"); }), "empty body, expected JSON");
}

TEST(JsonReader, HugeMalformedInputGivesABoundedMessage) {
  std::string body = "{\"a\":\"" + std::string(100000, 'x');  // unterminated string
  auto message = protocol_error_of([&] { parse_json(body); });
  EXPECT_LT(message.size(), 400u);
}

TEST(JsonReader, DepthAndValueCountAreBoundedBeforeParsing) {
  // A body of nested or empty arrays costs the parser ~70 bytes per byte: refused unread.
  EXPECT_EQ(protocol_error_of([] { parse_json(std::string(33, '[') + std::string(33, ']')); }),
            "JSON nested deeper than 32 levels");
  EXPECT_EQ(protocol_error_of([] { parse_json(std::string(2'000'000, '[')); }), "JSON nested deeper than 32 levels");
  EXPECT_NO_THROW(parse_json(std::string(32, '[') + std::string(32, ']')));
  std::string many = "[";
  for (int i = 0; i < 200'000; ++i) many += "[],";
  many += "[]]";
  EXPECT_EQ(protocol_error_of([&] { parse_json(many); }), "JSON with more than 200000 values");
  const JsonLimits small{4, 10};
  EXPECT_EQ(protocol_error_of([&] { parse_json("[1,2,3,4,5,6,7,8,9,10,11]", small); }), "JSON with more than 10 values");
  EXPECT_NO_THROW(parse_json("[1,2,3,4,5,6,7,8,9]", small));
  // Brackets and commas inside strings are text, not structure.
  EXPECT_NO_THROW(parse_json(R"(["[[[[[[,,,,,,,,,,,,\"[[[["])", small));
}

TEST(JsonReader, NumbersBeyondDoubleAreAProtocolErrorNotACrash) {
  EXPECT_EQ(protocol_error_of([] { parse_json(R"({"jobId":1e400})"); }), "malformed JSON: a number is out of range");
  EXPECT_EQ(protocol_error_of([] { parse_json("-1e999"); }), "malformed JSON: a number is out of range");
}

TEST(JsonReader, StrictParsingRefusesAKeyGivenTwiceNamingIt) {
  const JsonLimits strict{32, 1000, true};
  EXPECT_EQ(protocol_error_of([&] { parse_json(R"({"role":"normal","role":"admin"})", strict); }), "role: given twice");
  // In a nested object too; the same key in two sibling objects is fine.
  EXPECT_EQ(protocol_error_of([&] { parse_json(R"({"a":{"x":1,"x":2}})", strict); }), "x: given twice");
  // A control character in the key is shown escaped: a NUL would end the message there.
  EXPECT_EQ(protocol_error_of([&] { parse_json(R"({"a\u0000b":1,"a\u0000b":2})", strict); }),
            "a\\u0000b: given twice");
  EXPECT_NO_THROW(parse_json(R"([{"x":1},{"x":2}])", strict));
  EXPECT_NO_THROW(parse_json(R"({"a":{"x":1},"b":{"x":2},"x":3})", strict));
  // Not strict (the wire protocol, as XXL-JOB's Gson reads it): the last one wins.
  EXPECT_EQ(parse_json(R"({"role":"normal","role":"admin"})")["role"], "admin");
}

TEST(JsonReader, StrictParsingRefusesALeadingByteOrderMark) {
  const JsonLimits strict{32, 1000, true};
  EXPECT_EQ(protocol_error_of([&] { parse_json("\xEF\xBB\xBF{\"a\":1}", strict); }),
            "the body starts with a byte order mark; send UTF-8 JSON without one");
  EXPECT_NO_THROW(parse_json("{\"a\":1}", strict));
}

TEST(JsonReader, DumpReplacesInvalidUtf8InsteadOfThrowing) {
  json value = {{"logContent", std::string("ok \xff\xfe end")}};
  std::string out;
  ASSERT_NO_THROW(out = dump_json(value));
  EXPECT_EQ(out, "{\"logContent\":\"ok \xEF\xBF\xBD\xEF\xBF\xBD end\"}");
}

TEST(JsonReader, IntegersAcceptIntegralNumbersOnly) {
  EXPECT_EQ(int32_value(json(7)), 7);
  EXPECT_EQ(int32_value(json(-7)), -7);
  EXPECT_EQ(int32_value(json(3.0)), 3);
  EXPECT_EQ(int32_value(json(nullptr)), 0);
  EXPECT_EQ(int64_value(json(1700647200012)), 1700647200012);
  EXPECT_EQ(protocol_error_of([] { int32_value(json(1.5)); }), "expected an integer, got number 1.5");
  EXPECT_EQ(protocol_error_of([] { int32_value(json("7")); }), "expected an integer, got string");
  EXPECT_EQ(protocol_error_of([] { int64_value(json(true)); }), "expected an integer, got boolean");
  EXPECT_EQ(protocol_error_of([] { int64_value(json::array()); }), "expected an integer, got array");
}

TEST(JsonReader, IntegersOutOfRangeAreErrors) {
  EXPECT_EQ(int32_value(json(2147483647)), 2147483647);
  EXPECT_EQ(int32_value(json(-2147483648LL)), -2147483648LL);
  EXPECT_EQ(protocol_error_of([] { int32_value(json(2147483648LL)); }),
            "out of range for a 32-bit integer: 2147483648");
  EXPECT_EQ(protocol_error_of([] { int32_value(json(3e9)); }),
            "out of range for a 32-bit integer: 3000000000.0");
  EXPECT_EQ(protocol_error_of([] { int64_value(json(18446744073709551615ULL)); }),
            "out of range for a 64-bit integer: 18446744073709551615");
}

TEST(JsonReader, StringsAndBooleansAreStrictButNullIsDefault) {
  EXPECT_EQ(string_value(json("x")), "x");
  EXPECT_EQ(string_value(json(nullptr)), "");
  EXPECT_EQ(protocol_error_of([] { string_value(json(5)); }), "expected a string, got number");
  EXPECT_TRUE(bool_value(json(true)));
  EXPECT_FALSE(bool_value(json(nullptr)));
  EXPECT_EQ(protocol_error_of([] { bool_value(json("true")); }), "expected a boolean, got string");
}

TEST(JsonReader, ObjectReaderNamesTheFieldInErrors) {
  json value = json::parse(R"({"jobId":"12","ok":1})");
  ObjectReader reader(value);
  EXPECT_EQ(protocol_error_of([&] { reader.get_int32("jobId"); }),
            "jobId: expected an integer, got string");
  EXPECT_EQ(protocol_error_of([&] { reader.get_bool("ok"); }), "ok: expected a boolean, got number");
}

TEST(JsonReader, ObjectReaderDefaultsMissingAndNullFields) {
  json value = json::parse(R"({"a":null})");
  ObjectReader reader(value);
  EXPECT_EQ(reader.get_int32("a"), 0);
  EXPECT_EQ(reader.get_int64("missing", 42), 42);
  EXPECT_EQ(reader.get_string("a"), "");
  EXPECT_TRUE(reader.get_bool("missing", true));
}

TEST(JsonReader, ObjectReaderPrefersCanonicalNameAndReportsTheSpellingUsed) {
  json both = json::parse(R"({"logDateTim":1,"logDateTime":2})");
  EXPECT_EQ(ObjectReader(both).get_int64({"logDateTim", "logDateTime"}), 1);
  json alias_only = json::parse(R"({"logDateTim":null,"logDateTime":2})");
  EXPECT_EQ(ObjectReader(alias_only).get_int64({"logDateTim", "logDateTime"}), 2);
  json wrong = json::parse(R"({"logDateTime":"x"})");
  EXPECT_EQ(protocol_error_of([&] { ObjectReader(wrong).get_int64({"logDateTim", "logDateTime"}); }),
            "logDateTime: expected an integer, got string");
}

TEST(JsonReader, ObjectReaderRejectsNonObjects) {
  EXPECT_EQ(protocol_error_of([] { ObjectReader{json::array()}; }), "expected a JSON object, got array");
  EXPECT_EQ(protocol_error_of([] { ObjectReader(json(nullptr)); }), "expected a JSON object, got null");
}

TEST(JsonReader, NestedErrorPaths) {
  ProtocolError leaf("logId", "expected an integer, got string");
  EXPECT_STREQ(leaf.nested_in("[2]").nested_in("callbackList").what(),
               "callbackList[2].logId: expected an integer, got string");
  EXPECT_STREQ(leaf.nested_in("[0]").nested_in("").what(),
               "[0].logId: expected an integer, got string");
  ProtocolError whole("", "expected a JSON object, got string");
  EXPECT_STREQ(whole.nested_in("content").what(), "content: expected a JSON object, got string");
  EXPECT_EQ(whole.nested_in("content").problem(), "expected a JSON object, got string");
}

}  // namespace
}  // namespace cronwheel
