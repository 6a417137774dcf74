#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Running script jobs and the `shell` handler as another user (ExecutorOptions.run_as, the
// standalone executor's --run-as).
//
// A script runs whatever code the admin sends. Run as the executor's own user it can read the
// executor's files and, unless the executor is non-dumpable, its memory and /proc entries; run
// as root it can do anything. Run as an unprivileged user it can do only what that user can.
//
// The user is looked up once, when the executor is built: a user database lookup (NSS) is not
// async-signal-safe, and a child between fork and exec may only make async-signal-safe calls,
// so starting a script needs everything resolved beforehand.
namespace cronwheel::executor {

// A user scripts run as. Immutable once found; thread-safe.
struct RunAsUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;               // primary group
  std::vector<gid_t> groups;   // supplementary groups, as initgroups would set them
  std::string home;            // the user database's home directory (may not exist)
  // The user, groups and supplementary groups are this process's own: nothing to switch (and
  // switching would need privileges this process may not have).
  bool is_this_process = false;
};

// Looks `name` up in the user database: a user name, or a numeric uid that has an entry.
// Throws std::invalid_argument with a one-line reason when there is no such user.
RunAsUser find_user(std::string_view name);

// Whether this process can run processes as `user` and end them: it switches to the user in a
// short-lived child (setgroups, setgid, setuid, as scripts are started), checks that it may
// signal that child, and, when `must_open` is given, that the child can open that directory
// as the user. nullopt when everything works; otherwise a one-line reason ("this process may
// not switch to user nobody (setuid: Operation not permitted): run the executor as root, or
// with CAP_SETUID, CAP_SETGID and CAP_KILL"). Blocking for the child's short life; thread-safe.
std::optional<std::string> run_as_problem(const RunAsUser& user,
                                          const std::filesystem::path& must_open = {});

// For a child between fork and exec only: sets the supplementary groups, the group and the user
// (real, effective and saved) to `user`'s, in that order (dropping the user first would leave
// no right to change the groups), then changes to the user's home directory, or "/" when that
// cannot be entered (the executor's working directory may be one the user has no business in).
// Does nothing for a user that is this process's own. Makes raw system calls only (no glibc
// wrapper that coordinates threads, no allocation): async-signal-safe. Returns 0, or the errno
// of the step that failed with `*step` naming it ("setgroups", "setgid", "setuid").
int switch_to_user(const RunAsUser& user, const char** step) noexcept;

}  // namespace cronwheel::executor
