#pragma once

// How an alarm reaches one destination, whichever asks: the alarm service (every alarm) and
// the REST API ("send a test alarm" of a channel).

#include <string>
#include <vector>

#include "admin/alarm/alarm_message.h"
#include "admin/alarm/mailer.h"
#include "admin/alarm/webhook_sender.h"
#include "admin/model/alarm_channel_store.h"

namespace cronwheel::admin {

// One place an alarm goes: a job's own alarmEmail addresses, or an alarm channel.
struct AlarmDestination {
  std::string name;  // for logs and errors: "alarmEmail" or "channel \"<name>\""
  AlarmChannelKind kind = AlarmChannelKind::kEmail;
  std::string target;  // comma-separated addresses, or the webhook URL
  std::string secret;  // webhooks: the signature's key

  static AlarmDestination of(const AlarmChannel& channel);
  static AlarmDestination job_addresses(const Job& job);
};

// Every destination of a claim: the job's addresses (when it has any), then its channels.
std::vector<AlarmDestination> destinations(const AlarmClaim& claim);

// The senders of every kind of destination. Thread-safe when its senders are (both real ones
// are); they must outlive it.
class AlarmDelivery {
 public:
  // `mailer` may be null (no SMTP server configured): mail destinations then fail at once.
  // `from` is the mails' From address.
  AlarmDelivery(Mailer* mailer, WebhookSender* webhooks, std::string from)
      : mailer_(mailer), webhooks_(webhooks), from_(std::move(from)) {}

  // Sends `text` as a mail to an e-mail destination's addresses, or `webhook_body` to a webhook
  // signed with its secret. One try. Throws MailError or WebhookError saying what failed, and
  // NotConfigured for a mail destination without a mailer (a retry would not help).
  void deliver(const AlarmDestination& to, const AlarmText& text, const std::string& webhook_body) const;

  class NotConfigured : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
  };

 private:
  Mailer* mailer_;
  WebhookSender* webhooks_;
  std::string from_;
};

}  // namespace cronwheel::admin
