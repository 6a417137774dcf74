#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "admin/alarm/mailer.h"

// The text of a mail as it goes after SMTP's DATA (RFC 5322 headers, MIME with a base64 body,
// RFC 2047 encoded words for a subject that is not plain ASCII), and the addresses that may
// appear in it. SmtpMailer's transport is apart (smtp_mailer.h); this part decides what a hostile
// Mail field can make of the message.
namespace cronwheel::admin::mail_text {

inline constexpr std::size_t kMaxAddressBytes = 254;
inline constexpr std::size_t kMaxSubjectBytes = 1'000;
inline constexpr std::size_t kMaxPlainSubjectBytes = 900;
inline constexpr std::size_t kMaxBodyBytes = 1 << 20;

// A bare local@domain of printable ASCII, at most kMaxAddressBytes: a dot-atom local part
// (letters, digits, !#$%&'*+-/=?^_`{|}~ and single inner dots, at most 64 bytes) and a domain of
// dot-separated labels of letters, digits and inner '-' (1 to 63 each). Anything else (spaces,
// "Name <a@b>", ',', ';', '"', control or non-ASCII characters) is not.
bool is_plain_address(std::string_view address);

// The message (CRLF line ends; libcurl adds the dot-stuffing and the final "."): Date (`date`,
// in UTC), From, To (the recipients, comma-separated), Subject, Message-ID (<unique@domain of
// From>), MIME-Version, Content-Type: text/plain; charset=UTF-8, Content-Transfer-Encoding:
// base64, and the body in base64 lines of 76 characters. The addresses must have passed
// is_plain_address. Of the rest, every byte is taken as hostile:
// - the subject's invalid UTF-8 becomes U+FFFD and its control characters (C0, DEL, C1, the
//   Unicode line and paragraph separators; CR and LF among them) become spaces, so it cannot
//   start another header. It is then cut to kMaxSubjectBytes on a character boundary, and sent
//   as RFC 2047 encoded words (=?UTF-8?B?...?=, several folded ones when long) unless it is
//   printable ASCII without "=?" of at most kMaxPlainSubjectBytes;
// - the body's invalid UTF-8 becomes U+FFFD and its line ends become CRLF. A body longer than
//   kMaxBodyBytes is cut on a character boundary and ends with a line saying so.
std::string message_text(const Mail& mail, std::chrono::system_clock::time_point date, std::string_view unique);

}  // namespace cronwheel::admin::mail_text
