#pragma once

// Small POSIX file helpers shared by the executor's files (run logs, the callback spool, the
// result journal): each retries EINTR and reports failure through errno.
//
// Everything the executor writes under its log directory is its own: files are created with
// mode 0600 and directories with mode 0700 (kPrivateFileMode, kPrivateDirectoryMode), so that
// scripts run as another user (ExecutorOptions::run_as) can read neither other runs' logs nor the
// results waiting for an admin. Only the script directory is shared with that user's group
// (script_file.h).

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace cronwheel::executor {

inline constexpr mode_t kPrivateFileMode = 0600;
inline constexpr mode_t kPrivateDirectoryMode = 0700;

// Creates the directory `dir` with mode 0700 (its missing parents with the default mode) when
// it does not exist; an existing one is left as it is (make_private() tightens one). False with
// errno set when it cannot be created.
bool create_private_directory(const std::filesystem::path& dir);

// Gives the existing directory or file `path` the mode `mode` when it is this process's user's
// and has another mode. Leaves a symbolic link (false, errno ELOOP) and what belongs to another
// user (false, errno EPERM) alone. False with errno set when it cannot be looked at or changed.
bool make_private(const std::filesystem::path& path, mode_t mode);

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
