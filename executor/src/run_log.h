#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cronwheel::executor {

// One run's log file, open for appending.
//
// Thread-safe: a handler's own threads and a script's output pump may append concurrently;
// each append lands whole (one write(2) of the whole text on an O_APPEND descriptor, under the
// writer's mutex), never interleaved with another, even with another writer of the same file.
// Text is written as given, with a newline added when it does not end in one (so "" adds an
// empty line).
//
// append() does not throw: a failed write (disk full, ...) is reported to the process log once
// per writer and the text is dropped, so logging can never fail a run. A writer may cap the size
// of its log (RunLogStore does): the append that would take the file past the cap is replaced by
// one line saying that the log was truncated and at what size, and every later append() is
// dropped (append_closing() is not).
class RunLogWriter {
 public:
  virtual ~RunLogWriter() = default;
  virtual void append(std::string_view text) = 0;
  // Appends like append(), also once the log reached its size cap: for the executor's own
  // closing lines of a run (a few lines of bounded length), so that a truncated log still ends
  // with the run's result.
  virtual void append_closing(std::string_view text) { append(text); }
  // The size cap at which append() started dropping text; nullopt while nothing was dropped.
  virtual std::optional<std::size_t> truncated_at() const { return std::nullopt; }
  // Marks the log finished as RunLogStore::mark_finished does, through the open file (no path to
  // look up), after the last line. False when this writer cannot (no file, or a file system that
  // drops the mark): the caller then marks it by path. Never throws.
  virtual bool mark_finished() noexcept { return false; }
};

// A page of a run's log, for the admin's POST /log.
struct LogPage {
  bool found = false;    // the log file exists
  int from_line = 1;     // the first line asked for (1-based)
  int to_line = 0;       // the last line returned; from_line - 1 when none
  std::string content;   // lines from_line..to_line, each ending in '\n'
  // Nothing readable follows to_line: the page reached the end of what is written so far.
  bool end_of_file = false;
  // The run was marked finished (RunLogStore::mark_finished) before this page was read, so no
  // more lines will come. The executor answers /log with isEnd = finished && end_of_file.
  bool finished = false;
};

// The run logs of this executor: {dir}/yyyy-MM-dd/{logId}.log, where the date is the
// trigger's logDateTime in UTC (so the admin's later /log call, which sends the same
// logDateTime, finds the same file on any machine).
//
// A run that is over is marked on its log file's mode (the sticky bit, S_ISVTX, which means
// nothing for a regular file on Linux): it is on disk, so /log still answers isEnd after the
// executor restarts, no output of the run (a script can print anything) can forge it, and it
// creates no file (a run creates one file, its log). Where the log file is missing, or the file
// system does not keep the bit, the mark is an empty file {logId}.end beside it, as earlier
// versions always wrote; both are read.
//
// Logs are private to the executor's user: day directories are created with mode 0700, log files
// with mode 0600 (file_io.h). A log is capped at max_log_bytes (see RunLogWriter): a run writing
// more goes on, its further output dropped.
//
// logDateTime names a directory, so a run's time must lie in [kMinLogDateTimeMs, now +
// kMaxLogDateTimeAhead] (log_date_time_problem()): the executor refuses other times on /run and
// /log, and a day directory name is always yyyy-MM-dd that retention can remove.
//
// Thread-safe. Copies share the read position cache (see read()).
class RunLogStore {
 public:
  // A page never holds more than this many bytes of log text, however long the lines: the
  // admin reads a big log in several calls.
  static constexpr std::size_t kMaxPageBytes = 256 * 1024;
  static constexpr std::size_t kDefaultMaxLogBytes = std::size_t{16} << 20;
  // 2000-01-01T00:00:00Z: no admin schedules runs before it.
  static constexpr std::int64_t kMinLogDateTimeMs = 946'684'800'000;
  // A run's time may be ahead of this executor's clock by clock skew, never by days; a
  // directory dated in the future would escape retention until that day.
  static constexpr std::chrono::hours kMaxLogDateTimeAhead{24};

