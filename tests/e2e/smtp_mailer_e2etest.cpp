// SmtpMailer against a real SMTP server (tests/support/smtp_sink.py): what arrives, STARTTLS,
// implicit TLS, AUTH, and how every kind of failure is reported.

#include "admin/outbound/smtp_mailer.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/mail_message.h"
#include "tests/support/smtp_sink.h"

namespace cronwheel::admin {
namespace {

using cronwheel::testing::SmtpSink;
using cronwheel::testing::Parsed;
using cronwheel::testing::base64_decode;
using cronwheel::testing::decoded_body;
using cronwheel::testing::parse;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::chrono::milliseconds kShortTimeout{2'000};

// Whether `s` is a sequence of whole UTF-8 characters (by their lead and continuation bytes).
bool whole_utf8_characters(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    auto lead = static_cast<unsigned char>(s[i]);
    std::size_t n = lead < 0x80           ? 1
                    : (lead >> 5) == 0x6  ? 2
                    : (lead >> 4) == 0xe  ? 3
                    : (lead >> 3) == 0x1e ? 4
                                          : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// Decodes a Subject made of RFC 2047 B-encoded words separated by folding white space; each
// word must decode to whole UTF-8 characters on its own.
std::string decode_encoded_words(const std::string& value) {
  static const std::regex kWord(R"(=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=)");
  std::string out;
  std::size_t position = 0;
  for (auto it = std::sregex_iterator(value.begin(), value.end(), kWord); it != std::sregex_iterator();
       ++it) {
    std::string between = value.substr(position, it->position() - position);
    EXPECT_EQ(between.find_first_not_of(" \t"), std::string::npos) << "text between encoded words: " << value;
    EXPECT_LE(it->length(), 75) << "encoded word longer than 75 characters";
    std::string piece = base64_decode((*it)[1].str());
    EXPECT_TRUE(whole_utf8_characters(piece)) << "encoded word cuts a character: " << it->str();
    out += piece;
    position = it->position() + it->length();
  }
  EXPECT_EQ(position, value.size()) << "text after the encoded words: " << value;
  return out;
}

bool every_line_ends_with_crlf(const std::string& data) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '\n' && (i == 0 || data[i - 1] != '\r')) return false;
    if (data[i] == '\r' && (i + 1 == data.size() || data[i + 1] != '\n')) return false;
  }
  return true;
}

// A loopback port with a socket bound to it: with listen, connections to it succeed and then
// hear nothing; without, they are refused. Nobody else can take the port while it lives.
class ReservedPort {
 public:
  explicit ReservedPort(bool listening) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        (listening && ::listen(fd_, 16) != 0)) {
      throw std::runtime_error("cannot reserve a loopback port");
    }
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~ReservedPort() { ::close(fd_); }
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

SmtpMailer::Options options_for(const SmtpSink& sink) {
  SmtpMailer::Options options;
  options.url = sink.url();
  options.connect_timeout = std::chrono::seconds(10);
  options.timeout = std::chrono::seconds(20);
  return options;
}

Mail alarm_mail() {
  return {"cronwheel@example.com", {"ops@example.com"}, "Job 42 failed", "The job failed.\n"};
}

// The MailError text of a send that must fail.
std::string failure_of(SmtpMailer& mailer, const Mail& mail) {
  try {
    mailer.send(mail);
  } catch (const MailError& e) {
    return e.what();
  }
  ADD_FAILURE() << "send did not throw MailError";
  return {};
}

TEST(SmtpMailerE2E, SendsAPlainMessageThatArrivesWithItsHeadersAndBody) {
  SmtpSink sink;
  SmtpMailer mailer(options_for(sink));
  Mail mail{"cronwheel@example.com",
            {"ops@example.com", "on-call+alarms@sub.example.org"},
            "Job 42 failed on executor-1",
            "Job 42 (nightly-backup) failed.\nExit code 3.\n\nLast log line: disk full\n"};
  auto before = std::chrono::system_clock::now();

  mailer.send(mail);

  ASSERT_TRUE(sink.wait_for_messages(1));
  auto messages = sink.messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].mail_from, "cronwheel@example.com");
  EXPECT_THAT(messages[0].rcpt_tos, ElementsAre("ops@example.com", "on-call+alarms@sub.example.org"));
  EXPECT_TRUE(every_line_ends_with_crlf(messages[0].data)) << messages[0].data;

  Parsed parsed = parse(messages[0].data);
  EXPECT_EQ(parsed.one("From"), "cronwheel@example.com");
  EXPECT_EQ(parsed.one("To"), "ops@example.com, on-call+alarms@sub.example.org");
  EXPECT_EQ(parsed.one("Subject"), "Job 42 failed on executor-1");
  EXPECT_EQ(parsed.one("MIME-Version"), "1.0");
  EXPECT_EQ(parsed.one("Content-Type"), "text/plain; charset=UTF-8");
  EXPECT_EQ(parsed.one("Content-Transfer-Encoding"), "base64");
  EXPECT_THAT(parsed.one("Message-ID"), ::testing::MatchesRegex("<[A-Za-z0-9_-]{16,}@example\\.com>"));

  std::string date = parsed.one("Date");
  EXPECT_THAT(
      date,
      ::testing::MatchesRegex(
          "(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} "
          "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} \\+0000"));
  std::tm tm{};
  ASSERT_NE(::strptime(date.c_str(), "%a, %d %b %Y %H:%M:%S +0000", &tm), nullptr) << date;
  auto sent = std::chrono::system_clock::from_time_t(::timegm(&tm));
  EXPECT_GE(sent, std::chrono::floor<std::chrono::seconds>(before));
  EXPECT_LE(sent, std::chrono::system_clock::now());

  EXPECT_EQ(decoded_body(parsed),
            "Job 42 (nightly-backup) failed.\r\nExit code 3.\r\n\r\nLast log line: disk full\r\n");
}

