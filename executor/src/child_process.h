#pragma once

#include <sys/types.h>

#include <optional>

// Forking from a multithreaded process. Between fork and exec the child is a copy of one thread
// of this process, holding whatever locks the other threads held at that instant (malloc's, the
// logger's, ...): it may make async-signal-safe calls only. Whatever it needs (argument and
// environment arrays, paths, the user to switch to) is therefore built before the fork, and a
// step that fails is reported to the parent through a close-on-exec pipe: the parent reads
// either a ChildFailure or, once exec succeeded, end of file.
namespace cronwheel::executor {

// A step of a child that failed before exec (or before it was done, for a child that never
// execs). Fixed size, no pointers: it crosses the pipe as bytes.
struct ChildFailure {
  int error = 0;         // errno of the step
  char step[24] = {};    // "setpgid", "setuid", "exec", ... (cut to fit, always terminated)

  // Async-signal-safe.
  static ChildFailure of(const char* step, int error) noexcept;
};

// In the child: writes `failure` to `fd` in one write (smaller than PIPE_BUF: atomic).
// Async-signal-safe.
void report_failure(int fd, const ChildFailure& failure) noexcept;

// In the parent: reads `fd` (the pipe's read end; the parent has closed its write end) until
// end of file. nullopt when the child reported nothing: it reached exec, or ended without a
// word (the caller learns how from waitpid).
std::optional<ChildFailure> read_failure(int fd);

// fork() for a child that makes async-signal-safe calls only and then execs or _exits: no
// atfork handler runs (glibc's _Fork), and the child starts with every signal blocked, so that
// no handler of this process runs in it before it has reset the dispositions (reset_signals).
// The calling thread's signal mask is as before in the parent. Returns what fork returns.
pid_t fork_for_exec() noexcept;

// In the child, before exec: every signal at its default disposition (an ignored signal would
// stay ignored across exec), then none blocked. Async-signal-safe.
void reset_signals() noexcept;

}  // namespace cronwheel::executor
