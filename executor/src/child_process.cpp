#include "executor/src/child_process.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace cronwheel::executor {

ChildFailure ChildFailure::of(const char* step, int error) noexcept {
  ChildFailure failure;
  failure.error = error;
  // No strncpy: it is not on every list of async-signal-safe functions.
  std::size_t i = 0;
  for (; step != nullptr && step[i] != '\0' && i + 1 < sizeof failure.step; ++i) {
    failure.step[i] = step[i];
  }
  failure.step[i] = '\0';
  return failure;
}

void report_failure(int fd, const ChildFailure& failure) noexcept {
  ssize_t n = 0;
  do {
    n = ::write(fd, &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
}

std::optional<ChildFailure> read_failure(int fd) {
  ChildFailure failure;
  auto* bytes = reinterpret_cast<char*>(&failure);
  std::size_t got = 0;
  while (got < sizeof failure) {
    ssize_t n = ::read(fd, bytes + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got < sizeof failure) return std::nullopt;
  failure.step[sizeof failure.step - 1] = '\0';
  return failure;
}

pid_t fork_for_exec() noexcept {
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::_Fork();
  if (pid != 0) {
    const int saved = errno;
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    errno = saved;
  }
  return pid;
}

void reset_signals() noexcept {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    // SIGKILL and SIGSTOP cannot be changed, glibc's internal signals refuse: both fail harmlessly.
    ::sigaction(sig, &default_action, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace cronwheel::executor
