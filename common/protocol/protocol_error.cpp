#include "common/protocol/protocol_error.h"

#include <utility>

namespace cronwheel::common::protocol {
namespace {

std::string format(const std::string& field, const std::string& problem) {
  return field.empty() ? problem : field + ": " + problem;
}

}  // namespace

ProtocolError::ProtocolError(std::string field, std::string problem)
    : std::runtime_error(format(field, problem)),
      field_(std::move(field)),
      problem_(std::move(problem)) {}

ProtocolError ProtocolError::nested_in(std::string_view parent) const {
  std::string path(parent);
  if (!field_.empty()) {
    if (field_.front() != '[' && !path.empty()) path += '.';
    path += field_;
  }
  return ProtocolError(std::move(path), problem_);
}

}  // namespace cronwheel::common::protocol
