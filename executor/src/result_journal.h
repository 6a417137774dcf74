#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/protocol/messages.h"
#include "common/util/clock.h"
#include "executor/src/journal_file.h"  // fnv1a32, the line format
#include "executor/src/unique_fd.h"

namespace cronwheel::executor {

// The write-ahead journal of run results: every result is appended here before it is queued for
// an admin, so it survives the death of the executor process (SIGKILL, a crash, the OOM killer)
// at any moment after its run ended, and the next process on the same directory sends it.
//
// Durability: an append is one write(2) into the page cache, never fsync'ed, so it costs about a
// microsecond and survives the process, not the machine: a power loss can lose the results of the
// last seconds, as it loses the tail of their run logs. Results that wait for an admin for longer
// (an admin outage) go to CallbackSpool's fsync'ed files.
//
// Acknowledged: a result an admin accepted, or one kept durably elsewhere (a spool file).
// Acknowledgements are appended to the journal too, so the next process sends only what was not
// acknowledged (plus, after a crash, at most the batch whose acknowledgement was being written:
// a repeated result, which the admin ignores).
//
// Files: <dir>/results-<epoch ms>-<pid>-<random>-<n>.journal (the time: the injected clock's wall
// time at the first append), of mode 0600 (in a directory created
// with mode 0700: file_io.h). A process writes only its own files (its "instance" is the name
// without -<n>) and holds an exclusive flock(2) on each for as long as it has it open, so
// executors may share a directory and orphans() returns only the files of processes that are
// gone. Other files in the directory are left alone.
//
// Lines: "r <seq> <callback JSON>\t<checksum>" for a result and "a <seq>[-<seq>][,...]\t<checksum>"
// for acknowledged results, where the checksum is the FNV-1a 32-bit hash of what precedes the tab,
// as 8 hex digits. A line whose checksum does not match (torn by a crash, damaged on disk) or that
// cannot be read is skipped with a warning and never trusted; it never hides the lines after it.
//
// Size: while every result in the current file is acknowledged and the file holds more than
// truncate_bytes, it is emptied (ftruncate); when it reaches segment_bytes a new file is started,
// and an older file is removed as soon as all of its results are acknowledged. So the journal
// holds the unacknowledged results plus at most about segment_bytes + truncate_bytes of
// acknowledged ones; CallbackSender bounds the unacknowledged ones (they are its queue: results
// it has not yet sent or spooled).
//
// Thread-safe: appends and acknowledgements are serialized by one mutex; each is one write(2).
class ResultJournal {
 public:
  using Result = common::protocol::HandleCallbackParam;

  static constexpr std::string_view kFilePrefix = "results-";
  static constexpr std::string_view kFileSuffix = ".journal";

  struct Options {
    std::filesystem::path dir;
    std::size_t truncate_bytes = std::size_t{1} << 20;
    std::size_t segment_bytes = std::size_t{8} << 20;
  };

  // Does no I/O: the first append creates the directory if needed and the first file. `clock`
  // names the files (see Files) and must outlive the journal.
  ResultJournal(Options options, const common::Clock& clock);
  ~ResultJournal();  // close()

  ResultJournal(const ResultJournal&) = delete;
  ResultJournal& operator=(const ResultJournal&) = delete;

  // Appends `result` and returns its sequence number (> 0), or 0 when it could not be written
  // (logged once per failure streak); the result is then only in memory, and the file is left as
  // it was before the append.
  std::uint64_t append(const Result& result);

  // Marks results acknowledged; 0, unknown and already acknowledged numbers are ignored.
  void acknowledge(const std::vector<std::uint64_t>& seqs);

  // Closes the files. When every result is acknowledged they are removed (a clean stop leaves
  // nothing behind); otherwise they stay for the next process. Appends after close() return 0.
  // Idempotent.
  void close();

  // Results appended and not yet acknowledged.
  std::size_t unacknowledged() const;

  // The journal of one process that is gone, locked by this object while it lives.
  struct Orphan {
    std::string instance;
    std::vector<std::string> files;
    std::vector<UniqueFd> locks;
    std::vector<Result> results;  // not acknowledged, in the order they were written
  };

  // The journals no live process holds (their writer died, or stopped with results it could
  // neither deliver nor spool), one per process. Files held by a live process (this one
  // included) are left alone; unreadable lines are skipped with a warning.
  std::vector<Orphan> orphans() const;

  // Removes an orphan's files (once its results are safe elsewhere). False (logged) when one could
  // not be removed; the next process then reads it again.
  bool remove(Orphan& orphan) const;

 private:
  struct Segment {
    std::string name;
    UniqueFd fd;
    std::uint64_t first = 0;  // the sequence number of its first result
    std::vector<bool> acked;  // by seq - first, one per result written to it
    std::size_t unacked = 0;
    std::size_t bytes = 0;
  };

  bool open_segment_locked();
  bool write_line_locked(Segment& segment, const std::string& line);
  void drop_acknowledged_locked();

  const Options options_;
  const common::Clock& clock_;

  mutable std::mutex mutex_;               // guards what follows
  std::string instance_;                   // set when the first file is opened
  std::uint64_t next_file_ = 0;
  std::uint64_t next_seq_ = 1;
  std::map<std::uint64_t, Segment> segments_;  // by first sequence number; the last one is written
  std::size_t unacked_ = 0;
  bool closed_ = false;
  bool failing_ = false;  // the last append failed (logged once per streak)
};

}  // namespace cronwheel::executor
