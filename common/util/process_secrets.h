#pragma once

#include <cstddef>
#include <span>
#include <string_view>

// Keeping the secrets a process was started with from other processes of its user (the scripts
// it runs, first of all).
//
// Reading its configuration does not make a process forget it. /proc/<pid>/cmdline (readable by
// every local user; what ps shows) is the argument block as it is in memory now, and
// /proc/<pid>/environ (readable by the same user and root) is the environment block the process
// started with: unsetenv() only drops a pointer from `environ`, the bytes stay. The functions
// below overwrite those bytes in place, as daemons that hide passwords from ps do. And a
// process of the same user can read another's memory and ptrace it unless that one is not
// dumpable.
//
// Call them from main() once the configuration is read and before any other thread starts:
// the environment and argv are not thread-safe.
namespace cronwheel::common {

// Removes the variables `names` from the environment (unsetenv) and overwrites each of their
// "NAME=value" entries in the environment block the process started with by NUL bytes, so that
// neither getenv() nor /proc/self/environ shows name or value. Names that are empty or hold
// '=' are skipped. Returns how many entries of the block were overwritten (0 also when /proc
// is not mounted: then nobody can read the block through it either).
std::size_t erase_environment_variables(std::span<const std::string_view> names);

// Overwrites with 'x' the value of every long option in `options` ("--access-token") found in
// argv[1..argc), given as "--option VALUE" or "--option=VALUE", wherever it appears: ps and
// /proc/self/cmdline then show "--access-token=xxxxxxxx" (the length stays). argv's pointers,
// the option names and the other arguments are unchanged. Returns how many values were
// overwritten.
std::size_t hide_option_values(int argc, char** argv, std::span<const std::string_view> options);

// prctl(PR_SET_DUMPABLE, 0): processes of the same user can no longer ptrace this process nor
// read its memory or the /proc entries that need that right (environ, mem, maps, fd, ...), and
// it leaves no core dump. A child gets its own dumpable flag back at exec, so the processes it
// starts are ordinary ones. Returns false (errno set) when the call failed.
bool make_undumpable() noexcept;

}  // namespace cronwheel::common
