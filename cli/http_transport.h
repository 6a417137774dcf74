#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "cli/api_client.h"

namespace cronwheel::cli {

struct HttpTransportOptions {
  std::chrono::milliseconds connect_timeout{5'000};
  // The longest wait for the next bytes of an answer, and for the request to be taken.
  std::chrono::milliseconds read_timeout{30'000};
  // Sent as `Authorization: Bearer <token>` when not empty (settings.h checked it).
  std::string token;
  // The largest answer body read: more ends the request with an error, so a server cannot make
  // the client hold more. Above the largest jobs file an export answers (16 MiB).
  std::size_t max_answer_bytes = 32 * 1024 * 1024;
  std::string user_agent;
};

// The Transport over HTTP(S) to a base URL ("http://host[:port][/prefix]", request targets
// relative to it), on cpp-httplib: one kept-alive connection, TCP_NODELAY, bounded connect and
// read waits, redirects not followed, nothing retried (a POST may have been acted on).
//
// common/http's HttpClient does the same for the admin and the executor but sends only GET and
// POST, JSON bodies and no Authorization header; this client needs DELETE, the Bearer token,
// other content types (YAML for export and apply) and an Accept header.
//
// When the connection cannot be made, the error says why as the system did ("connection
// refused", "no route to host", "unknown host"), found by one more connect attempt of its own.
class HttpTransport : public Transport {
 public:
  // Throws CliError (status 2) when base_url is not an http(s) base URL.
  HttpTransport(std::string_view base_url, HttpTransportOptions options);
  ~HttpTransport() override;

  ApiAnswer send(const ApiRequest& request) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::cli
