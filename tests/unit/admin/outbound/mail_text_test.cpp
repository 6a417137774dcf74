#include "admin/outbound/mail_text.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace cronwheel::admin;
using namespace std::chrono_literals;

// 2024-03-05T09:07:03Z, a Tuesday.
const auto kDate = std::chrono::system_clock::time_point(1709629623s);

std::string base64_decoded(std::string_view text) {
  std::string out(text.size(), '\0');
  std::size_t length = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(), text.size(), "\r\n",
                        &length, nullptr, sodium_base64_VARIANT_ORIGINAL) != 0) {
    ADD_FAILURE() << "not base64: " << text;
  }
  out.resize(length);
  return out;
}

struct Parsed {
  std::vector<std::string> header_lines;  // as sent, continuation lines separate
  std::string body;                       // decoded
};

Parsed parsed(const std::string& message) {
  Parsed p;
  const auto end = message.find("\r\n\r\n");
  EXPECT_NE(end, std::string::npos);
  for (std::size_t at = 0; at < end;) {
    auto eol = message.find("\r\n", at);
    p.header_lines.push_back(message.substr(at, eol - at));
    at = eol + 2;
  }
  p.body = base64_decoded(message.substr(end + 4));
  return p;
}

Mail mail(std::string subject, std::string body) {
  return Mail{"cron@example.com", {"ops@example.com", "dev@example.org"}, std::move(subject), std::move(body)};
}

// The subject's text: encoded words decoded and joined, or the plain value.
std::string subject_of(const Parsed& p) {
  std::string subject;
  bool in_subject = false;
  for (const auto& line : p.header_lines) {
    std::string_view value;
    if (line.rfind("Subject: ", 0) == 0) {
      in_subject = true;
      value = std::string_view(line).substr(9);
    } else if (in_subject && line.rfind(" ", 0) == 0) {
      value = std::string_view(line).substr(1);
    } else {
      in_subject = false;
      continue;
    }
    if (value.rfind("=?UTF-8?B?", 0) == 0) {
      EXPECT_EQ(value.substr(value.size() - 2), "?=");
      subject += base64_decoded(value.substr(10, value.size() - 12));
    } else {
      subject += value;
    }
  }
  return subject;
}

TEST(MailTextTest, HasTheHeadersInOrderWithTheDateInUtcAndAMessageIdOfTheSendersDomain) {
  const auto p = parsed(mail_text::message_text(mail("Job 7 failed", "run 12\n"), kDate, "abc123"));
  EXPECT_EQ(p.header_lines, (std::vector<std::string>{
                                "Date: Tue, 05 Mar 2024 09:07:03 +0000",
                                "From: cron@example.com",
                                "To: ops@example.com, dev@example.org",
                                "Subject: Job 7 failed",
                                "Message-ID: <abc123@example.com>",
                                "MIME-Version: 1.0",
                                "Content-Type: text/plain; charset=UTF-8",
                                "Content-Transfer-Encoding: base64",
                            }));
  EXPECT_EQ(p.body, "run 12\r\n");
}

TEST(MailTextTest, ASubjectCannotStartAnotherHeader) {
  const auto message = mail_text::message_text(mail("x\r\nBcc: all@example.net\nX: y\x7f\xC2\x85z", ""), kDate, "u");
  const auto p = parsed(message);
  for (const auto& line : p.header_lines) {
    EXPECT_NE(line.rfind("Bcc:", 0), 0u) << line;
    EXPECT_NE(line.rfind("X:", 0), 0u) << line;
  }
  EXPECT_EQ(subject_of(p), "x  Bcc: all@example.net X: y  z");
}

TEST(MailTextTest, ASubjectBeyondAsciiGoesAsEncodedWordsOfWholeCharacters) {
  std::string subject;
  for (int i = 0; i < 40; ++i) subject += "\xE4\xB8\xAD";  // 中, 120 bytes: several words
  const auto p = parsed(mail_text::message_text(mail(subject, ""), kDate, "u"));
  EXPECT_EQ(subject_of(p), subject);
  for (const auto& line : p.header_lines) EXPECT_LE(line.size(), 78u) << line;
}

TEST(MailTextTest, InvalidUtf8BecomesTheReplacementCharacter) {
  const auto p = parsed(mail_text::message_text(mail("a\xFF" "b", "c\xC3" "d\r\ne\rf"), kDate, "u"));
  EXPECT_EQ(subject_of(p), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(p.body, "c\xEF\xBF\xBD" "d\r\ne\r\nf");
}

TEST(MailTextTest, ALongSubjectIsCutOnACharacterBoundary) {
  std::string subject(mail_text::kMaxSubjectBytes - 1, 'a');
  subject += "\xC3\xA9\xC3\xA9";  // é crosses the limit
  const auto p = parsed(mail_text::message_text(mail(subject, ""), kDate, "u"));
  EXPECT_EQ(subject_of(p), std::string(mail_text::kMaxSubjectBytes - 1, 'a'));
}

TEST(MailTextTest, ABodyPastTheLimitIsCutAndSaysSo) {
  std::string body;
  while (body.size() < mail_text::kMaxBodyBytes + 10) body += "\xC3\xA9";
  const auto p = parsed(mail_text::message_text(mail("s", body), kDate, "u"));
  const std::string kept = body.substr(0, mail_text::kMaxBodyBytes);
  ASSERT_GT(p.body.size(), kept.size());
  EXPECT_EQ(p.body.substr(0, kept.size()), kept);
  EXPECT_NE(p.body.find("[Message truncated: it had " + std::to_string(body.size()) + " bytes"), std::string::npos);
}

TEST(MailTextTest, TheBodyGoesInBase64LinesOf76) {
  const auto message = mail_text::message_text(mail("s", std::string(500, 'z')), kDate, "u");
  const auto body = message.substr(message.find("\r\n\r\n") + 4);
  std::size_t lines = 0;
  for (std::size_t at = 0; at < body.size(); ++lines) {
    const auto eol = body.find("\r\n", at);
    ASSERT_NE(eol, std::string::npos);
    EXPECT_LE(eol - at, 76u);
    at = eol + 2;
  }
  EXPECT_EQ(lines, (500 + 2) / 3 * 4 / 76 + 1);
}

TEST(MailTextTest, OnlyBarePrintableAddressesArePlain) {
  EXPECT_TRUE(mail_text::is_plain_address("a@example.com"));
  EXPECT_TRUE(mail_text::is_plain_address("first.last+tag@sub.example-host.org"));
  for (const char* bad : {"", "a", "@example.com", "a@", "a b@example.com", "Name <a@example.com>",
                          "a@example.com, b@example.com", "a..b@example.com", ".a@example.com", "a@-x.com",
                          "a@x..com", "\"a\"@example.com", "a@exa\nmple.com", "\xC3\xA9@example.com"}) {
    EXPECT_FALSE(mail_text::is_plain_address(bad)) << bad;
  }
  EXPECT_FALSE(mail_text::is_plain_address(std::string(65, 'a') + "@example.com"));
  EXPECT_FALSE(mail_text::is_plain_address("a@" + std::string(250, 'b') + ".com"));
}

}  // namespace
