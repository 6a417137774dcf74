#include "executor/src/file_io.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace cronwheel::executor {

std::string errno_text(int error) { return std::error_code(error, std::system_category()).message(); }

bool create_private_directory(const std::filesystem::path& dir) {
  if (::mkdir(dir.c_str(), kPrivateDirectoryMode) == 0) return true;
  if (errno == EEXIST) return true;
  if (errno != ENOENT || !dir.has_parent_path()) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir.parent_path(), ec);
  if (ec) {
    errno = ec.value();
    return false;
  }
  return ::mkdir(dir.c_str(), kPrivateDirectoryMode) == 0 || errno == EEXIST;
}

bool make_private(const std::filesystem::path& path, mode_t mode) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  if (S_ISLNK(st.st_mode)) {
    errno = ELOOP;
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    errno = EPERM;
    return false;
  }
  if ((st.st_mode & 07777) == mode) return true;
  return ::chmod(path.c_str(), mode) == 0;
}

bool flock_retrying(int fd, int operation) {
  for (;;) {
    if (::flock(fd, operation) == 0) return true;
    if (errno != EINTR) return false;
  }
}

bool still_named(int fd, const std::filesystem::path& path) {
  struct stat by_fd {};
  struct stat by_path {};
  if (::fstat(fd, &by_fd) != 0 || ::stat(path.c_str(), &by_path) != 0) return false;
  return by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool read_all(int fd, std::string& out) {
  out.clear();
  char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace cronwheel::executor