TEST(SmtpMailerE2E, EachMessageHasItsOwnMessageId) {
  SmtpSink sink;
  SmtpMailer mailer(options_for(sink));

  mailer.send(alarm_mail());
  mailer.send(alarm_mail());

  ASSERT_TRUE(sink.wait_for_messages(2));
  auto messages = sink.messages();
  EXPECT_NE(parse(messages[0].data).one("Message-ID"), parse(messages[1].data).one("Message-ID"));
}

TEST(SmtpMailerE2E, SendsFromSeveralThreadsAtOnce) {
  SmtpSink sink({.tls = true});
  auto options = options_for(sink);
  options.ca_file = sink.cert_file();
  SmtpMailer mailer(options);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 3;
  std::atomic<int> failures{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Mail mail = alarm_mail();
        mail.subject = "thread " + std::to_string(t) + " mail " + std::to_string(i);
        try {
          mailer.send(mail);
        } catch (const MailError&) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(sink.wait_for_messages(kThreads * kPerThread));
  std::set<std::string> subjects;
  std::set<std::string> ids;
  for (const auto& message : sink.messages()) {
    Parsed parsed = parse(message.data);
    subjects.insert(parsed.one("Subject"));
    ids.insert(parsed.one("Message-ID"));
  }
  EXPECT_EQ(subjects.size(), static_cast<std::size_t>(kThreads * kPerThread));
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kThreads * kPerThread));
}

TEST(SmtpMailerE2E, UsesStartTlsAndAuthenticationWhenTheServerRequiresThem) {
  // The sink refuses mail before STARTTLS and offers AUTH only after it.
  SmtpSink sink({.tls = true, .require_starttls = true, .auth = "alarms:s3cret-pass"});
  auto options = options_for(sink);
  options.starttls = SmtpMailer::Options::StartTls::kRequired;
  options.ca_file = sink.cert_file();
  options.username = "alarms";
  options.password = "s3cret-pass";
  SmtpMailer mailer(options);

  mailer.send(alarm_mail());

  ASSERT_TRUE(sink.wait_for_messages(1));
  EXPECT_THAT(sink.messages()[0].rcpt_tos, ElementsAre("ops@example.com"));
}

