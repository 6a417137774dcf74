#include "executor/src/run_as.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "executor/src/child_process.h"

namespace cronwheel::executor {
namespace {

// The 32-bit id versions where an architecture has both (i386, arm): the plain ones take
// 16-bit ids there.
#if defined(SYS_setgroups32)
constexpr long kSetGroups = SYS_setgroups32;
constexpr long kSetResGid = SYS_setresgid32;
constexpr long kSetResUid = SYS_setresuid32;
#else
constexpr long kSetGroups = SYS_setgroups;
constexpr long kSetResGid = SYS_setresgid;
constexpr long kSetResUid = SYS_setresuid;
#endif

// A user database lookup answer larger than this is refused rather than followed.
constexpr std::size_t kMaxLookupBuffer = 1 << 20;
constexpr int kMaxGroups = 65536;

[[noreturn]] void invalid(const std::string& message) { throw std::invalid_argument(message); }

// Shown in messages: the name as given, without what could break a one-line reason.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? '?' : c);
  }
  return out;
}

// getpwnam_r / getpwuid_r with a buffer grown as the answer needs. Returns the entry's fields,
// or nullopt when there is none; throws on a lookup error.
template <typename Lookup>
std::optional<RunAsUser> look_up(const std::string& shown, Lookup lookup) {
  long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<std::size_t>(suggested) : 16384);
  for (;;) {
    passwd entry{};
    passwd* found = nullptr;
    const int rc = lookup(&entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < kMaxLookupBuffer) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    // "Not found" comes back as 0, ENOENT, ESRCH, EBADF or EPERM depending on the NSS module.
    if (found == nullptr) {
      if (rc == 0 || rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM) return std::nullopt;
      invalid("cannot look up user '" + shown + "': " + std::strerror(rc));
    }
    RunAsUser user;
    user.name = entry.pw_name != nullptr ? entry.pw_name : shown;
    user.uid = entry.pw_uid;
    user.gid = entry.pw_gid;
    user.home = entry.pw_dir != nullptr ? entry.pw_dir : "";
    return user;
  }
}

std::vector<gid_t> groups_of(const RunAsUser& user) {
  int count = 32;
  std::vector<gid_t> groups;
  for (;;) {
    groups.resize(static_cast<std::size_t>(count));
    int wanted = count;
    if (::getgrouplist(user.name.c_str(), user.gid, groups.data(), &wanted) >= 0) {
      groups.resize(static_cast<std::size_t>(wanted));
      return groups;
    }
    if (wanted <= count || wanted > kMaxGroups) {
      invalid("cannot list the groups of user '" + printable(user.name) + "'");
    }
    count = wanted;
  }
}

std::vector<gid_t> sorted_unique(std::vector<gid_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

bool is_this_process(const RunAsUser& user) {
  if (::getuid() != user.uid || ::geteuid() != user.uid || ::getgid() != user.gid ||
      ::getegid() != user.gid) {
    return false;
  }
  const int count = ::getgroups(0, nullptr);
  if (count < 0) return false;
  std::vector<gid_t> current(static_cast<std::size_t>(count));
  if (::getgroups(count, current.data()) != count) return false;
  // Whether the primary group is listed among the supplementary ones varies: compare as sets,
  // with it in both.
  current.push_back(user.gid);
  std::vector<gid_t> wanted = user.groups;
  wanted.push_back(user.gid);
  return sorted_unique(std::move(current)) == sorted_unique(std::move(wanted));
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

RunAsUser find_user(std::string_view name) {
  const std::string shown = printable(name);
  if (name.empty()) invalid("the user name is empty");
  if (name.find('\0') != std::string_view::npos) invalid("'" + shown + "' is not a user name");
  const std::string key(name);
  auto user = look_up(shown, [&](passwd* entry, char* buffer, std::size_t size, passwd** found) {
    return ::getpwnam_r(key.c_str(), entry, buffer, size, found);
  });
  if (!user && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    uid_t uid = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), uid);
    if (ec == std::errc() && end == key.data() + key.size()) {
      user = look_up(shown, [&](passwd* entry, char* buffer, std::size_t size, passwd** found) {
        return ::getpwuid_r(uid, entry, buffer, size, found);
      });
    }
  }
  if (!user) invalid("no user '" + shown + "' on this machine");
  user->groups = groups_of(*user);
  user->is_this_process = is_this_process(*user);
  return std::move(*user);
}

