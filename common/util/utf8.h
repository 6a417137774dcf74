#pragma once

#include <cstddef>
#include <string_view>

// UTF-8 as RFC 3629 defines it (shortest forms only, no surrogates, nothing past U+10FFFF), for
// everything that counts, cuts, checks or cleans text: API fields, mail headers, log lines.
namespace cronwheel::common::utf8 {

// U+FFFD, what stands for bytes that are not UTF-8 where text must be.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// The length (1-4) of the well-formed sequence that starts at text[i], or 0 when none does
// there: a continuation byte, an overlong form, a surrogate, a code point past U+10FFFF, or a
// sequence cut short by the end of `text`. i must be < text.size().
std::size_t sequence_length(std::string_view text, std::size_t i) noexcept;

// The code point of the well-formed sequence of `length` bytes (from sequence_length) at text[i].
char32_t decode(std::string_view text, std::size_t i, std::size_t length) noexcept;

// Whether all of `text` is well-formed UTF-8.
bool is_valid(std::string_view text) noexcept;

// The characters of `text`: its bytes that are not continuation bytes (exact for valid UTF-8;
// for other text, a count that never exceeds its size).
std::size_t char_count(std::string_view text) noexcept;

// The length of the longest prefix of `text` of at most max_bytes bytes that does not end inside
// a character: it backs off over at most three continuation bytes, and cuts at max_bytes where
// the text there is not UTF-8.
std::size_t prefix_length(std::string_view text, std::size_t max_bytes) noexcept;

// The length in bytes of the first max_chars characters of `text` (all of it when it has fewer).
std::size_t char_prefix_length(std::string_view text, std::size_t max_chars) noexcept;

}  // namespace cronwheel::common::utf8
