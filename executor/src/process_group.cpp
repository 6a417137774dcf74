#include "executor/src/process_group.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/util/utf8.h"
#include "executor/src/child_process.h"
#include "executor/src/unique_fd.h"

extern char** environ;

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// Environment variables a script never sees: the executor's own settings, among them its
// secrets and the files they were read from (CRONWHEEL_ACCESS_TOKEN, CRONWHEEL_ACCESS_TOKEN_FILE).
constexpr std::string_view kHiddenPrefix = "CRONWHEEL_";
// Variables naming the user, set anew for a script run as another user.
constexpr std::string_view kUserVariables[] = {"HOME", "USER", "LOGNAME"};
// How often the group is looked at while waiting for its last processes: membership of a
// process group cannot be waited for, only polled.
constexpr std::chrono::milliseconds kGroupPollInterval{10};
// The slower look through /proc for live members (see GroupWatch).
constexpr std::chrono::milliseconds kProcScanInterval{100};
// Upper bound on one poll() even when an event is expected, so a missed wake-up only delays.
constexpr int kMaxPollMs = 1000;
constexpr std::size_t kPipeReadChunk = 64 * 1024;
// Output read after the group is gone is bounded: a process that escaped the group may still
// be writing to the pipe.
constexpr int kMaxDrainReads = 64;

ScriptOutcome failed_to_start(std::string message) {
  return {ScriptOutcome::Kind::kFailedToStart, 0, std::move(message)};
}

bool names(std::string_view variable, std::string_view name) {
  return variable.size() > name.size() && variable.substr(0, name.size()) == name &&
         variable[name.size()] == '=';
}

template <std::size_t N>
bool names_any(std::string_view variable, const std::string_view (&list)[N]) {
  return std::any_of(std::begin(list), std::end(list),
                     [&](std::string_view name) { return names(variable, name); });
}

// This process's environment without the CRONWHEEL_ variables, and, for a script run as a user,
// with HOME, USER and LOGNAME of that user; then `extra` (the run's own variables).
std::vector<std::string> script_environment(const RunAsUser* run_as,
                                            const std::vector<std::string>& extra) {
  std::vector<std::string> result;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view variable(*entry);
    if (variable.starts_with(kHiddenPrefix)) continue;
    if (run_as != nullptr && names_any(variable, kUserVariables)) continue;
    result.emplace_back(variable);
  }
  if (run_as != nullptr) {
    result.push_back("HOME=" + (run_as->home.empty() ? std::string("/") : run_as->home));
    result.push_back("USER=" + run_as->name);
    result.push_back("LOGNAME=" + run_as->name);
  }
  result.insert(result.end(), extra.begin(), extra.end());
  return result;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  result.reserve(strings.size() + 1);
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// What the child does between fork and exec, all prepared by the parent (see child_process.h).
struct ChildPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  int output;                // the output pipe's write end (close-on-exec)
  int report;                // the failure pipe's write end (close-on-exec)
  const RunAsUser* run_as;   // null: stay this process's user
  int max_fd;                // bound for closing descriptors one by one when close_range fails
};

// Moves `fd` above 2 (a copy, close-on-exec) so that dup2 onto 0-2 cannot hit it. Returns the
// descriptor to use, or -1.
int above_standard(int fd) noexcept { return fd > 2 ? fd : ::fcntl(fd, F_DUPFD_CLOEXEC, 3); }