TEST(SmtpMailerE2E, StartTlsIsUsedWhenOfferedByDefault) {
  SmtpSink sink({.tls = true, .require_starttls = true});
  auto options = options_for(sink);
  options.ca_file = sink.cert_file();
  SmtpMailer mailer(options);

  mailer.send(alarm_mail());

  ASSERT_TRUE(sink.wait_for_messages(1));
}

TEST(SmtpMailerE2E, SendsOverImplicitTls) {
  SmtpSink sink({.tls = true, .smtps = true, .auth = "alarms:s3cret-pass"});
  auto options = options_for(sink);
  ASSERT_THAT(options.url, ::testing::StartsWith("smtps://"));
  options.ca_file = sink.cert_file();
  options.username = "alarms";
  options.password = "s3cret-pass";
  SmtpMailer mailer(options);

  mailer.send(alarm_mail());

  ASSERT_TRUE(sink.wait_for_messages(1));
  EXPECT_EQ(parse(sink.messages()[0].data).one("Subject"), "Job 42 failed");
}

TEST(SmtpMailerE2E, WrongPasswordIsAnAuthenticationError) {
  SmtpSink sink({.tls = true, .auth = "alarms:s3cret-pass"});
  auto options = options_for(sink);
  options.ca_file = sink.cert_file();
  options.username = "alarms";
  options.password = "wrong-Pa55word";
  SmtpMailer mailer(options);

  std::string error = failure_of(mailer, alarm_mail());

  EXPECT_THAT(error,
              AllOf(HasSubstr("authentication as \"alarms\" refused by " + sink.url()), HasSubstr("535")));
  EXPECT_THAT(error, Not(HasSubstr("wrong-Pa55word")));
  EXPECT_TRUE(sink.messages().empty());
}

TEST(SmtpMailerE2E, ServerNotListeningIsAConnectionError) {
  ReservedPort nobody(/*listening=*/false);
  SmtpMailer mailer({.url = "smtp://127.0.0.1:" + std::to_string(nobody.port())});

  std::string error = failure_of(mailer, alarm_mail());

  EXPECT_THAT(error, HasSubstr("cannot connect to smtp://127.0.0.1:" + std::to_string(nobody.port()) + ": "));
}

TEST(SmtpMailerE2E, SilentServerIsATimeout) {
  ReservedPort silent(/*listening=*/true);  // the kernel accepts; nobody ever greets
  SmtpMailer mailer({.url = "smtp://127.0.0.1:" + std::to_string(silent.port()), .timeout = kShortTimeout});
  auto start = std::chrono::steady_clock::now();

  std::string error = failure_of(mailer, alarm_mail());

  EXPECT_THAT(error, HasSubstr("timeout talking to smtp://127.0.0.1:" + std::to_string(silent.port())));
  EXPECT_LT(std::chrono::steady_clock::now() - start, kShortTimeout + std::chrono::seconds(5));
}

TEST(SmtpMailerE2E, RequiredStartTlsFailsAgainstAServerWithoutIt) {
  SmtpSink sink;
  auto options = options_for(sink);
  options.starttls = SmtpMailer::Options::StartTls::kRequired;
  SmtpMailer mailer(options);

  std::string error = failure_of(mailer, alarm_mail());

  EXPECT_THAT(error, AllOf(HasSubstr("TLS with " + sink.url() + " failed"), HasSubstr("STARTTLS")));
  EXPECT_TRUE(sink.messages().empty());
}

// A server that does not offer STARTTLS never gets the password by default: if-offered means
// "required" once there is a password to send. Only "never" sends it in plain text.
TEST(SmtpMailerE2E, APasswordIsNeverSentWithoutTlsUnlessStartTlsIsNever) {
  SmtpSink sink({.auth = "alarms:s3cret-pass"});
  auto options = options_for(sink);
  options.username = "alarms";
  options.password = "s3cret-pass";
  SmtpMailer if_offered(options);
  std::string error = failure_of(if_offered, alarm_mail());
  EXPECT_THAT(error, AllOf(HasSubstr("TLS with " + sink.url() + " failed"), HasSubstr("STARTTLS")));
  EXPECT_TRUE(sink.messages().empty());

  options.starttls = SmtpMailer::Options::StartTls::kNever;
  SmtpMailer plain(options);
  plain.send(alarm_mail());
  ASSERT_TRUE(sink.wait_for_messages(1));
}

