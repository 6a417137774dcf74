#include "common/util/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace {

namespace utf8 = cronwheel::common::utf8;
using namespace std::string_view_literals;

TEST(Utf8Test, SequenceLengthOfEachWellFormedWidth) {
  EXPECT_EQ(utf8::sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8::sequence_length("\xC3\xA9", 0), 2u);          // é
  EXPECT_EQ(utf8::sequence_length("\xE4\xB8\xAD", 0), 3u);      // 中
  EXPECT_EQ(utf8::sequence_length("\xF0\x9F\x98\x80", 0), 4u);  // 😀
  EXPECT_EQ(utf8::sequence_length("\xF4\x8F\xBF\xBF", 0), 4u);  // U+10FFFF, the last
}

TEST(Utf8Test, SequenceLengthIsZeroForEveryIllFormedStart) {
  EXPECT_EQ(utf8::sequence_length("\x80", 0), 0u);              // a continuation byte
  EXPECT_EQ(utf8::sequence_length("\xC0\xAF", 0), 0u);          // overlong '/'
  EXPECT_EQ(utf8::sequence_length("\xC1\xBF", 0), 0u);          // overlong
  EXPECT_EQ(utf8::sequence_length("\xE0\x80\xAF", 0), 0u);      // overlong, three bytes
  EXPECT_EQ(utf8::sequence_length("\xF0\x80\x80\xAF", 0), 0u);  // overlong, four bytes
  EXPECT_EQ(utf8::sequence_length("\xED\xA0\x80", 0), 0u);      // U+D800, a surrogate
  EXPECT_EQ(utf8::sequence_length("\xF4\x90\x80\x80", 0), 0u);  // U+110000
  EXPECT_EQ(utf8::sequence_length("\xF5\x80\x80\x80", 0), 0u);  // no such lead byte
  EXPECT_EQ(utf8::sequence_length("\xE4\xB8", 0), 0u);          // cut short by the end
  EXPECT_EQ(utf8::sequence_length("\xE4\x41\xAD", 0), 0u);      // a continuation missing
}

TEST(Utf8Test, DecodeGivesTheCodePoint) {
  EXPECT_EQ(utf8::decode("a", 0, 1), U'a');
  EXPECT_EQ(utf8::decode("\xC3\xA9", 0, 2), U'\u00E9');
  EXPECT_EQ(utf8::decode("x\xE2\x80\xAE", 1, 3), U'\u202E');
  EXPECT_EQ(utf8::decode("\xF0\x9F\x98\x80", 0, 4), U'\U0001F600');
}

TEST(Utf8Test, IsValidOnlyWhenEverySequenceIsWellFormed) {
  EXPECT_TRUE(utf8::is_valid(""));
  EXPECT_TRUE(utf8::is_valid("plain ascii"));
  EXPECT_TRUE(utf8::is_valid("caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(utf8::is_valid("caf\xC3"));
  EXPECT_FALSE(utf8::is_valid("a\xED\xA0\x80z"));
  EXPECT_FALSE(utf8::is_valid("\xFF"));
}

TEST(Utf8Test, CharCountCountsCharactersNotBytes) {
  EXPECT_EQ(utf8::char_count(""), 0u);
  EXPECT_EQ(utf8::char_count("abc"), 3u);
  EXPECT_EQ(utf8::char_count("\xE4\xB8\xAD\xE6\x96\x87"), 2u);
  EXPECT_EQ(utf8::char_count("a\xF0\x9F\x98\x80" "b"), 3u);
}

TEST(Utf8Test, PrefixLengthNeverCutsACharacter) {
  const std::string_view text = "ab\xE4\xB8\xAD" "c";  // a b 中 c
  EXPECT_EQ(utf8::prefix_length(text, 10), text.size());
  EXPECT_EQ(utf8::prefix_length(text, 2), 2u);
  EXPECT_EQ(utf8::prefix_length(text, 3), 2u);  // inside 中: before it
  EXPECT_EQ(utf8::prefix_length(text, 4), 2u);
  EXPECT_EQ(utf8::prefix_length(text, 5), 5u);  // after it
  EXPECT_EQ(utf8::prefix_length(text, 0), 0u);
  EXPECT_EQ(utf8::prefix_length("\xF0\x9F\x98\x80", 3), 0u);
}

TEST(Utf8Test, PrefixLengthCutsAtTheLimitWhereTheTextIsNotUtf8) {
  // Continuation bytes with no lead byte before them: nothing to keep whole.
  EXPECT_EQ(utf8::prefix_length("ab\x80\x80\x80", 3), 3u);
  EXPECT_EQ(utf8::prefix_length("\x80\x80\x80\x80\x80\x80", 4), 4u);
}

TEST(Utf8Test, CharPrefixLengthTakesWholeCharacters) {
  const std::string_view text = "\xE4\xB8\xAD\xE6\x96\x87xyz";  // 中 文 x y z
  EXPECT_EQ(utf8::char_prefix_length(text, 0), 0u);
  EXPECT_EQ(utf8::char_prefix_length(text, 1), 3u);
  EXPECT_EQ(utf8::char_prefix_length(text, 3), 7u);
  EXPECT_EQ(utf8::char_prefix_length(text, 5), text.size());
  EXPECT_EQ(utf8::char_prefix_length(text, 50), text.size());
}

}  // namespace
