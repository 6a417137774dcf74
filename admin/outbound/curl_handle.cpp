#include "admin/outbound/curl_handle.h"

#include <new>
#include <stdexcept>
#include <string>

namespace cronwheel::admin {

void init_curl() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    throw std::runtime_error(std::string("cannot initialize libcurl: ") + curl_easy_strerror(rc));
  }
}

void append(CurlList& list, const char* line) {
  curl_slist* appended = curl_slist_append(list.get(), line);
  if (appended == nullptr) throw std::bad_alloc();
  (void)list.release();  // now the head of `appended`
  list.reset(appended);
}

}  // namespace cronwheel::admin