// Closes every descriptor from 3 up except `keep` (>= 3).
void close_from_3_except(int keep, int max_fd) noexcept {
  const auto k = static_cast<unsigned>(keep);
  bool done = (k == 3 || ::close_range(3, k - 1, 0) == 0) && ::close_range(k + 1, ~0U, 0) == 0;
  if (done) return;
  for (int fd = 3; fd < max_fd; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

[[noreturn]] void child_failed(int report, const char* step, int error) noexcept {
  if (report >= 0) report_failure(report, ChildFailure::of(step, error));
  ::_exit(127);
}

[[noreturn]] void exec_child(const ChildPlan& plan) noexcept {
  // Only async-signal-safe calls from here on: see child_process.h.
  const int report = above_standard(plan.report);
  auto fail = [report](const char* step, int error) { child_failed(report, step, error); };
  if (report < 0) fail("dup", errno);
  if (::setpgid(0, 0) != 0) fail("setpgid", errno);
  // stdout and stderr to the pipe. `output` may itself be 0-2 when this process runs without
  // them; moved above 2 first, dup2 gives 1 and 2 fresh descriptors without close-on-exec (a
  // dup2 onto itself would keep the flag).
  const int output = above_standard(plan.output);
  if (output < 0) fail("dup", errno);
  if (::dup2(output, 1) < 0 || ::dup2(output, 2) < 0) fail("dup2", errno);
  const int null = ::open("/dev/null", O_RDONLY);
  if (null < 0) fail("open /dev/null", errno);
  if (null != 0) {
    if (::dup2(null, 0) < 0) fail("dup2", errno);
    ::close(null);
  }
  if (plan.run_as != nullptr) {
    const char* step = "";
    if (const int error = switch_to_user(*plan.run_as, &step); error != 0) fail(step, error);
  }
  // Sockets, log files and the like of this process are not the script's business, and a
  // script holding the listening socket would keep the port after the executor ends. The
  // report pipe stays until exec closes it.
  close_from_3_except(report, plan.max_fd);
  // Signals this process ignores (SIGPIPE, typically) or blocks would otherwise stay so in
  // the script: `yes | head` must end by SIGPIPE there as in a terminal.
  reset_signals();
  ::execve(plan.program, plan.argv, plan.envp);
  child_failed(report, "exec", errno);
}

// A started process, or why it did not start.
struct Started {
  pid_t pid = -1;
  ChildFailure failure;
};

// Starts `program` with `argv` in a new process group with stdout and stderr on `output`, as
// run_script describes. Returns once the child has exec'd (so its process group exists) or
// failed.
Started spawn_in_new_group(const fs::path& program, std::vector<std::string> argv, int output,
                           const RunAsUser* run_as, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env = script_environment(run_as, extra_env);
  auto argv_pointers = pointers(argv);
  auto env_pointers = pointers(env);
  rlimit files{};
  const int max_fd = ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
                             files.rlim_cur < 65536
                         ? static_cast<int>(files.rlim_cur)
                         : 65536;

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return {-1, ChildFailure::of("pipe", errno)};
  const ChildPlan plan{program.c_str(), argv_pointers.data(), env_pointers.data(), output,
                       report[1],       run_as,              max_fd};
  const pid_t pid = fork_for_exec();
  if (pid == 0) {
    ::close(report[0]);
    exec_child(plan);
  }
  const int fork_error = errno;
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return {-1, ChildFailure::of("fork", fork_error)};
  }
  auto failure = read_failure(report[0]);
  ::close(report[0]);
  if (failure) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return {-1, *failure};
  }
  return {pid, {}};
}

// Turns the pipe's bytes into log lines: every complete line of a chunk goes out in one
// append, lines longer than kMaxOutputLineBytes are split, a last unterminated line is written
// by finish().
class OutputLines {
 public:
  explicit OutputLines(RunLogWriter& log) : log_(log) {}

  void feed(const char* data, std::size_t size) {
    pending_.append(data, size);
    std::string lines;
    std::size_t pos = 0;
    for (;;) {
      std::size_t newline = pending_.find('\n', pos);
      std::size_t end = newline == std::string::npos ? pending_.size() : newline;
      // Overlong (possibly unfinished) lines leave in pieces of at most the limit.
      while (end - pos > kMaxOutputLineBytes) {
        std::string_view rest(pending_.data() + pos, end - pos);
        std::size_t piece = common::utf8::prefix_length(rest, kMaxOutputLineBytes);
        if (piece == 0) piece = kMaxOutputLineBytes;
        lines.append(rest.substr(0, piece));
        lines.push_back('\n');
        pos += piece;
      }
      if (newline == std::string::npos) break;
      lines.append(pending_, pos, newline + 1 - pos);
      pos = newline + 1;
    }
    pending_.erase(0, pos);
    if (!lines.empty()) log_.append(lines);
  }

  void finish() {
    if (!pending_.empty()) log_.append(pending_);
    pending_.clear();
  }

 private:
  RunLogWriter& log_;
  std::string pending_;
};

// Whether a process group still has live members.
//
// kill(-pgid, 0) says whether any process has the group id, but a member that exited and
// waits to be reaped by a parent other than this process (a container's init that does not
// reap, say) still counts there. Such zombies hold nothing, so when kill says the group exists
// the members are looked up in /proc (at most every kProcScanInterval) and zombies ignored.
class GroupWatch {
 public:
  explicit GroupWatch(pid_t pgid) : pgid_(pgid) {}

  using State = GroupEnding::Group;

