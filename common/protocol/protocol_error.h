#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace cronwheel::common::protocol {

// A wire message that cannot be read: malformed JSON, a field of the wrong type, a value out of
// range. what() is "<field>: <problem>" (or just "<problem>" when it concerns the whole
// document), e.g. "jobId: expected an integer, got string" or
// "callbackList[2].logId: expected an integer, got boolean".
//
// The message describes the peer's input only, never our internals, so it is safe to send back
// to the peer (the HTTP layer answers it as a 400).
class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(std::string field, std::string problem);

  // Dotted path of the offending field ("content.fromLineNum", "[0].handleCode"); empty when the
  // error is about the document as a whole.
  const std::string& field() const noexcept { return field_; }
  const std::string& problem() const noexcept { return problem_; }

  // The same error seen from an enclosing value: nested_in("content") turns "fromLineNum" into
  // "content.fromLineNum"; nested_in("callbackList") turns "[2].logId" into
  // "callbackList[2].logId".
  ProtocolError nested_in(std::string_view parent) const;

 private:
  std::string field_;
  std::string problem_;
};

}  // namespace cronwheel::common::protocol
