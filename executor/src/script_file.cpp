#include "executor/src/script_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>
#include <utility>

#include "executor/src/file_io.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;

// Output files are named {kOutputFilePrefix}{job_id}-XXXXXX: hidden, like the temporary script
// files, and found again by the prefix when an earlier process left some.
constexpr std::string_view kOutputFilePrefix = ".output-";

// Who may read a script file, and so the directory holding it.
struct ScriptAccess {
  mode_t file_mode = 0600;
  mode_t dir_mode = 0700;
  gid_t group = 0;
  bool set_group = false;   // give file and directory to `group`
};

ScriptAccess script_access(const RunAsUser* run_as) {
  if (run_as == nullptr || run_as->is_this_process) return {};
  return {0640, 0750, run_as->gid, true};
}

// Whether `file` is a regular file of this process's user with `access`'s mode and group and
// exactly `content`.
bool up_to_date(const fs::path& file, const std::string& content, const ScriptAccess& access) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 07777) != access.file_mode || (access.set_group && st.st_gid != access.group) ||
      static_cast<std::size_t>(st.st_size) != content.size()) {
    return false;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::string existing((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return !in.bad() && existing == content;
}

void prepare_directory(const fs::path& dir, const ScriptAccess& access) {
  if (!create_private_directory(dir)) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot create script directory " + dir.string());
  }
  struct stat st {};
  const int error = ::stat(dir.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  if (error != 0) {
    throw std::system_error(error, std::generic_category(),
                            "cannot use script directory " + dir.string());
  }
  if (access.set_group && st.st_gid != access.group &&
      ::chown(dir.c_str(), static_cast<uid_t>(-1), access.group) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot give script directory " + dir.string() + " to group " +
                                std::to_string(access.group));
  }
  if ((st.st_mode & 07777) != access.dir_mode && ::chmod(dir.c_str(), access.dir_mode) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot set the mode of script directory " + dir.string());
  }
}

}  // namespace

void prepare_script_directory(const fs::path& dir, const RunAsUser* run_as) {
  prepare_directory(fs::absolute(dir), script_access(run_as));
}

fs::path write_script_file(const fs::path& script_dir, const std::string& name,
                           const std::string& source, const RunAsUser* run_as) {
  static std::atomic<unsigned> counter{0};
  const ScriptAccess access = script_access(run_as);
  fs::path dir = fs::absolute(script_dir);
  prepare_directory(dir, access);
  fs::path file = dir / name;
  if (up_to_date(file, source, access)) return file;

  // Renamed over the file only once complete: a run starting meanwhile (or after a crash) sees
  // the old file or the new one, never half of one. The name is unique to this call.
  fs::path temporary = dir / ("." + name + "." + std::to_string(::getpid()) + "." +
                              std::to_string(++counter) + ".tmp");
  auto fail = [&](int error, const fs::path& path) {
    ::unlink(temporary.c_str());
    return std::system_error(error, std::generic_category(), "cannot write " + path.string());
  };
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw fail(errno, temporary);
  int error = 0;
  // The mode explicitly: the one given to open() is reduced by the umask. The group before the
  // mode, so the file is never readable by a group it is not meant for.
  if (access.set_group && ::fchown(fd, static_cast<uid_t>(-1), access.group) != 0) error = errno;
  if (error == 0 && ::fchmod(fd, access.file_mode) != 0) error = errno;
  const char* data = source.data();
  std::size_t left = error == 0 ? source.size() : 0;
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  // close(2) can report a deferred write error too.
  if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
  if (error != 0) throw fail(error, temporary);
  if (::rename(temporary.c_str(), file.c_str()) != 0) throw fail(errno, file);
  return file;
}

// ---------------------------------------------------------------------------------------------
// OutputFile

OutputFile::OutputFile(const fs::path& script_dir, std::int64_t job_id, const RunAsUser* run_as) {
  std::string name = (fs::absolute(script_dir) / kOutputFilePrefix).string() +
                     std::to_string(job_id) + "-XXXXXX";
  // O_RDWR | O_CREAT | O_EXCL, mode 0600, a random name: nothing existing is opened.
  UniqueFd fd(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd) {
    throw std::system_error(errno, std::generic_category(), "cannot create " + name);
  }
  path_ = name;
  fd_ = std::move(fd);
  if (run_as != nullptr && !run_as->is_this_process &&
      ::fchown(fd_.get(), run_as->uid, run_as->gid) != 0) {
    const int error = errno;
    ::unlink(path_.c_str());
    throw std::system_error(error, std::generic_category(),
                            "cannot give " + path_.string() + " to user " + run_as->name);
  }
  // mkostemp gives 0600 whatever the umask; said again, so the contract does not rest on that.
  if (::fchmod(fd_.get(), 0600) != 0) {
    const int error = errno;
    ::unlink(path_.c_str());
    throw std::system_error(error, std::generic_category(),
                            "cannot set the mode of " + path_.string());
  }
}

OutputFile::~OutputFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

OutputFile::Content OutputFile::read(std::size_t max_bytes) const {
  Content content;
  struct stat by_fd {};
  struct stat by_name {};
  if (::fstat(fd_.get(), &by_fd) != 0) {
    content.state = Content::State::kUnreadable;
    content.error = errno;
    return content;
  }
  // lstat: a symbolic link at the name, even to this very file, is a replacement.
  if (::lstat(path_.c_str(), &by_name) != 0 || !S_ISREG(by_name.st_mode) ||
      by_name.st_dev != by_fd.st_dev || by_name.st_ino != by_fd.st_ino) {
    content.state = Content::State::kReplaced;
    return content;
  }
  const std::size_t limit = max_bytes + 1;
  content.bytes.resize(limit);
  std::size_t got = 0;
  while (got < limit) {
    // pread from the descriptor: the script's writes moved its own offsets, not this one.
    ssize_t n = ::pread(fd_.get(), content.bytes.data() + got, limit - got,
                        static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      content.state = Content::State::kUnreadable;
      content.error = errno;
      content.bytes.clear();
      return content;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  content.bytes.resize(got);
  return content;
}

void remove_leftover_output_files(const fs::path& script_dir) noexcept {
  DIR* dir = ::opendir(script_dir.c_str());
  if (dir == nullptr) return;
  const int dir_fd = ::dirfd(dir);
  while (dirent* entry = ::readdir(dir)) {
    if (std::string_view(entry->d_name).starts_with(kOutputFilePrefix)) {
      ::unlinkat(dir_fd, entry->d_name, 0);
    }
  }
  ::closedir(dir);
}

}  // namespace cronwheel::executor