  // Call only after the leader is reaped: a zombie this process has not reaped is its child,
  // and reaping it here would lose its status.
  State check() {
    // Members that became this process's children (when it is PID 1 or a subreaper) are reaped
    // here so that they do not linger as zombies.
    int status = 0;
    while (::waitpid(-pgid_, &status, WNOHANG) > 0) {
    }
    bool unsignalable = false;
    if (::kill(-pgid_, 0) != 0) {
      if (errno == ESRCH) return State::kGone;
      if (errno != EPERM) return State::kAlive;
      unsignalable = true;
    }
    auto now = SteadyClock::now();
    if (now - last_scan_ < kProcScanInterval) return last_state_;
    last_scan_ = now;
    if (!has_live_member()) {
      last_state_ = State::kGone;
    } else {
      last_state_ = unsignalable ? State::kUnsignalable : State::kAlive;
    }
    return last_state_;
  }

 private:
  // True when /proc lists a process of the group that is not a zombie, or cannot be read.
  bool has_live_member() const {
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return true;
    bool live = false;
    while (dirent* entry = ::readdir(proc)) {
      if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
      std::ifstream stat_file(std::string("/proc/") + entry->d_name + "/stat");
      std::string stat;
      if (!std::getline(stat_file, stat)) continue;  // gone meanwhile
      // "pid (comm) state ppid pgrp ...": comm may hold anything, so parse after the last ')'.
      auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      char state = 0;
      long ppid = 0;
      long pgrp = 0;
      if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
      if (pgrp == pgid_ && state != 'Z' && state != 'X') {
        live = true;
        break;
      }
    }
    ::closedir(proc);
    return live;
  }

  pid_t pgid_;
  SteadyClock::time_point last_scan_{};
  State last_state_ = State::kAlive;
};

int ms_until(SteadyClock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, kMaxPollMs));
}

// Watches one started script until it and its group are gone; see run_script.
class Supervisor {
 public:
  Supervisor(pid_t pid, UniqueFd output, RunLogWriter& log, std::stop_token stop,
             std::chrono::milliseconds grace)
      : pid_(pid),
        output_(std::move(output)),
        lines_(log),
        log_(log),
        stop_(std::move(stop)),
        ending_(grace),
        group_(pid) {
    // Both optional: without them the loop polls (exit every 50 ms, stop likewise).
    pidfd_ = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  }

  ScriptOutcome run() {
    int wake_fd = wake_.get();
    // Runs on the thread that requests the stop: only a write to an eventfd.
    std::stop_callback on_stop(stop_, [wake_fd]() noexcept {
      if (wake_fd >= 0) {
        std::uint64_t one = 1;
        [[maybe_unused]] auto ignored = ::write(wake_fd, &one, sizeof one);
      }
    });

    for (;;) {
      reap_leader();
      GroupEnding::Look look{leader_done_, stop_.stop_requested(), GroupEnding::Group::kAlive,
                             SteadyClock::now()};
      // The group is looked at only once the leader is reaped (see GroupWatch::check).
      if (leader_done_) look.group = group_.check();
      const auto step = ending_.next(look);
      if (step == GroupEnding::Step::kDone) break;
      switch (step) {
        case GroupEnding::Step::kTerminateLeftovers:
          note_in_log("[cronwheel] the script exited; ending the processes it left running in its "
                      "process group");
          [[fallthrough]];
        case GroupEnding::Step::kTerminateStopped:
          ::kill(-pid_, SIGTERM);
          ::kill(-pid_, SIGCONT);  // a stopped process acts on SIGTERM only once continued
          break;
        case GroupEnding::Step::kKillAfterGrace:
          note_in_log("[cronwheel] the process group was still running " +
                      std::to_string(ending_.grace().count()) + " ms after SIGTERM: sending SIGKILL");
          [[fallthrough]];
        case GroupEnding::Step::kKill:
          ::kill(-pid_, SIGKILL);
          break;
        case GroupEnding::Step::kWait:
        case GroupEnding::Step::kDone:
          break;
      }
      wait_for_events();
    }

    drain();
    lines_.finish();
    return ending_.outcome(leader_status_, status_lost_);
  }

 private:
  // A line of the supervisor's own, after what the script has written so far.
  void note_in_log(const std::string& note) {
    for (int i = 0; i < kMaxDrainReads && output_ && read_output(); ++i) {
    }
    lines_.finish();
    log_.append(note);
  }

