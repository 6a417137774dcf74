#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "executor/src/run_as.h"
#include "executor/src/unique_fd.h"

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

// A script run's output file, the one CRONWHEEL_OUTPUT_FILE names: the script may write its
// output JSON into it (run_script, script_runner.h, says what becomes of it).
//
// {script_dir}/.output-{job_id}-XXXXXX (a random suffix), created anew and empty for one run with
// O_EXCL, so nothing already there (a symbolic link planted by an earlier script) is opened. Only
// the run's user may write it: for a script run as another user it is given to that user (and
// its primary group) with mode 0600, which needs root or CAP_CHOWN; otherwise it is this
// process's user's, mode 0600. Such a user cannot create, rename or remove anything in the
// script directory (mode 0750, see above), so the name keeps naming this file. A script run as
// this process's own user can replace it; read() then takes nothing from it.
//
// The executor never opens the name again: read() goes through the descriptor opened when the
// file was created, so whatever the script puts at the name (a symbolic link to another file, a
// FIFO) is neither read nor written. The destructor removes the name (a link there, not what it
// points to). Not thread-safe; one run uses it on its own thread.
class OutputFile {
 public:
  // Creates the file in `script_dir` (made by prepare_script_directory). Throws
  // std::system_error naming the path and the step that failed.
  OutputFile(const std::filesystem::path& script_dir, std::int64_t job_id, const RunAsUser* run_as);
  ~OutputFile();

  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

  struct Content {
    enum class State {
      kRead,        // `bytes` holds what the file holds, or its first max_bytes + 1 bytes
      kReplaced,    // the name no longer names this file (removed, renamed over, a link)
      kUnreadable,  // reading failed: `error` is the errno
    };
    State state = State::kRead;
    std::string bytes;
    int error = 0;
  };
  // What the script left in the file: at most `max_bytes` + 1 bytes from its start (more than
  // `max_bytes` says it is longer), whatever its size. Call once the script's processes are gone.
  Content read(std::size_t max_bytes) const;

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
};

// Removes the output files an earlier process left in `script_dir` (it ended during their runs:
// a script may have written much into them). Call before any run starts; errors are ignored.
void remove_leftover_output_files(const std::filesystem::path& script_dir) noexcept;

}  // namespace cronwheel::executor
