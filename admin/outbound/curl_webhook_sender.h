#pragma once

#include <chrono>
#include <string>

#include "admin/alarm/webhook_sender.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// WebhookSender over libcurl: one connection per request, no pooling, no retries.
//
// Each request is `POST <url>` with Content-Type: application/json, User-Agent: cronwheel, and,
// when the request has a secret, X-Cronwheel-Timestamp and X-Cronwheel-Signature
// (admin/alarm/webhook_signature.h) computed with the clock's time at the send.
//
// Security:
// - Only http and https; redirects are not followed (a 3xx is a failure); the URL is parsed by
//   common::http::parse_http_url before anything is sent, and one it refuses is a WebhookError.
// - https certificates are always verified, host name included, against ca_file when set and
//   the system's CAs otherwise.
// - Errors and logs name the URL's origin (scheme://host:port) only: services such as Slack put
//   their credentials in the path.
// - At most kMaxAnswerBytes of the receiver's answer are kept, to quote in the error.
//
// Thread-safe: every post uses its own libcurl handle and connection.
class CurlWebhookSender final : public WebhookSender {
 public:
  static constexpr std::size_t kMaxAnswerBytes = 512;
  static constexpr std::size_t kMaxBodyBytes = 1 << 20;

  struct Options {
    std::chrono::milliseconds connect_timeout{5'000};
    std::chrono::milliseconds timeout{10'000};  // a whole request, connect included
    std::string ca_file = {};                   // PEM CAs for https; empty: the system's
  };

  // `clock` gives the signature's timestamp; it must outlive the sender. Throws
  // std::invalid_argument for a timeout that is not positive or a ca_file that cannot be read.
  CurlWebhookSender(common::Clock& clock, Options options);

  // See WebhookSender::post. A body over kMaxBodyBytes is refused before connecting.
  void post(const WebhookRequest& request) override;

 private:
  common::Clock& clock_;
  Options options_;
};

}  // namespace cronwheel::admin
