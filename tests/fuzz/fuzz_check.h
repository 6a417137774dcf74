#pragma once

#include <cstdio>
#include <cstdlib>

// FUZZ_CHECK(condition, what): a property of the code under test that must hold for every
// input. A violation prints what was expected and aborts, which libFuzzer reports as a crash
// and saves the input (crash-<sha1>) for replay.
//
// Exceptions follow one rule in every target: the ones the code documents are caught at the
// call; any other exception escapes LLVMFuzzerTestOneInput, ends in std::terminate, and is a
// finding too.
#define FUZZ_CHECK(condition, what)                                                             \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      std::fprintf(stderr, "%s:%d: property violated: %s (%s)\n", __FILE__, __LINE__, (what), \
                   #condition);                                                                 \
      std::abort();                                                                             \
    }                                                                                           \
  } while (false)
