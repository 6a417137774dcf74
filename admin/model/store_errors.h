#pragma once

// What every store (admin/model/*_store.h, stores.h) throws besides the standard library's
// exceptions. The REST API turns each into one answer (api_router.cpp): NotFound 404,
// Conflict 409 naming its field, StoreUnavailable 503.

#include <stdexcept>
#include <string>
#include <utility>

namespace cronwheel::admin {

// The object a change names does not exist (get/find answer std::nullopt instead).
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A uniqueness or reference rule refused the change; field() names the field at fault.
class Conflict : public std::runtime_error {
 public:
  Conflict(const std::string& message, std::string field = {})
      : std::runtime_error(message), field_(std::move(field)) {}
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// The store cannot be reached (database down, restarting, no connection free for too long).
// Nothing was written. The REST API answers 503 for it; the scheduler skips a scan and tries
// again.
class StoreUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cronwheel::admin
