#include "admin/outbound/curl_webhook_sender.h"

#include <fstream>
#include <stdexcept>
#include <string>
#include <variant>

#include "admin/alarm/webhook_signature.h"
#include "admin/outbound/curl_handle.h"
#include "common/http/url.h"

namespace cronwheel::admin {
namespace {

struct Answer {
  std::string text;
};

std::size_t keep_answer(char* data, std::size_t size, std::size_t count, void* user) {
  auto* answer = static_cast<Answer*>(user);
  const std::size_t bytes = size * count;
  const std::size_t room = CurlWebhookSender::kMaxAnswerBytes - answer->text.size();
  answer->text.append(data, std::min(bytes, room));
  return bytes;  // read the rest too, so the receiver is not cut off mid-answer
}

// The receiver's answer as one printable line.
std::string quoted(std::string text) {
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return text;
}

}  // namespace

CurlWebhookSender::CurlWebhookSender(common::Clock& clock, Options options)
    : clock_(clock), options_(std::move(options)) {
  if (options_.connect_timeout.count() <= 0 || options_.timeout.count() <= 0) {
    throw std::invalid_argument("webhook timeouts must be positive");
  }
  if (!options_.ca_file.empty() && !std::ifstream(options_.ca_file).good()) {
    throw std::invalid_argument("cannot read the webhook ca_file \"" + options_.ca_file + "\"");
  }
  init_curl();
}

void CurlWebhookSender::post(const WebhookRequest& request) {
  auto parsed = common::http::parse_http_url(request.url);
  if (auto* why = std::get_if<std::string>(&parsed)) {
    throw WebhookError("the webhook URL is not an http(s) URL (" + *why + "); nothing was sent");
  }
  const std::string origin = std::get<common::http::HttpUrl>(parsed).origin();
  if (request.body.size() > kMaxBodyBytes) {
    throw WebhookError("the alarm is " + std::to_string(request.body.size()) + " bytes, more than " +
                       std::to_string(kMaxBodyBytes) + "; nothing was sent to " + origin);
  }

  CurlList headers;
  append(headers, "Content-Type: application/json");
  append(headers, "Expect:");  // no 100-continue round trip
  if (!request.secret.empty()) {
    const std::int64_t timestamp = clock_.now_ms() / 1000;
    append(headers, (std::string(kWebhookTimestampHeader) + ": " + std::to_string(timestamp)).c_str());
    append(headers, (std::string(kWebhookSignatureHeader) + ": " +
                     webhook_signature(request.secret, timestamp, request.body))
                        .c_str());
  }

  CurlHandle handle(curl_easy_init());
  if (!handle) throw WebhookError("cannot create a libcurl handle");
  CURL* curl = handle.get();
  Answer answer;
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "cronwheel");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep_answer);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);

  const CURLcode rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) {
    // The error buffer may quote the URL; name the origin instead.
    const char* what = rc == CURLE_OPERATION_TIMEDOUT    ? "timeout"
                       : rc == CURLE_COULDNT_CONNECT     ? "cannot connect"
                       : rc == CURLE_COULDNT_RESOLVE_HOST ? "cannot resolve the host"
                       : rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR ? "TLS failed"
                                                                                              : "request failed";
    throw WebhookError(std::string("webhook ") + origin + ": " + what + " (" + curl_easy_strerror(rc) + ")");
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    std::string message = "webhook " + origin + " answered HTTP " + std::to_string(status);
    if (!answer.text.empty()) message += ": " + quoted(answer.text);
    throw WebhookError(message);
  }
}

}  // namespace cronwheel::admin
