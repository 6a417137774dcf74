#pragma once

#include <chrono>
#include <filesystem>
#include <stop_token>
#include <string>
#include <vector>

#include "executor/src/run_as.h"
#include "executor/src/run_log.h"
#include "executor/src/script_runner.h"

namespace cronwheel::executor {

// The operating-system side of run_script and run_process: starts `program` with `argv`
// (argv[0] = its name as the child sees it) in a process group of its own and supervises the
// group until no process of it is left. What to run and when to end the group are decided
// elsewhere (script_runner.h: interpreters, GroupEnding); this file holds the system calls.
//
// Contract (the details are run_script's comment in script_runner.h):
//  - Start: fork and exec (posix_spawn cannot change the user) in a new process group whose id
//    is the child's pid; stdin from /dev/null; stdout and stderr on one pipe; every signal at
//    its default disposition and unblocked; no descriptor of this process other than 0-2; this
//    process's environment minus every CRONWHEEL_* variable (and, with `run_as`, HOME, USER and
//    LOGNAME of that user, whose groups and ids it takes before exec), plus `extra_environment`
//    ("NAME=value" entries, added after that filtering, so they may name CRONWHEEL_ variables of
//    the run's own; they must hold nothing secret). A failure before exec is reported back
//    through a close-on-exec pipe: kFailedToStart naming the step.
//  - Output: the pipe's bytes go to `log` line by line as they arrive (lines longer than
//    kMaxOutputLineBytes split, a last unterminated line written at the end); after the group is
//    gone only a bounded amount more is read, so a process that escaped the group cannot hold
//    the run open through the pipe.
//  - Supervision: one poll loop on the pipe, a pidfd of the leader and an eventfd the stop token
//    writes to (each optional: without them it polls). It reaps only the leader (waitpid on its
//    pid) and, after it, children of this process still in the group (when this process is PID 1
//    or a subreaper). Membership of the group is checked with kill(-pgid, 0) and, when that says
//    it exists, /proc (zombies of other parents do not count). Signals are sent to the whole
//    group, as GroupEnding says.
//
// Blocking, returns once the group is gone; thread-safe (runs of different jobs go on at once).
ScriptOutcome run_in_process_group(const std::filesystem::path& program,
                                   std::vector<std::string> argv, RunLogWriter& log,
                                   std::stop_token stop, std::chrono::milliseconds grace,
                                   const RunAsUser* run_as,
                                   const std::vector<std::string>& extra_environment = {});

}  // namespace cronwheel::executor
