#pragma once

// What ics_read.cpp and ics_write.cpp share: the lock every call into libical holds, owners
// for what libical allocates, and the text cleaning both sides apply. Private to common/ical.

#include <libical/ical.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace cronwheel::common::ical::detail {

// Held for the whole of a read_ics or write_ics call. libical keeps process-wide state (whether
// errors abort, the error state icalparser_parse_string saves and restores), so its calls are
// serialised; the first session also makes libical's errors non-fatal (its default may abort).
class LibicalSession {
 public:
  LibicalSession();
  LibicalSession(const LibicalSession&) = delete;
  LibicalSession& operator=(const LibicalSession&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
};

struct ComponentFree {
  void operator()(icalcomponent* component) const noexcept { icalcomponent_free(component); }
};
using ComponentPtr = std::unique_ptr<icalcomponent, ComponentFree>;

struct RecurIteratorFree {
  void operator()(icalrecur_iterator* iterator) const noexcept { icalrecur_iterator_free(iterator); }
};
using RecurIteratorPtr = std::unique_ptr<icalrecur_iterator, RecurIteratorFree>;

// What a name or UID becomes: UTF-8 (each byte that starts no well-formed sequence becomes
// U+FFFD), control characters (C0, DEL, C1) as spaces, spaces and tabs trimmed at both ends,
// then cut to at most max_bytes on a character boundary (and trimmed again).
std::string clean_text(std::string_view text, std::size_t max_bytes);

// FNV-1a, 64 bits: stable hashes for UIDs made up from an event's content.
std::uint64_t fnv1a64(std::string_view text) noexcept;

// "1,234,567": numbers in messages an operator reads.
std::string with_thousands(std::int64_t value);

}  // namespace cronwheel::common::ical::detail