  // retention_days 0 keeps everything; max_log_bytes bounds each run's log file.
  RunLogStore(std::filesystem::path dir, int retention_days,
              std::size_t max_log_bytes = kDefaultMaxLogBytes);

  // Why `log_date_time_ms` cannot be a run's time when this executor's clock says `now_ms` (a
  // phrase to follow the field's name: "is 253402300800000 (year 10000): ..."), or nullopt
  // when it can.
  static std::optional<std::string> log_date_time_problem(std::int64_t log_date_time_ms,
                                                          std::int64_t now_ms);

  // Opens (creating its day directory, appending to an existing file) the log of one run; its
  // size so far counts toward the cap. Throws std::system_error naming the path when it cannot.
  std::unique_ptr<RunLogWriter> open(std::int64_t log_date_time_ms, std::int64_t log_id) const;

  // Lines from `from_line` on (1-based; values below 1 read from 1), as many whole lines as fit
  // in `max_bytes` (at least one line per page when one is there to read).
  //
  // A line is readable once its '\n' is written; an unterminated last line (a write in
  // progress, or the tail of a crashed process's output) is held back until the run is marked
  // finished, and then returned with a '\n' added.
  //
  // A single line longer than `max_bytes` is returned alone, cut to fit `max_bytes` (at a
  // UTF-8 character boundary, with " [line cut: N bytes not shown]" appended when max_bytes
  // leaves room for it); it still counts as one line, so the next page, from to_line + 1,
  // continues with the line after it. (Script output never needs this: it is split into
  // lines of at most kMaxOutputLineBytes as it is read.)
  //
  // Finding `from_line` scans the file from the start, except that the store remembers where
  // the pages it last served for a few recent files ended, so an admin following a growing log
  // page by page reads each byte about once. A missing file is found = false; any other error
  // throws std::system_error naming the path.
  LogPage read(std::int64_t log_date_time_ms, std::int64_t log_id, int from_line,
               std::size_t max_bytes = kMaxPageBytes) const;

  // Marks a run over: call after its last append. Idempotent. Returns false (and logs why)
  // when the marker cannot be written; never throws.
  bool mark_finished(std::int64_t log_date_time_ms, std::int64_t log_id) const noexcept;
  bool is_finished(std::int64_t log_date_time_ms, std::int64_t log_id) const noexcept;

  // Gives the day directories that exist the mode 0700 (earlier versions made them 0755), where
  // they are this process's user's; returns how many could not be changed (each logged).
  int make_day_directories_private() const;

  // Removes the day directories whose date is more than retention_days before `now_ms`'s UTC
  // date (with retention 30, on 2024-03-31 a directory 2024-03-01 stays and 2024-02-29 goes).
  // Only real directories (not symlinks) named exactly yyyy-MM-dd with a valid date are
  // considered; everything else in `dir` (script files, the callback spool, other files) is
  // left alone. Returns how many were removed; one that cannot be removed is logged and
  // skipped. Does nothing when retention_days is 0.
  int remove_expired(std::int64_t now_ms) const;

  std::filesystem::path path_for(std::int64_t log_date_time_ms, std::int64_t log_id) const;
  // Whether the run's log exists (it started here, and its log has not expired).
  bool exists(std::int64_t log_date_time_ms, std::int64_t log_id) const;
  const std::filesystem::path& dir() const noexcept { return dir_; }

  // "2024-03-09" for any time of that UTC day.
  static std::string day_name(std::int64_t epoch_ms);

 private:
  struct PositionCache;

  std::filesystem::path end_marker_for(std::int64_t log_date_time_ms, std::int64_t log_id) const;

  std::filesystem::path dir_;
  int retention_days_;
  std::size_t max_log_bytes_;
  std::shared_ptr<PositionCache> positions_;
};

// Writers that turn a byte stream into log lines (a script's output) split lines longer than
// this, so every line fits in a page.
inline constexpr std::size_t kMaxOutputLineBytes = 64 * 1024;


}  // namespace cronwheel::executor
