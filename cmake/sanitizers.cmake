# CRONWHEEL_SANITIZE and CRONWHEEL_FUZZ: instrumentation of the whole build, for the sanitizer
# stage of scripts/test.sh (docs/testing.md). Both are off in a normal build.
#
# They apply to every target of the build directory, not to chosen ones: AddressSanitizer
# checks what instrumented code does, and libFuzzer only sees the branches of instrumented
# code, so a library left out would hide its bugs. That is why these are directory-wide
# options here and not flags on cronwheel_warnings.

if(CRONWHEEL_SANITIZE)
  # UBSan findings abort (no recovery), so a test or a fuzz run fails on the first one.
  # _GLIBCXX_ASSERTIONS adds libstdc++'s bounds checks (vector/string operator[], front() of
  # an empty container...), which ASan misses inside a container's capacity.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS)
  add_link_options(-fsanitize=address,undefined)
endif()

if(CRONWHEEL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "CRONWHEEL_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-14 (Debian: clang-14 libclang-rt-14-dev)")
  endif()
  # Coverage for libFuzzer in every object; only the fuzz targets link libFuzzer itself
  # (-fsanitize=fuzzer, in tests/fuzz), so the unit tests of the same build keep their main().
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
