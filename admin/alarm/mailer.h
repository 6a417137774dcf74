#pragma once

// Port: sends one e-mail. Implemented by SmtpMailer (admin/outbound/smtp_mailer.h), used by the
// alarm service to send alarm mails; a fake replaces it in tests.

#include <stdexcept>
#include <string>
#include <vector>

namespace cronwheel::admin {

// One plain-text message. Its fields may come from users as they typed them: a Mailer treats
// every field as hostile (see SmtpMailer for what it refuses, cleans and truncates).
struct Mail {
  std::string from;             // envelope sender and From: header, a bare address ("a@example.com")
  std::vector<std::string> to;  // bare addresses, at least one; each is an envelope recipient and in To:
  std::string subject;          // UTF-8, any characters
  std::string body;             // UTF-8 plain text, lines separated by '\n'
};

// Why a message was not sent, for the log and for the alarm's record. The text says which stage
// failed (the message itself, before connecting; connect; TLS; authentication; sender, recipient
// or message refused; timeout) and the server's answer when there was one. It never holds a
// password.
class MailError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Sends mail. No retries: a caller that wants another attempt calls again.
class Mailer {
 public:
  virtual ~Mailer() = default;

  // Sends one message to all of mail.to and returns once the server accepted it for every
  // recipient. Throws MailError otherwise. A refusal is of the message as a whole: a refused
  // sender or recipient ends the transaction before the message is sent, so nobody gets it.
  // Only after a timeout or a broken connection at the very end of the message may the server
  // have accepted it all the same. Blocks for at most the implementation's bounded timeouts.
  //
  // Thread-safe: calls may run at once from any number of threads.
  virtual void send(const Mail& mail) = 0;
};

}  // namespace cronwheel::admin