TEST(SmtpMailerE2E, UntrustedCertificateIsATlsError) {
  // The sink offers STARTTLS with a self-signed certificate the mailer was not told to trust:
  // the mailer must neither accept it nor fall back to plain text.
  SmtpSink sink({.tls = true});
  SmtpMailer mailer(options_for(sink));

  std::string error = failure_of(mailer, alarm_mail());

  EXPECT_THAT(error, HasSubstr("TLS with " + sink.url() + " failed"));
  EXPECT_TRUE(sink.messages().empty());
}

TEST(SmtpMailerE2E, UntrustedCertificateOverImplicitTlsIsATlsError) {
  SmtpSink sink({.tls = true, .smtps = true});
  SmtpMailer mailer(options_for(sink));

  std::string error = failure_of(mailer, alarm_mail());

  EXPECT_THAT(error, HasSubstr("TLS with " + sink.url() + " failed"));
  EXPECT_TRUE(sink.messages().empty());
}

TEST(SmtpMailerE2E, RefusedRecipientNamesTheRecipient) {
  SmtpSink sink({.refuse_rcpt = {"gone@example.com"}});
  SmtpMailer mailer(options_for(sink));
  Mail mail = alarm_mail();
  mail.to = {"ops@example.com", "gone@example.com", "dev@example.com"};

  std::string error = failure_of(mailer, mail);

  EXPECT_THAT(error, AllOf(HasSubstr(sink.url() + " refused the recipient gone@example.com: 550"),
                           HasSubstr("Recipient address rejected")));
  // The send failed as a whole: nobody got the message. (The sink writes a message before it
  // accepts it, so one would already be there.)
  EXPECT_TRUE(sink.messages().empty());
}

TEST(SmtpMailerE2E, NonAsciiSubjectIsEncodedAndDecodesBack) {
  SmtpSink sink;
  SmtpMailer mailer(options_for(sink));
  const std::string subjects[] = {
      "Tâche « sauvegarde » échouée",
      // Long enough for several encoded words, with multi-byte characters across every boundary.
      "备份任务失败 🚨 " + std::string(40, 'x') +
          " Überwachung: Prüfung fehlgeschlagen — 日本語のテキスト 🚨🚨🚨",
      "plain text with =?UTF-8?B?QQ==?= in it",
  };
  for (const auto& subject : subjects) {
    Mail mail = alarm_mail();
    mail.subject = subject;
    mailer.send(mail);
  }

  ASSERT_TRUE(sink.wait_for_messages(std::size(subjects)));
  auto messages = sink.messages();
  for (std::size_t i = 0; i < std::size(subjects); ++i) {
    SCOPED_TRACE(subjects[i]);
    Parsed parsed = parse(messages[i].data);
    for (unsigned char c : parsed.header_block) ASSERT_LT(c, 0x80) << "non-ASCII in the headers";
    std::string line;
    std::istringstream lines(parsed.header_block);
    while (std::getline(lines, line)) EXPECT_LE(line.size(), 79u) << line;  // 78 + the CR
    EXPECT_EQ(decode_encoded_words(parsed.one("Subject")), subjects[i]);
  }
  EXPECT_GE(std::count(messages[1].data.begin(), messages[1].data.end(), '?'), 8) << "expected several words";
}

