#include "admin/alarm/alarm_delivery.h"

namespace cronwheel::admin {

AlarmDestination AlarmDestination::of(const AlarmChannel& channel) {
  return {"channel \"" + channel.name + "\"", channel.kind, channel.target, channel.secret};
}

AlarmDestination AlarmDestination::job_addresses(const Job& job) {
  return {"alarmEmail", AlarmChannelKind::kEmail, job.alarm_email, ""};
}

std::vector<AlarmDestination> destinations(const AlarmClaim& claim) {
  std::vector<AlarmDestination> out;
  if (!alarm_recipients(claim.job.alarm_email).empty()) out.push_back(AlarmDestination::job_addresses(claim.job));
  for (const auto& channel : claim.channels) out.push_back(AlarmDestination::of(channel));
  return out;
}

void AlarmDelivery::deliver(const AlarmDestination& to, const AlarmText& text, const std::string& webhook_body) const {
  if (to.kind == AlarmChannelKind::kWebhook) {
    if (webhooks_ == nullptr) throw NotConfigured("webhooks are not available on this node");
    webhooks_->post({to.target, to.secret, webhook_body});
    return;
  }
  if (mailer_ == nullptr) throw NotConfigured("no SMTP server is configured (--smtp-url)");
  Mail mail;
  mail.from = from_;
  mail.to = alarm_recipients(to.target);
  mail.subject = text.subject;
  mail.body = text.body;
  mailer_->send(mail);
}

}  // namespace cronwheel::admin
