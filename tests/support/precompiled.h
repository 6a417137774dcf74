// The headers nearly every test file includes, compiled once per build into a precompiled header
// that every test binary reuses (tests/CMakeLists.txt, cronwheel_test_pch): about a CPU-second
// less per test binary in each build. Test files still include what they use; this list only
// saves the compiler from reading it again. cpp-httplib's header is left out: a fifth of the
// tests use it, and it would make the precompiled header a third larger for all of them.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
