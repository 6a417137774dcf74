#pragma once

namespace cronwheel::cli {

// The project's version (CMake's PROJECT_VERSION), which `cronwheel version` prints.
inline constexpr const char* kVersion = CRONWHEEL_VERSION;

}  // namespace cronwheel::cli
