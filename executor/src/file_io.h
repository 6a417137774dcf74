#pragma once

// Small POSIX file helpers shared by the executor's durable result files (the callback spool
// and the result journal): each retries EINTR and reports failure through errno.

#include <filesystem>
#include <string>
#include <string_view>

namespace cronwheel::executor {

// strerror's text for `error`.
std::string errno_text(int error);

// flock(2) on `fd`, retried on EINTR; false with errno set otherwise.
bool flock_retrying(int fd, int operation);

// Whether `path` still names the file open as `fd`. A process that locked a file may find that
// another removed (or adopted and removed) it before the lock was granted; the lock then
// protects nothing.
bool still_named(int fd, const std::filesystem::path& path);

// Writes all of `data` to `fd`; false with errno set on failure.
bool write_all(int fd, std::string_view data);

// Reads `fd` to its end into `out` (replacing it); false with errno set on failure.
bool read_all(int fd, std::string& out);

}  // namespace cronwheel::executor
