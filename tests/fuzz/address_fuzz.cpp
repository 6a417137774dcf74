// Fuzz target: the URL and address parsers: common/http/url.h parse_http_url, the field checks
// of admin/api/field_checks.h (is_email_address, split_list, trimmed, truncate_chars,
// check_http_urls) and common/util/utf8.h. The input is one field value.
//
// Properties:
//  - parse_http_url never throws; a URL it accepts has the documented shape (http/https, a
//    lower-case host, a port 0-65535, a path that is empty or starts with '/'), and the URL
//    rebuilt from its parts parses to the same parts; is_http_url and check_http_urls agree;
//  - utf8::is_valid agrees with a table-driven reference (Unicode's well-formed byte
//    sequences); truncate_chars and utf8::prefix_length cut a prefix of at most the given
//    characters or bytes and never inside a character;
//  - an accepted email address has one '@', a 1-64 byte local part, a 1-253 byte domain of
//    dot-separated 1-63 byte labels, printable ASCII only; letter case does not matter;
//  - split_list gives non-empty trimmed entries without commas, and splitting them joined
//    again gives them back.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "admin/api/field_checks.h"
#include "common/http/http_error.h"
#include "common/http/url.h"
#include "common/util/utf8.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace cronwheel;
using common::http::HttpUrl;

bool is_lower_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '[' ||
         c == ']' || c == ':';
}

void check_url(std::string_view text) {
  const auto parsed = common::http::parse_http_url(text);
  const bool ok = std::holds_alternative<HttpUrl>(parsed);
  FUZZ_CHECK(admin::is_http_url(text) == ok, "is_http_url agrees with parse_http_url");
  bool refused = false;
  try {
    admin::check_http_urls("addressList", {std::string(text)});
  } catch (const common::http::HttpError& e) {
    refused = true;
    FUZZ_CHECK(e.info().status == 400 && e.info().field == "addressList", "check_http_urls answers 400 addressList");
  }
  FUZZ_CHECK(refused == !ok, "check_http_urls refuses what parse_http_url refuses");
  if (!ok) {
    FUZZ_CHECK(!std::get<std::string>(parsed).empty(), "a refused URL gets a reason");
    return;
  }
  const HttpUrl& url = std::get<HttpUrl>(parsed);
  FUZZ_CHECK(text.size() <= common::http::kMaxUrlBytes, "an accepted URL is within kMaxUrlBytes");
  FUZZ_CHECK(url.scheme == "http" || url.scheme == "https", "the scheme is http or https");
  FUZZ_CHECK(!url.host.empty(), "the host is not empty");
  for (char c : url.host) FUZZ_CHECK(is_lower_host_char(c), "the host is lower-case name or IPv6 characters");
  FUZZ_CHECK(url.port >= 0 && url.port <= 65535, "the port is 0-65535");
  FUZZ_CHECK(url.effective_port() >= 1 && url.effective_port() <= 65535, "the effective port is 1-65535");
  FUZZ_CHECK(url.path.empty() || url.path.front() == '/', "the path is empty or starts with '/'");
  FUZZ_CHECK(url.path.find_first_of("?#") == std::string::npos, "the path stops at '?' and '#'");
  FUZZ_CHECK(url.query.find('#') == std::string::npos, "the query stops at '#'");

  const std::string rebuilt = url.origin() + url.path + (url.query.empty() ? "" : "?" + url.query);
  const auto again = common::http::parse_http_url(rebuilt);
  FUZZ_CHECK(std::holds_alternative<HttpUrl>(again), "a URL rebuilt from its parts parses");
  const HttpUrl& u = std::get<HttpUrl>(again);
  FUZZ_CHECK(u.scheme == url.scheme && u.host == url.host && u.port == url.port && u.path == url.path &&
                 u.query == url.query,
             "a URL rebuilt from its parts parses to the same parts");
}