int switch_to_user(const RunAsUser& user, const char** step) noexcept {
  if (!user.is_this_process) {
    if (::syscall(kSetGroups, user.groups.size(), user.groups.data()) != 0) {
      *step = "setgroups";
      return errno;
    }
    if (::syscall(kSetResGid, user.gid, user.gid, user.gid) != 0) {
      *step = "setgid";
      return errno;
    }
    if (::syscall(kSetResUid, user.uid, user.uid, user.uid) != 0) {
      *step = "setuid";
      return errno;
    }
  }
  if (user.home.empty() || ::chdir(user.home.c_str()) != 0) {
    if (::chdir("/") != 0) {
      *step = "chdir";
      return errno;
    }
  }
  return 0;
}

std::optional<std::string> run_as_problem(const RunAsUser& user,
                                          const std::filesystem::path& must_open) {
  const std::string shown = printable(user.name);
  // Absolute: the child has changed to the user's home directory when it opens it.
  const std::string directory =
      must_open.empty() ? std::string() : std::filesystem::absolute(must_open).string();
  int status_pipe[2];
  int release_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    return std::string("cannot check user ") + shown + ": pipe: " + std::strerror(errno);
  }
  if (::pipe2(release_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    return std::string("cannot check user ") + shown + ": pipe: " + std::strerror(error);
  }

  const pid_t pid = fork_for_exec();
  if (pid == 0) {
    // The child: becomes the user as a script would, reports, then waits to be released (so
    // that the parent can try to signal it while it runs as the user).
    ::close(status_pipe[0]);
    ::close(release_pipe[1]);
    const char* step = "";
    int error = switch_to_user(user, &step);
    if (error == 0 && !directory.empty()) {
      const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) {
        error = errno;
        step = "open";
      }
    }
    report_failure(status_pipe[1], ChildFailure::of(step, error));
    char byte = 0;
    while (::read(release_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  const int fork_error = errno;
  ::close(status_pipe[1]);
  ::close(release_pipe[0]);
  if (pid < 0) {
    ::close(status_pipe[0]);
    ::close(release_pipe[1]);
    return std::string("cannot check user ") + shown + ": fork: " + std::strerror(fork_error);
  }

  std::optional<std::string> problem;
  const auto report = read_failure(status_pipe[0]);
  if (!report) {
    problem = "cannot check user " + shown + ": the checking process ended unexpectedly";
  } else if (report->error != 0) {
    const std::string step = report->step;
    const std::string reason = step + ": " + std::strerror(report->error);
    if (step == "open") {
      problem = "user " + shown + " cannot open the script directory " + directory + " (" +
                reason + "): every directory on its path must be searchable by that user";
    } else if (step == "chdir") {
      problem = "user " + shown + " cannot enter its home directory nor / (" + reason + ")";
    } else {
      problem = "this process may not switch to user " + shown + " (" + reason +
                "): run the executor as root, or with CAP_SETUID and CAP_SETGID";
    }
  } else if (::kill(pid, 0) != 0) {
    // Ending a kill or timeout takes signalling the script's process group.
    problem = "this process may not signal processes of user " + shown + " (" +
              std::strerror(errno) + "), so it could not end their scripts: run the executor "
              "as root, or with CAP_KILL";
  }
  ::close(release_pipe[1]);  // the child reads end of file and exits
  ::close(status_pipe[0]);
  wait_for(pid);
  return problem;
}

}  // namespace cronwheel::executor
