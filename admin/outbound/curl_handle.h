#pragma once

// What the alarm channels' libcurl clients share (SmtpMailer, CurlWebhookSender): the process's
// one global initialisation and owners for libcurl's handles.

#include <curl/curl.h>

#include <memory>

namespace cronwheel::admin {

// libcurl's global state, set up once for the whole process before the first handle; throws
// std::runtime_error when libcurl cannot initialise. Thread-safe.
void init_curl();

struct CurlDeleter {
  void operator()(CURL* curl) const noexcept { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
using CurlHandle = std::unique_ptr<CURL, CurlDeleter>;
using CurlList = std::unique_ptr<curl_slist, SlistDeleter>;

// Appends `line` to `list`; throws std::bad_alloc when libcurl cannot.
void append(CurlList& list, const char* line);

}  // namespace cronwheel::admin
