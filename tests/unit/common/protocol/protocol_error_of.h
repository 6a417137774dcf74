#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/protocol/protocol_error.h"

namespace cronwheel::testing {

// Runs `fn`, expects it to throw a ProtocolError and returns its what() (a test failure and ""
// when it does not throw).
template <class Fn>
std::string protocol_error_of(Fn fn) {
  try {
    fn();
  } catch (const common::protocol::ProtocolError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ProtocolError";
  return {};
}

}  // namespace cronwheel::testing
