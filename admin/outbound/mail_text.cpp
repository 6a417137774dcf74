#include "admin/outbound/mail_text.h"

#include <sodium.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "common/util/utf8.h"

namespace cronwheel::admin::mail_text {
namespace {

namespace utf8 = common::utf8;

constexpr std::size_t kMaxLocalPartBytes = 64;
// Input bytes per RFC 2047 encoded word: 42 bytes are 56 base64 characters, so that
// "Subject: =?UTF-8?B?...?=" stays within the recommended 78 characters a line.
constexpr std::size_t kEncodedWordInputBytes = 42;
constexpr std::size_t kBase64LineLength = 76;

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Labels of letters, digits and inner '-', of 1 to 63 characters, joined by single dots.
bool is_domain(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  std::size_t label_start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '.') {
      std::string_view label = s.substr(label_start, i - label_start);
      if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
      label_start = i + 1;
    } else if (!is_ascii_alnum(s[i]) && s[i] != '-') {
      return false;
    }
  }
  return true;
}

// RFC 5322 atext plus single inner dots (a dot-atom).
bool is_dot_atom(std::string_view s) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-/=?^_`{|}~";
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (s[i + 1] == '.') return false;
    } else if (!is_ascii_alnum(c) && kSpecials.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool is_plain_address(std::string_view address) {
  if (address.size() > kMaxAddressBytes) return false;
  auto at = address.rfind('@');
  if (at == std::string_view::npos) return false;
  std::string_view local = address.substr(0, at);
  return local.size() <= kMaxLocalPartBytes && is_dot_atom(local) && is_domain(address.substr(at + 1));
}

namespace {

// Header text: invalid UTF-8 becomes U+FFFD; C0 controls (CR, LF and tab among them), DEL, C1
// controls and U+2028/U+2029 become spaces.
std::string clean_header_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8::sequence_length(s, i);
    if (n == 0) {
      out += utf8::kReplacementCharacter;
      ++i;
      continue;
    }
    std::string_view ch = s.substr(i, n);
    unsigned char c0 = static_cast<unsigned char>(ch[0]);
    bool control = (n == 1 && (c0 < 0x20 || c0 == 0x7f)) ||
                   (n == 2 && c0 == 0xc2 && static_cast<unsigned char>(ch[1]) < 0xa0) ||
                   ch == "\xE2\x80\xA8" || ch == "\xE2\x80\xA9";
    if (control) {
      out += ' ';
    } else {
      out += ch;
    }
    i += n;
  }
  return out;
}

// Body text: invalid UTF-8 becomes U+FFFD; CRLF and a lone CR become '\n'.
std::string clean_body_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '\r') {
      out += '\n';
      i += (i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
      continue;
    }
    std::size_t n = utf8::sequence_length(s, i);
    if (n == 0) {
      out += utf8::kReplacementCharacter;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
std::string_view utf8_prefix(std::string_view s, std::size_t max) { return s.substr(0, utf8::prefix_length(s, max)); }

// RFC 4648 base64 (libsodium's, the standard alphabet with padding).
std::string base64(std::string_view in) {
  std::string out(sodium_base64_ENCODED_LEN(in.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(in.data()), in.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  out.resize(out.size() - 1);  // the terminating NUL it writes
  return out;
}

std::string subject_header_value(std::string_view subject) {
  std::string clean = clean_header_text(subject);
  std::string_view text = utf8_prefix(clean, kMaxSubjectBytes);
  bool plain = text.size() <= kMaxPlainSubjectBytes &&
               text.find("=?") == std::string_view::npos &&
               std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (plain) return std::string(text);
  // Whole characters per encoded word (RFC 2047 section 5), folded onto continuation lines.
  std::string out;
  while (!text.empty()) {
    std::string_view piece = utf8_prefix(text, kEncodedWordInputBytes);
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + base64(piece) + "?=";
    text.remove_prefix(piece.size());
  }
  return out;
}

// RFC 5322 date-time in UTC, e.g. "Tue, 05 Mar 2024 09:07:03 +0000", whatever the locale.
std::string rfc5322_date(std::chrono::system_clock::time_point now) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%s, %02d %s %04d %02d:%02d:%02d +0000", kDays[tm.tm_wday], tm.tm_mday,
                kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buffer;
}

std::string body_text(std::string_view body) {
  std::string clean = clean_body_text(body);
  if (clean.size() > kMaxBodyBytes) {
    std::size_t original = clean.size();
    clean.resize(utf8_prefix(clean, kMaxBodyBytes).size());
    clean += "\n\n[Message truncated: it had " + std::to_string(original) + " bytes, the first " +
             std::to_string(clean.size()) + " are shown.]\n";
  }
  std::string crlf;
  crlf.reserve(clean.size() + clean.size() / 32);
  for (char c : clean) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  return crlf;
}

}  // namespace

std::string message_text(const Mail& mail, std::chrono::system_clock::time_point date, std::string_view unique) {
  std::string to;
  for (const auto& address : mail.to) {
    if (!to.empty()) to += ", ";
    to += address;
  }
  std::string domain = mail.from.substr(mail.from.rfind('@') + 1);
  std::string message;
  message += "Date: " + rfc5322_date(date) + "\r\n";
  message += "From: " + mail.from + "\r\n";
  message += "To: " + to + "\r\n";
  message += "Subject: " + subject_header_value(mail.subject) + "\r\n";
  message += "Message-ID: <" + std::string(unique) + "@" + domain + ">\r\n";
  message += "MIME-Version: 1.0\r\n";
  message += "Content-Type: text/plain; charset=UTF-8\r\n";
  message += "Content-Transfer-Encoding: base64\r\n";
  message += "\r\n";
  std::string encoded = base64(body_text(mail.body));
  for (std::size_t i = 0; i < encoded.size(); i += kBase64LineLength) {
    message.append(encoded, i, kBase64LineLength);
    message += "\r\n";
  }
  return message;
}

}  // namespace cronwheel::admin::mail_text
