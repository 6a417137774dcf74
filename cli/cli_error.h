#pragma once

// How a `cronwheel` command fails: an exit status and the one line said on stderr.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace cronwheel::cli {

// The process's exit status (docs/cli.md, "Exit status").
enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,       // the operation failed: an HTTP error, no such object, no answer
  kExitUsage = 2,        // bad usage: unknown flag, missing argument, bad value, bad settings
  kExitChanges = 3,      // `apply --dry-run` found changes
  kExitInterrupted = 130,  // Ctrl-C (SIGINT), as a shell reports a process it interrupted
};

// A failed command. The line said is "cronwheel: <command>[ <subject>]: <message>", e.g.
// "cronwheel: jobs get billing/nightly: no such job", or "cronwheel: <message>" for a message
// that names its own subject (no answer from the server, a bad setting).
class CliError : public std::runtime_error {
 public:
  CliError(int status, std::string message, bool names_its_subject = false)
      : std::runtime_error(std::move(message)), status_(status), names_its_subject_(names_its_subject) {}

  int status() const noexcept { return status_; }
  bool names_its_subject() const noexcept { return names_its_subject_; }

  // The object the command was acting on when it failed ("billing/nightly"); empty: the
  // command's own arguments say it.
  const std::string& subject() const noexcept { return subject_; }
  void set_subject(std::string subject) { subject_ = std::move(subject); }

 private:
  int status_;
  bool names_its_subject_;
  std::string subject_;
};

inline CliError usage_error(std::string message) { return CliError(kExitUsage, std::move(message)); }
inline CliError operation_failed(std::string message) { return CliError(kExitFailed, std::move(message)); }

// What a server answered that the command cannot use (not JSON, a field missing or of the wrong
// type): status 1, "unexpected answer from the server: <what>".
inline CliError unexpected_answer(std::string_view what) {
  return CliError(kExitFailed, "unexpected answer from the server: " + std::string(what));
}

// `text` made fit for one line of a terminal: control characters (newlines, escapes) become
// spaces and it is cut at `max_bytes` (on a UTF-8 character boundary) with "...". For messages
// that come from a server.
std::string one_line(std::string_view text, std::size_t max_bytes = 512);

// The line said on stderr for `error`, without the newline. `command` is the command's path
// ("jobs get").
std::string error_line(std::string_view command, const CliError& error);

}  // namespace cronwheel::cli