// Unicode 15, table 3-7: the well-formed UTF-8 byte sequences.
bool reference_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  auto in = [&](std::size_t at, unsigned lo, unsigned hi) { return at < n && p[at] >= lo && p[at] <= hi; };
  while (i < n) {
    const unsigned c = p[i];
    if (c <= 0x7f) {
      i += 1;
    } else if (c >= 0xc2 && c <= 0xdf && in(i + 1, 0x80, 0xbf)) {
      i += 2;
    } else if (c == 0xe0 && in(i + 1, 0xa0, 0xbf) && in(i + 2, 0x80, 0xbf)) {
      i += 3;
    } else if (((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) && in(i + 1, 0x80, 0xbf) &&
               in(i + 2, 0x80, 0xbf)) {
      i += 3;
    } else if (c == 0xed && in(i + 1, 0x80, 0x9f) && in(i + 2, 0x80, 0xbf)) {
      i += 3;
    } else if (c == 0xf0 && in(i + 1, 0x90, 0xbf) && in(i + 2, 0x80, 0xbf) && in(i + 3, 0x80, 0xbf)) {
      i += 4;
    } else if (c >= 0xf1 && c <= 0xf3 && in(i + 1, 0x80, 0xbf) && in(i + 2, 0x80, 0xbf) && in(i + 3, 0x80, 0xbf)) {
      i += 4;
    } else if (c == 0xf4 && in(i + 1, 0x80, 0x8f) && in(i + 2, 0x80, 0xbf) && in(i + 3, 0x80, 0xbf)) {
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

void check_utf8(std::string_view text, std::size_t max_chars) {
  namespace utf8 = common::utf8;
  const bool valid = utf8::is_valid(text);
  FUZZ_CHECK(valid == reference_utf8(text), "utf8::is_valid agrees with Unicode's table 3-7");
  const std::size_t chars = utf8::char_count(text);
  FUZZ_CHECK(chars <= text.size(), "char_count counts at most one character a byte");
  const std::string cut = admin::truncate_chars(text, max_chars);
  FUZZ_CHECK(text.substr(0, cut.size()) == cut, "truncate_chars cuts a prefix");
  FUZZ_CHECK(utf8::char_count(cut) <= max_chars, "truncate_chars keeps at most max_chars characters");
  if (chars <= max_chars) FUZZ_CHECK(cut == text, "truncate_chars keeps text that fits");
  if (valid) FUZZ_CHECK(utf8::is_valid(cut), "truncate_chars never cuts inside a character");
  const std::size_t max_bytes = max_chars;  // the same budget, as bytes
  const std::size_t kept = utf8::prefix_length(text, max_bytes);
  FUZZ_CHECK(kept <= std::min(max_bytes, text.size()), "prefix_length keeps at most max_bytes");
  FUZZ_CHECK(kept + 3 >= std::min(max_bytes, text.size()), "prefix_length drops at most one character's tail");
  if (valid) FUZZ_CHECK(utf8::is_valid(text.substr(0, kept)), "prefix_length never cuts inside a character");
}

void check_email(std::string_view text) {
  const bool ok = admin::is_email_address(text);
  std::string flipped(text);
  for (char& c : flipped) {
    if (c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    } else if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  FUZZ_CHECK(admin::is_email_address(flipped) == ok, "letter case does not change an email address's validity");
  if (!ok) return;
  const auto at = text.find('@');
  FUZZ_CHECK(at != std::string_view::npos && text.find('@', at + 1) == std::string_view::npos,
             "an email address has exactly one '@'");
  FUZZ_CHECK(at >= 1 && at <= 64, "the local part is 1-64 bytes");
  const auto domain = text.substr(at + 1);
  FUZZ_CHECK(!domain.empty() && domain.size() <= 253, "the domain is 1-253 bytes");
  for (char c : text) FUZZ_CHECK(c > 0x20 && c < 0x7f, "an email address is printable ASCII");
  std::size_t start = 0;
  while (true) {
    const auto dot = domain.find('.', start);
    const auto label = domain.substr(start, dot == std::string_view::npos ? dot : dot - start);
    FUZZ_CHECK(!label.empty() && label.size() <= 63, "domain labels are 1-63 bytes");
    FUZZ_CHECK(label.front() != '-' && label.back() != '-', "domain labels neither start nor end with '-'");
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
}

void check_split_list(std::string_view text) {
  const auto items = admin::split_list(text);
  std::size_t commas = 0;
  for (char c : text) commas += c == ',' ? 1 : 0;
  FUZZ_CHECK(items.size() <= commas + 1, "split_list gives at most one entry more than commas");
  std::string joined;
  for (const auto& item : items) {
    FUZZ_CHECK(!item.empty(), "split_list drops empty entries");
    FUZZ_CHECK(item.find(',') == std::string::npos, "entries hold no comma");
    FUZZ_CHECK(admin::trimmed(item) == item, "entries are trimmed");
    FUZZ_CHECK(text.find(item) != std::string_view::npos, "entries come from the text");
    if (!joined.empty()) joined += ", ";
    joined += item;
  }
  FUZZ_CHECK(admin::split_list(joined) == items, "splitting the joined entries gives them back");
  const std::string t = admin::trimmed(text);
  FUZZ_CHECK(admin::trimmed(t) == t, "trimmed is idempotent");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_url(text);
  check_utf8(text, size == 0 ? 0 : data[0] % 64);
  check_email(text);
  check_split_list(text);
  return 0;
}
