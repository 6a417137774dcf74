#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/protocol/messages.h"
#include "common/util/clock.h"
#include "executor/src/unique_fd.h"

namespace cronwheel::executor {

// The spool directory of run results no admin has accepted yet: the files, their format, their
// locks and their durability. What to spool and when to re-send it is CallbackSender's business.
//
// Files: <dir>/callback-<epoch ms>-<pid>-<seq>-<random>.spool, unique across processes and
// restarts; the time is the injected clock's wall time when the file was written, and list()
// returns them oldest first (names start with the time; the files one spool writes within a
// millisecond follow their 20-digit sequence number). Other files in the
// directory are left alone. Each line is one JSON callback body (a bare array, as sent on the
// wire) of at most `results_per_line` results. Files have mode 0600 and the directory 0700
// (file_io.h): they hold results no script may read. A file is written once, fsync'ed (and its
// directory after it) before write() returns, and never appended to later.
//
// Locks: whoever reads or writes a file holds an exclusive flock(2) on it, so several senders
// (several processes) may share a directory: a file locked by another live sender is left to it
// (lock() returns nullopt), and a file removed by the sender that held it is seen as gone.
//
// Damage: a line that cannot be read (a crash in the middle of a write, a damaged disk) is
// skipped with a warning, the first time this spool reads the file, and never hides the rest.
//
// Counts: the spool remembers the log ids of the results each file it wrote or read holds;
// total() counts them and holds() looks one up (files of other live senders are not counted).
//
// Thread-safe; each call does its own I/O on the calling thread, never under the spool's lock.
class CallbackSpool {
 public:
  using Results = std::vector<common::protocol::HandleCallbackParam>;

  static constexpr std::string_view kFilePrefix = "callback-";
  static constexpr std::string_view kFileSuffix = ".spool";

  // Does no I/O. `clock` names the files (see Files) and must outlive the spool.
  CallbackSpool(std::filesystem::path dir, std::size_t results_per_line, const common::Clock& clock);

  const std::filesystem::path& dir() const noexcept { return dir_; }

  // Creates the directory if needed, and gives it mode 0700 (file_io.h) if it has another; logs
  // a failure (write() tries again).
  void create_dir() const;

  // Writes `results` to a new file, durably, and counts them. Returns its name, or nullopt
  // (logged) when the disk refused; then nothing of it is left behind.
  std::optional<std::string> write(const Results& results);

  // Names of the spool files in the directory, oldest first.
  std::vector<std::string> list() const;

  // Opens and locks a file for reading: nullopt when another sender holds it (gone = false) or
  // it no longer exists (gone = true).
  std::optional<UniqueFd> lock(const std::string& name, bool& gone) const;

  // Reads every result of a locked file and counts them; nullopt (logged) when it cannot be read.
  std::optional<Results> read(const UniqueFd& locked, const std::string& name);

  // Removes a file (a missing one counts as removed) and forgets its count. False (logged) when
  // it could not be removed.
  bool remove(const std::string& name);

  // Forgets the count of a file (gone, or taken over by another sender).
  void forget(const std::string& name);
  // Forgets the counts of files not in `names` (sorted), which are gone.
  void keep_only(const std::vector<std::string>& names);
  // Whether this spool knows how many results `name` holds.
  bool counted(const std::string& name) const;
  // Replaces every count with those of the files in the directory now (locking and reading
  // each one that no other sender holds).
  void recount();
  std::size_t total() const;
  // Whether a file this spool wrote or read holds a result for `log_id`.
  bool holds(std::int64_t log_id) const;

 private:
  std::filesystem::path path_of(const std::string& name) const { return dir_ / name; }
  std::string next_name();

  const std::filesystem::path dir_;
  const std::size_t results_per_line_;
  const common::Clock& clock_;
  const std::uint64_t name_salt_;
  std::atomic<std::uint64_t> next_sequence_{0};  // of the next file name

  mutable std::mutex mutex_;                  // guards what follows
  std::map<std::string, std::vector<std::int64_t>> counts_;  // file name -> its log ids, sorted
  std::set<std::string> read_files_;           // files read at least once
};

}  // namespace cronwheel::executor