  void reap_leader() {
    if (leader_done_) return;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      leader_done_ = true;
      leader_status_ = status;
      pidfd_.reset();
    } else if (r < 0 && errno == ECHILD) {
      // Reaped by someone else: SIGCHLD is ignored in this process, or another thread waits
      // for any child. The status is lost.
      leader_done_ = true;
      status_lost_ = true;
      pidfd_.reset();
    }
  }

  void wait_for_events() {
    int timeout = -1;
    auto at_most = [&](int ms) { timeout = timeout < 0 ? ms : std::min(timeout, ms); };
    const bool ending = ending_.ending();
    const bool killed = ending_.killed();
    if (!pidfd_ && !leader_done_) at_most(ending ? static_cast<int>(kGroupPollInterval.count()) : 50);
    if (!wake_ && !ending) at_most(50);
    if (ending && !killed) at_most(ms_until(ending_.kill_at()));
    if (ending && (leader_done_ || killed)) at_most(static_cast<int>(kGroupPollInterval.count()));
    at_most(kMaxPollMs);

    pollfd fds[3];
    nfds_t count = 0;
    int output_index = -1;
    int wake_index = -1;
    if (output_) {
      output_index = static_cast<int>(count);
      fds[count++] = {output_.get(), POLLIN, 0};
    }
    if (pidfd_ && !leader_done_) fds[count++] = {pidfd_.get(), POLLIN, 0};
    if (wake_ && !ending) {
      wake_index = static_cast<int>(count);
      fds[count++] = {wake_.get(), POLLIN, 0};
    }
    int ready = ::poll(fds, count, timeout);
    if (ready <= 0) return;  // timeout, or EINTR: the loop looks again
    if (output_index >= 0 && fds[output_index].revents != 0) read_output();
    if (wake_index >= 0 && fds[wake_index].revents != 0) {
      std::uint64_t value = 0;
      [[maybe_unused]] auto ignored = ::read(wake_.get(), &value, sizeof value);
    }
  }

  // One read (the descriptor is non-blocking): the loop stays responsive to stop and exit
  // however much the script writes. Returns false when nothing more can come from the pipe now.
  bool read_output() {
    buffer_.resize(kPipeReadChunk);
    ssize_t n = ::read(output_.get(), buffer_.data(), buffer_.size());
    if (n > 0) {
      lines_.feed(buffer_.data(), static_cast<std::size_t>(n));
      return true;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return false;
    output_.reset();  // end of file: every writer closed it (or a read error)
    return false;
  }

  // What the group wrote before it ended is in the pipe; take it without waiting for writers
  // outside the group.
  void drain() {
    for (int i = 0; i < kMaxDrainReads && output_ && read_output(); ++i) {
    }
    output_.reset();
  }

  pid_t pid_;
  UniqueFd output_;
  UniqueFd pidfd_;
  UniqueFd wake_;
  OutputLines lines_;
  RunLogWriter& log_;
  std::stop_token stop_;
  GroupEnding ending_;  // the decisions: when to TERM and KILL, how the run ended
  GroupWatch group_;
  std::vector<char> buffer_;

  bool leader_done_ = false;
  int leader_status_ = 0;
  bool status_lost_ = false;
};

}  // namespace

ScriptOutcome run_in_process_group(const fs::path& program, std::vector<std::string> argv,
                                   RunLogWriter& log, std::stop_token stop,
                                   std::chrono::milliseconds grace, const RunAsUser* run_as,
                                   const std::vector<std::string>& extra_environment) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return failed_to_start(std::string("cannot create the output pipe: ") + std::strerror(errno));
  }
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);
  // Only this side is non-blocking: the child's stdout stays an ordinary blocking pipe.
  ::fcntl(read_end.get(), F_SETFL, ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);

  // Absolute: a script run as a user starts in that user's home directory.
  std::error_code ec;
  fs::path absolute = fs::absolute(program, ec);
  if (ec) absolute = program;
  const Started started =
      spawn_in_new_group(absolute, std::move(argv), write_end.get(), run_as, extra_environment);
  // The child's copies of the write end are now the only ones: end of file comes when the
  // last process holding it ends.
  write_end.reset();
  if (started.pid < 0) {
    const std::string step = started.failure.step;
    std::string message = "cannot start " + program.string() + ": ";
    if (step != "exec") {
      message += step;
      if (run_as != nullptr && (step == "setgroups" || step == "setgid" || step == "setuid" ||
                                step == "chdir")) {
        message += " (as user " + run_as->name + ")";
      }
      message += ": ";
    }
    return failed_to_start(message + std::strerror(started.failure.error));
  }
  return Supervisor(started.pid, std::move(read_end), log, std::move(stop), grace).run();
}


}  // namespace cronwheel::executor
