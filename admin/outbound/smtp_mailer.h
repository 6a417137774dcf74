#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "admin/alarm/mailer.h"
#include "admin/outbound/mail_text.h"

namespace cronwheel::admin {

// Mailer over SMTP with libcurl: one connection per message (EHLO, STARTTLS, AUTH, MAIL FROM,
// one RCPT TO per recipient, DATA, QUIT), no pooling and no retries.
//
// Security:
// - The server's certificate is always verified, host name included, against ca_file when set
//   and the system's CAs otherwise. Nothing turns verification off.
// - smtps:// uses TLS from the first byte. smtp:// upgrades with STARTTLS as `starttls` says;
//   with kIfOffered a server that offers STARTTLS must then pass verification (no fallback to
//   plain text), and one that does not offer it gets the message in plain text, but never a
//   password: with a username, kIfOffered requires STARTTLS as kRequired does. Only kNever
//   sends a password in plain text, on purpose.
// - The password is only ever given to libcurl for AUTH: it is in no URL, log line or MailError.
//
// What it sends is mail_text::message_text() (mail_text.h): every field of a Mail is treated as
// hostile there. Addresses that are not mail_text::is_plain_address, an empty recipient list and
// more than kMaxRecipients are refused with a MailError before connecting.
//
// MailError's text names the stage that failed, e.g. "cannot connect to smtp://host:port: ...",
// "TLS with smtp://host:port failed: ...", "authentication as "user" refused by ...",
// "smtp://host:port refused the recipient a@b: 550 ...", "timeout talking to ...", with the
// server's last answer when it gave one.
//
// Thread-safe: every send uses its own libcurl handle and connection.
class SmtpMailer final : public Mailer {
 public:
  static constexpr std::size_t kMaxRecipients = 100;
  static constexpr std::size_t kMaxAddressBytes = mail_text::kMaxAddressBytes;
  static constexpr std::size_t kMaxSubjectBytes = mail_text::kMaxSubjectBytes;
  static constexpr std::size_t kMaxPlainSubjectBytes = mail_text::kMaxPlainSubjectBytes;
  static constexpr std::size_t kMaxBodyBytes = mail_text::kMaxBodyBytes;

  struct Options {
    // smtp://host[:port] (port 25 by default; plain or STARTTLS) or smtps://host[:port] (465 by
    // default; TLS from the first byte). host is a name, an IPv4 address or [an IPv6 address].
    // No path, query, fragment or user info.
    std::string url = {};
    // For smtp:// only: whether to upgrade with STARTTLS. smtps:// always uses TLS.
    enum class StartTls {
      kIfOffered,  // when the server offers it (then its certificate must verify); always with AUTH
      kRequired,   // fail with a TLS error when the server does not offer it
      kNever,      // plain text throughout
    };
    StartTls starttls = StartTls::kIfOffered;
    // AUTH (the best mechanism the server offers) when username is not empty.
    std::string username = {};
    std::string password = {};
    // When set: the PEM file of the only CAs trusted for the server's certificate. Otherwise
    // the system's CAs.
    std::string ca_file = {};
    // Until the session is ready for MAIL FROM: TCP, TLS, the greeting, EHLO, STARTTLS and AUTH.
    std::chrono::milliseconds connect_timeout{10'000};
    std::chrono::milliseconds timeout{30'000};  // a whole send, connect included
    // The name given in EHLO: letters, digits, '-' and '.'. Empty: this machine's host name.
    std::string helo_name = {};
  };

  // Throws std::invalid_argument naming the value for a malformed url or helo_name, a password
  // without a username, a ca_file that cannot be read, or a timeout that is not positive.
  explicit SmtpMailer(Options options);

  // See Mailer::send. Throws MailError for every failure, invalid addresses included.
  void send(const Mail& mail) override;

  // The server as scheme://host:port, how MailError names it.
  const std::string& server() const noexcept { return server_; }

 private:
  Options options_;
  std::string server_;    // scheme://host:port
  std::string curl_url_;  // server_ plus /helo_name when set
};

}  // namespace cronwheel::admin
