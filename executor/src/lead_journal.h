#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/clock.h"
#include "executor/src/journal_file.h"
#include "executor/src/unique_fd.h"

namespace cronwheel::executor {

// The write-ahead journal of fires held for lead dispatch (lead_hold.h): what a process that dies
// (SIGKILL, a crash, the OOM killer) held and had not started, so that the next process on the
// same directory reports those fires as not started and the admin sends them again, and never
// reports one that was started (which could run it twice).
//
// Records, in the order they happened: a fire held (its log id and logDateTime), and fires
// started, cancelled or returned (reported not started). A fire is unstarted when its last record
// is "held". Each record is written before the step it records takes effect: held() before /lead
// answers, started() before the fires are started.
//
// Durability: each call is one write(2) into the page cache (no fsync): it survives the process,
// not the machine, as the result journal (result_journal.h).
//
// Files and lines: journal_file.h's format: <dir>/lead-<epoch ms>-<pid>-<random>-<n>.journal,
// flock'ed by their process while it lives. Lines "h <logId> <logDateTime>", one per fire, and
// "s|c|n <logId>,<logId>,..." (started, cancelled, returned), at most kIdsPerLine ids each. A line
// whose checksum does not match, or that cannot be read, is skipped with a warning.
//
// Size: the journal knows which fires are held. When none is, the file is emptied (ftruncate);
// when it grows beyond compact_bytes, the held fires are written to a new file and the old one is
// removed. So the file holds about compact_bytes at most, plus what is held.
//
// Failures: a call that cannot write returns false and changes nothing (a partial line is cut
// back), logged once per failure streak.
//
// Thread-safe: one mutex serializes the calls.
class LeadJournal {
 public:
  static constexpr std::string_view kFilePrefix = "lead-";
  static constexpr std::string_view kFileSuffix = ".journal";
  static constexpr std::size_t kIdsPerLine = 1'000;

  struct Options {
    std::filesystem::path dir;
    std::size_t compact_bytes = std::size_t{4} << 20;
  };

  struct Fire {
    std::int64_t log_id = 0;
    std::int64_t log_date_time = 0;
    friend bool operator==(const Fire&, const Fire&) = default;
  };

  // Does no I/O: the first write creates the directory if needed and the file. `clock` names the
  // file and must outlive the journal.
  LeadJournal(Options options, const common::Clock& clock);
  ~LeadJournal();  // close()

  LeadJournal(const LeadJournal&) = delete;
  LeadJournal& operator=(const LeadJournal&) = delete;

  // Records `fires` as held, in one write. False when it could not be written.
  bool held(const std::vector<Fire>& fires);
  // Record that held fires were started, cancelled or returned, in one write each. Ids not held
  // are ignored; false when the record could not be written (the fires stay held here).
  bool started(const std::vector<std::int64_t>& log_ids);
  bool cancelled(const std::vector<std::int64_t>& log_ids);
  bool returned(const std::vector<std::int64_t>& log_ids);

  // Fires held and neither started, cancelled nor returned.
  std::size_t held_count() const;

  // Closes the file: removed when nothing is held, kept for the next process otherwise. Writes
  // after close() return false. Idempotent.
  void close();

  // The journal of one process that is gone, locked by this object while it lives.
  struct Orphan {
    std::string instance;
    std::vector<OrphanJournalFile> files;
    std::vector<Fire> unstarted;  // held, neither started, cancelled nor returned; by log id
  };
  // The journals no live process holds (this one's are held), one per process.
  std::vector<Orphan> orphans() const;
  // Removes an orphan's files (once its fires are reported). False (logged) when one could not be
  // removed; the next process then reads it again.
  bool remove(Orphan& orphan) const;

 private:
  bool record_locked(char kind, const std::vector<std::int64_t>& log_ids);
  bool open_file_locked();
  bool write_locked(const std::string& lines);
  void after_release_locked();

  const Options options_;
  const common::Clock& clock_;

  mutable std::mutex mutex_;  // guards what follows
  std::string instance_;      // set when the first file is opened
  std::uint64_t next_file_ = 0;
  std::string name_;  // the file written, "" before the first
  UniqueFd fd_;
  std::size_t bytes_ = 0;
  std::map<std::int64_t, std::int64_t> held_;  // log id → logDateTime
  bool closed_ = false;
  bool failing_ = false;
};

}  // namespace cronwheel::executor
