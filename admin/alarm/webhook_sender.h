#pragma once

// Port: posts one alarm to a webhook. Implemented by CurlWebhookSender
// (admin/outbound/curl_webhook_sender.h); a fake replaces it in tests.

#include <stdexcept>
#include <string>

namespace cronwheel::admin {

struct WebhookRequest {
  std::string url;     // http(s)://host[:port][/path][?query], as an admin configured it
  std::string secret;  // the HMAC key of X-Cronwheel-Signature; empty: the request is unsigned
  std::string body;    // the JSON document (docs/alarms.md "Webhooks")
};

// Why a request was not delivered: the URL refused before connecting, cannot connect, TLS,
// timeout, or the receiver's HTTP status and the start of its answer. Never holds the secret.
class WebhookError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WebhookSender {
 public:
  virtual ~WebhookSender() = default;

  // POSTs the body and returns once the receiver answered 2xx. Throws WebhookError otherwise.
  // No retries: a caller that wants another attempt calls again. Blocks for at most the
  // implementation's bounded timeouts. Thread-safe.
  virtual void post(const WebhookRequest& request) = 0;
};

}  // namespace cronwheel::admin