TEST(SmtpMailerE2E, HeaderInjectionInTheSubjectIsNeutralised) {
  SmtpSink sink;
  SmtpMailer mailer(options_for(sink));
  const std::string subjects[] = {
      "a\r\nBcc: x@evil.example",   "b\nTo: y@evil.example\n\nforged body", "c\rX-Injected: 1",
      "d\xE2\x80\xA8X-Injected: 2",  // U+2028 LINE SEPARATOR
      "e\xC2\x85X-Injected: 3",      // U+0085 NEXT LINE
  };
  for (const auto& subject : subjects) {
    Mail mail = alarm_mail();
    mail.subject = subject;
    mailer.send(mail);
  }

  ASSERT_TRUE(sink.wait_for_messages(std::size(subjects)));
  auto messages = sink.messages();
  ASSERT_EQ(messages.size(), std::size(subjects));
  for (const auto& message : messages) {
    SCOPED_TRACE(message.data);
    EXPECT_THAT(message.rcpt_tos, ElementsAre("ops@example.com"));
    EXPECT_TRUE(every_line_ends_with_crlf(message.data));
    Parsed parsed = parse(message.data);
    std::vector<std::string> names;
    for (const auto& [name, value] : parsed.headers) names.push_back(name);
    EXPECT_THAT(names, ElementsAre("Date", "From", "To", "Subject", "Message-ID", "MIME-Version",
                                   "Content-Type", "Content-Transfer-Encoding"));
    EXPECT_EQ(parsed.one("To"), "ops@example.com");
    EXPECT_EQ(decoded_body(parsed), "The job failed.\r\n");
  }
  EXPECT_EQ(parse(messages[0].data).one("Subject"), "a  Bcc: x@evil.example");
  EXPECT_EQ(parse(messages[1].data).one("Subject"), "b To: y@evil.example  forged body");
  EXPECT_EQ(parse(messages[2].data).one("Subject"), "c X-Injected: 1");
  EXPECT_EQ(parse(messages[3].data).one("Subject"), "d X-Injected: 2");
  EXPECT_EQ(parse(messages[4].data).one("Subject"), "e X-Injected: 3");
}

TEST(SmtpMailerE2E, InvalidAddressesAreRefusedBeforeConnecting) {
  // Nobody listens there: an address that got through would fail with "cannot connect".
  ReservedPort nobody(/*listening=*/false);
  SmtpMailer mailer({.url = "smtp://127.0.0.1:" + std::to_string(nobody.port())});
  const std::string invalid[] = {
      "",
      "no-at-sign",
      "@example.com",
      "ops@",
      "ops@@example.com",
      "ops @example.com",
      "Ops <ops@example.com>",
      "<ops@example.com>",
      "ops@example.com, evil@example.com",
      "ops@example.com;evil@example.com",
      "\"ops\"@example.com",
      "ops@example.com\r\nRCPT TO:<evil@example.com>",
      "ops@example.com\n",
      "ops\t@example.com",
      "op\x01s@example.com",
      "öps@example.com",
      "ops@exa mple.com",
      "ops@example..com",
      ".ops@example.com",
      "ops@-example.com",
      std::string(65, 'a') + "@example.com",
      "ops@" + std::string(64, 'b') + ".example.com",  // a label longer than 63
      // 257 bytes of otherwise valid labels
      "a@" + std::string(60, 'b') + "." + std::string(60, 'c') + "." + std::string(60, 'd') + "." +
          std::string(60, 'e') + ".example.com",
  };
  for (const auto& address : invalid) {
    SCOPED_TRACE(address);
    Mail as_recipient = alarm_mail();
    as_recipient.to = {"ops@example.com", address};
    EXPECT_THAT(failure_of(mailer, as_recipient),
                AllOf(HasSubstr("invalid recipient address"), HasSubstr("refused before connecting")));
    Mail as_sender = alarm_mail();
    as_sender.from = address;
    EXPECT_THAT(failure_of(mailer, as_sender),
                AllOf(HasSubstr("invalid sender address"), HasSubstr("refused before connecting")));
  }

  Mail nobody_to = alarm_mail();
  nobody_to.to.clear();
  EXPECT_THAT(failure_of(mailer, nobody_to), HasSubstr("no recipient"));
  Mail too_many = alarm_mail();
  too_many.to.assign(101, "ops@example.com");
  EXPECT_THAT(failure_of(mailer, too_many), HasSubstr("101 recipients, more than 100"));

  // The same mailer gets as far as connecting with valid addresses.
  Mail valid = alarm_mail();
  valid.to.assign(100, "ops@example.com");
  EXPECT_THAT(failure_of(mailer, valid), HasSubstr("cannot connect"));
}

