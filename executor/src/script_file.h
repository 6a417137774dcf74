#pragma once

#include <filesystem>
#include <string>

#include "executor/src/run_as.h"

namespace cronwheel::executor {

// Script files on disk: the directory they live in and how one is written. Which file a run uses
// (its name) is run_script's decision (script_runner.h).
//
// A script file may hold credentials. It has mode 0600, or, for a script run as another user
// (`run_as` not null nor this process's own user), mode 0640 and that user's primary group; its
// owner is always this process's user, so the script cannot change its own file. The directory
// of such files is given to that group with mode 0750: the user can read the files in it, other
// users cannot even list it; otherwise the directory has mode 0700. (An existing directory is
// given that mode too: earlier versions left it 0755.)

// Creates `dir` (and its parents) for script files, with the group and mode above when `run_as`
// is another user. Throws std::system_error naming the path.
void prepare_script_directory(const std::filesystem::path& dir, const RunAsUser* run_as);

// Makes {script_dir}/{name} hold exactly `source`, with the owner, group and mode above, and
// returns its absolute path. Prepares the directory first. Writes only when the file is missing
// or differs in content, owner, group or mode, and then atomically: a temporary file, unique to
// the call, renamed over it once complete, so a run starting meanwhile (or after a crash) sees
// the old file or the new one, never half of one. Throws std::system_error naming the path.
std::filesystem::path write_script_file(const std::filesystem::path& script_dir,
                                        const std::string& name, const std::string& source,
                                        const RunAsUser* run_as);

}  // namespace cronwheel::executor
