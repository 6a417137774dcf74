#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/api/json_body.h"

// Checks of single request fields shared by the resource endpoints. Each throws HttpError 400
// (api_errors.h invalid()) whose message starts with the field's name and says what is wrong,
// e.g. "title: at most 64 characters, got 70".
namespace cronwheel::admin {

// `text` without leading and trailing spaces, tabs and line breaks.
std::string trimmed(std::string_view text);

// `text` cut to at most `max_chars` characters, never inside a UTF-8 sequence.
std::string truncate_chars(std::string_view text, std::size_t max_chars);

// The first character of UTF-8 `text` that makes a one-line name or label lie about itself when
// shown, named ("U+202E (a bidirectional control)"): control characters (C0, DEL, C1),
// bidirectional controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), zero-width and
// invisible characters (U+200B-U+200D, U+2060-U+2064, U+FEFF) and line or paragraph separators
// (U+2028, U+2029); nullopt when there is none. Such characters let one name pass for another in
// the console and the audit log (right-to-left overrides, invisible differences).
std::optional<std::string> deceptive_character(std::string_view text);

// Throws unless `value` (already trimmed when that matters) has at most `max_chars`
// characters and no deceptive_character(); with `required`, also unless it is non-empty. For
// one-line names and labels.
void check_text(std::string_view field, std::string_view value, std::size_t max_chars, bool required);

// Throws unless min <= value <= max; returns the value narrowed to int.
int check_int_range(std::string_view field, std::int64_t value, std::int64_t min, std::int64_t max);

// True for "http://host[:port][/path]" and "https://..." (common/http/url.h says exactly).
bool is_http_url(std::string_view text);

// True for "local@domain.example": RFC 5322 dot-atom characters before the '@' (at most 64),
// dot-separated labels of letters, digits and inner hyphens after it (at most 253).
bool is_email_address(std::string_view text) noexcept;

// A comma-separated list of e-mail addresses ("ops@example.com, oncall@example.com"), each
// checked by is_email_address, joined without spaces ("ops@example.com,oncall@example.com") and
// at most `max_chars` characters. The text is bounded before it is split.
std::string checked_email_list(std::string_view field, std::string_view text, std::size_t max_chars);

// Each entry must be an http(s) URL (field "addressList", message naming the index):
// "addressList[1]: expected an http(s) URL such as http://10.0.0.5:9999/, got 'ftp://x'".
void check_http_urls(std::string_view field, const std::vector<std::string>& urls);

// Splits XXL-JOB's comma-separated lists ("a, b,,c" → a, b, c): entries trimmed, empty ones
// dropped unless `keep_empty` (then "a,,c" → a, "", c: for lists where an empty entry is an
// error worth naming).
std::vector<std::string> split_list(std::string_view text, bool keep_empty = false);

// Refuses, as "<field>: is read-only", a body field that the object's JSON form `answered`
// has but that is not among `writable` (ids, computed times, ...). Other unknown fields are
// left to JsonBody::finish().
void refuse_read_only(const JsonBody& body, const nlohmann::json& answered,
                      std::initializer_list<std::string_view> writable);

// An epoch-milliseconds query parameter (`from`, `to`): empty → nullopt; must be >= 0.
std::optional<std::int64_t> query_epoch_ms(const std::string& value, std::string_view name);

}  // namespace cronwheel::admin