TEST(SmtpMailerE2E, LongBodyIsTruncatedWithANote) {
  SmtpSink sink;
  SmtpMailer mailer(options_for(sink));
  // 'é' is two bytes: starting at an odd offset, one of them straddles the 1 MiB limit.
  std::string body = "x";
  while (body.size() < SmtpMailer::kMaxBodyBytes + 1000) body += "\xC3\xA9";
  ASSERT_EQ(static_cast<unsigned char>(body[SmtpMailer::kMaxBodyBytes]), 0xA9)
      << "the limit must cut a character";
  Mail mail = alarm_mail();
  mail.body = body;

  mailer.send(mail);

  ASSERT_TRUE(sink.wait_for_messages(1));
  std::string received = decoded_body(parse(sink.messages()[0].data));
  std::string kept = body.substr(0, SmtpMailer::kMaxBodyBytes - 1);  // the cut character left out
  ASSERT_GT(received.size(), kept.size());
  EXPECT_EQ(received.substr(0, kept.size()), kept);
  EXPECT_EQ(received.substr(kept.size()), "\r\n\r\n[Message truncated: it had " +
                                              std::to_string(body.size()) + " bytes, the first " +
                                              std::to_string(kept.size()) + " are shown.]\r\n");
}

TEST(SmtpMailerE2E, BodyLineEndsBecomeCrlfAndInvalidUtf8IsReplaced) {
  SmtpSink sink;
  SmtpMailer mailer(options_for(sink));
  Mail mail = alarm_mail();
  mail.body = "unix\nwindows\r\nold mac\rbad \xFF byte\n";

  mailer.send(mail);

  ASSERT_TRUE(sink.wait_for_messages(1));
  EXPECT_EQ(decoded_body(parse(sink.messages()[0].data)),
            "unix\r\nwindows\r\nold mac\r\nbad \xEF\xBF\xBD byte\r\n");
}

TEST(SmtpMailerE2E, MalformedOptionsAreRefusedByTheConstructor) {
  const std::string bad_urls[] = {
      "",
      "127.0.0.1:25",
      "http://127.0.0.1",
      "smtp://",
      "smtp://:25",
      "smtp://host:0",
      "smtp://host:65536",
      "smtp://host:",
      "smtp://host:x",
      "smtp://user:pw@host",
      "smtp://host/path",
      "smtp://host?query",
      "smtp://host#fragment",
      "smtp://ho st",
      "smtp://[::1",
      "smtp://[zz]:25",
  };
  for (const auto& url : bad_urls) {
    SCOPED_TRACE(url);
    try {
      SmtpMailer mailer({.url = url});
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("invalid SMTP url \"" + url + "\""));
    }
  }
  EXPECT_EQ(SmtpMailer({.url = "smtp://Mail.Example.com"}).server(), "smtp://mail.example.com:25");
  EXPECT_EQ(SmtpMailer({.url = "smtps://mail.example.com"}).server(), "smtps://mail.example.com:465");
  EXPECT_EQ(SmtpMailer({.url = "SMTP://127.0.0.1:2525"}).server(), "smtp://127.0.0.1:2525");
  EXPECT_EQ(SmtpMailer({.url = "smtp://[::1]:587"}).server(), "smtp://[::1]:587");

  EXPECT_THROW(SmtpMailer({.url = "smtp://host", .password = "without-user"}), std::invalid_argument);
  EXPECT_THROW(SmtpMailer({.url = "smtp://host", .ca_file = "/nonexistent/ca.pem"}), std::invalid_argument);
  EXPECT_THROW(SmtpMailer({.url = "smtp://host", .timeout = std::chrono::milliseconds(0)}),
               std::invalid_argument);
  EXPECT_THROW(SmtpMailer({.url = "smtp://host", .helo_name = "bad name"}), std::invalid_argument);
  EXPECT_THROW(SmtpMailer({.url = "smtp://host", .helo_name = "x\r\nMAIL FROM:<a@b>"}),
               std::invalid_argument);
}

}  // namespace
}  // namespace cronwheel::admin
