#include "executor/src/run_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/util/utf8.h"
#include "executor/src/file_io.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kLogReadChunk = 64 * 1024;
// A cut line gets this suffix only when the page leaves at least this much room.
constexpr std::size_t kMinBytesForCutNote = 64;
constexpr const char* kCutNotePrefix = " [line cut: ";
constexpr const char* kCutNoteSuffix = " bytes not shown]";
// Read positions remembered for this many files (the logs being followed right now).
constexpr std::size_t kCachedFiles = 64;

std::system_error path_error(int error, std::string_view what, const fs::path& path) {
  return std::system_error(error, std::generic_category(),
                           std::string(what) + " " + path.string());
}

// A log is marked finished by its mode: the sticky bit, which means nothing for a regular file on
// Linux.
bool is_finished_mode(mode_t mode) noexcept { return (mode & S_ISVTX) != 0; }
mode_t finished_mode(mode_t mode) noexcept { return (mode & 07777) | S_ISVTX; }

// Closes a descriptor on every path out of a scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

class FileRunLogWriter final : public RunLogWriter {
 public:
  // `size`: what the file holds already; `cap`: the most it may hold before the truncation note.
  FileRunLogWriter(int fd, fs::path path, std::size_t size, std::size_t cap, mode_t mode)
      : fd_(fd), path_(std::move(path)), size_(size), cap_(cap), mode_(mode) {}
  ~FileRunLogWriter() override { ::close(fd_); }

  void append(std::string_view text) override {
    std::string line = as_line(text);
    std::lock_guard lock(mutex_);
    if (truncated_) return;
    if (line.size() > cap_ || size_ > cap_ - line.size()) {
      truncated_ = true;
      write_locked(as_line("----------- log truncated at " + std::to_string(cap_) +
                           " bytes (max-run-log-bytes): the rest of this run's output is dropped"));
      return;
    }
    write_locked(line);
  }

  void append_closing(std::string_view text) override {
    std::string line = as_line(text);
    std::lock_guard lock(mutex_);
    write_locked(line);
  }

  std::optional<std::size_t> truncated_at() const override {
    std::lock_guard lock(mutex_);
    if (!truncated_) return std::nullopt;
    return cap_;
  }

  // The mode bit RunLogStore::mark_finished sets, set through the descriptor and read back (a file
  // system without Unix modes may accept the change and drop it).
  bool mark_finished() noexcept override {
    std::lock_guard lock(mutex_);
    if (::fchmod(fd_, finished_mode(mode_)) != 0) return false;
    struct stat st {};
    return ::fstat(fd_, &st) == 0 && is_finished_mode(st.st_mode);
  }

 private:
  static std::string as_line(std::string_view text) {
    std::string line;
    line.reserve(text.size() + 1);
    line.append(text);
    if (line.empty() || line.back() != '\n') line.push_back('\n');
    return line;
  }

  // Under mutex_, so this writer's lines stay whole.
  void write_locked(const std::string& line) {
    const char* data = line.data();
    std::size_t left = line.size();
    // A regular file takes the whole write at once unless the disk fills up or a signal
    // interrupts it; the loop finishes such a short write.
    while (left > 0) {
      ssize_t written = ::write(fd_, data, left);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        if (!failed_) {
          failed_ = true;
          spdlog::error("cannot write run log {}: {}", path_.string(),
                        written < 0 ? std::strerror(errno) : "no space written");
        }
        return;
      }
      data += written;
      left -= static_cast<std::size_t>(written);
      size_ += static_cast<std::size_t>(written);
    }
  }

  mutable std::mutex mutex_;
  int fd_;
  fs::path path_;
  // Guarded by mutex_:
  std::size_t size_;
  const std::size_t cap_;
  const mode_t mode_;  // the file's mode when opened
  bool truncated_ = false;  // the cap was reached: append() drops everything
  bool failed_ = false;     // report the first failure only
};

// Reads a file line by line from an offset, through a buffer, without ever holding a whole
// line in memory: next() keeps at most `keep` bytes of each line.
class LineScanner {
 public:
  LineScanner(int fd, off_t offset) : fd_(fd), offset_(offset) {}

  struct Line {
    bool present = false;     // false at the end of the file
    bool terminated = false;  // ended by '\n' (false: the file's unterminated tail)
    std::size_t length = 0;   // bytes in the line, without its '\n'
    std::string text;         // its first min(length, keep) bytes
  };

  // The next line; offset() then points just past it.
  Line next(std::size_t keep) {
    Line line;
    for (;;) {
      if (pos_ == buffer_.size() && !fill()) return line;
      line.present = true;
      const char* begin = buffer_.data() + pos_;
      std::size_t available = buffer_.size() - pos_;
      const void* newline = std::memchr(begin, '\n', available);
      std::size_t take = newline != nullptr
                             ? static_cast<std::size_t>(static_cast<const char*>(newline) - begin)
                             : available;
      if (line.text.size() < keep) {
        line.text.append(begin, std::min(take, keep - line.text.size()));
      }
      line.length += take;
      pos_ += take;
      offset_ += static_cast<off_t>(take);
      if (newline != nullptr) {
        ++pos_;
        ++offset_;
        line.terminated = true;
        return line;
      }
    }
  }

  off_t offset() const noexcept { return offset_; }

 private:
  bool fill() {
    buffer_.resize(kLogReadChunk);
    for (;;) {
      // buffer_ always ends where offset_ is when it is refilled.
      ssize_t n = ::pread(fd_, buffer_.data(), buffer_.size(), offset_);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::system_error(errno, std::generic_category(), "cannot read run log");
      buffer_.resize(static_cast<std::size_t>(n));
      pos_ = 0;
      return n > 0;
    }
  }

  int fd_;
  off_t offset_;
  std::string buffer_;
  std::size_t pos_ = 0;
};

// "2024-03-09" → days since the epoch; nullopt for anything that is not exactly a valid date
// in that form.
std::optional<std::chrono::sys_days> parse_day_name(std::string_view name) {
  if (name.size() != 10 || name[4] != '-' || name[7] != '-') return std::nullopt;
  int parts[3] = {0, 0, 0};
  std::size_t starts[3] = {0, 5, 8};
  std::size_t lengths[3] = {4, 2, 2};
  for (int i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < lengths[i]; ++j) {
      char c = name[starts[i] + j];
      if (c < '0' || c > '9') return std::nullopt;
      parts[i] = parts[i] * 10 + (c - '0');
    }
  }
  std::chrono::year_month_day date{std::chrono::year(parts[0]),
                                   std::chrono::month(static_cast<unsigned>(parts[1])),
                                   std::chrono::day(static_cast<unsigned>(parts[2]))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date);
}

std::chrono::sys_days utc_day(std::int64_t epoch_ms) {
  return std::chrono::floor<std::chrono::days>(
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(epoch_ms)));
}

}  // namespace

// Where recent pages ended, per file: {line number, offset of that line's first byte}. Log
// files only grow, so such a position stays right as long as the file is the same one (same
// device and inode) and no shorter than the offset.
struct RunLogStore::PositionCache {
  struct Entry {
    dev_t device = 0;
    ino_t inode = 0;
    int line = 1;
    off_t offset = 0;
    std::uint64_t used = 0;  // for evicting the least recently used
  };

  // The best known start at or before `line`: {1, 0} when nothing is known.
  std::pair<int, off_t> find(const std::string& path, const struct stat& st, int line) {
    std::lock_guard lock(mutex);
    auto it = entries.find(path);
    if (it == entries.end()) return {1, 0};
    Entry& e = it->second;
    if (e.device != st.st_dev || e.inode != st.st_ino || e.offset > st.st_size ||
        e.line > line) {
      return {1, 0};
    }
    e.used = ++clock;
    return {e.line, e.offset};
  }

  void remember(const std::string& path, const struct stat& st, int line, off_t offset) {
    std::lock_guard lock(mutex);
    if (entries.size() >= kCachedFiles && entries.find(path) == entries.end()) {
      auto oldest = std::min_element(entries.begin(), entries.end(), [](auto& a, auto& b) {
        return a.second.used < b.second.used;
      });
      entries.erase(oldest);
    }
    entries[path] = Entry{st.st_dev, st.st_ino, line, offset, ++clock};
  }

  std::mutex mutex;
  std::unordered_map<std::string, Entry> entries;
  std::uint64_t clock = 0;
};

RunLogStore::RunLogStore(std::filesystem::path dir, int retention_days, std::size_t max_log_bytes)
    : dir_(std::move(dir)),
      retention_days_(std::max(retention_days, 0)),
      max_log_bytes_(max_log_bytes),
      positions_(std::make_shared<PositionCache>()) {}

std::optional<std::string> RunLogStore::log_date_time_problem(std::int64_t log_date_time_ms,
                                                              std::int64_t now_ms) {
  const std::int64_t ahead_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(kMaxLogDateTimeAhead).count();
  const std::int64_t latest = now_ms > INT64_MAX - ahead_ms ? INT64_MAX : now_ms + ahead_ms;
  if (log_date_time_ms >= kMinLogDateTimeMs && log_date_time_ms <= latest) return std::nullopt;
  // The year, where std::chrono can name it (its years are -32767..32767).
  std::string when;
  constexpr std::int64_t kNameable = 20'000LL * 366 * 86'400'000;
  if (log_date_time_ms > -kNameable && log_date_time_ms < kNameable) {
    when = " (year " + std::to_string(static_cast<int>(
                           std::chrono::year_month_day(utc_day(log_date_time_ms)).year())) + ")";
  }
  return "is " + std::to_string(log_date_time_ms) + when +
         ": a run's time (epoch milliseconds) must lie between 2000-01-01 and one day past this "
         "executor's clock (" + std::to_string(now_ms) + ")";
}

std::string RunLogStore::day_name(std::int64_t epoch_ms) {
  std::chrono::year_month_day date(utc_day(epoch_ms));
  char text[32];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  return text;
}

bool RunLogStore::exists(std::int64_t log_date_time_ms, std::int64_t log_id) const {
  std::error_code ec;
  return fs::exists(path_for(log_date_time_ms, log_id), ec);
}

std::filesystem::path RunLogStore::path_for(std::int64_t log_date_time_ms,
                                            std::int64_t log_id) const {
  return dir_ / day_name(log_date_time_ms) / (std::to_string(log_id) + ".log");
}

std::filesystem::path RunLogStore::end_marker_for(std::int64_t log_date_time_ms,
                                                  std::int64_t log_id) const {
  return dir_ / day_name(log_date_time_ms) / (std::to_string(log_id) + ".end");
}

std::unique_ptr<RunLogWriter> RunLogStore::open(std::int64_t log_date_time_ms,
                                                std::int64_t log_id) const {
  fs::path path = path_for(log_date_time_ms, log_id);
  // The day's directory nearly always exists: made on the first open that finds it missing.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, kPrivateFileMode);
  if (fd < 0 && errno == ENOENT) {
    if (!create_private_directory(path.parent_path())) {
      throw path_error(errno, "cannot create run log directory", path.parent_path());
    }
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, kPrivateFileMode);
  }
  if (fd < 0) throw path_error(errno, "cannot open run log", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw path_error(error, "cannot stat run log", path);
  }
  return std::make_unique<FileRunLogWriter>(fd, std::move(path), static_cast<std::size_t>(st.st_size),
                                            max_log_bytes_, st.st_mode);
}

LogPage RunLogStore::read(std::int64_t log_date_time_ms, std::int64_t log_id, int from_line,
                          std::size_t max_bytes) const {
  LogPage page;
  page.from_line = std::max(from_line, 1);
  page.to_line = page.from_line - 1;
  max_bytes = std::max<std::size_t>(max_bytes, 2);  // room for one byte and its '\n'

  // Checked before reading: when the run was already over, everything it wrote is in the file.
  page.finished = is_finished(log_date_time_ms, log_id);

  fs::path path = path_for(log_date_time_ms, log_id);
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return page;
    throw path_error(errno, "cannot open run log", path);
  }
  page.found = true;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw path_error(errno, "cannot stat run log", path);

  auto [line_number, offset] = positions_ ? positions_->find(path.string(), st, page.from_line)
                                          : std::pair<int, off_t>{1, 0};
  LineScanner scanner(fd.get(), offset);
  try {
    // Skip to from_line. Only terminated lines count, so a line number always names the same
    // line however far the file had been written when it was counted.
    while (line_number < page.from_line) {
      auto skipped = scanner.next(0);
      // A finished run's unterminated tail is a line (read() returns it as one).
      if (!skipped.present || (!skipped.terminated && !page.finished)) {
        page.end_of_file = true;
        return page;
      }
      ++line_number;
      offset = scanner.offset();
    }

    for (;;) {
      std::size_t room = max_bytes - page.content.size();
      auto line = scanner.next(room);
      if (!line.present || (!line.terminated && !page.finished)) {
        page.end_of_file = true;
        break;
      }
      if (line.length + 1 <= room) {
        page.content.append(line.text);
        page.content.push_back('\n');
      } else if (page.content.empty()) {
        // Alone and too long: return what fits and move on to the next line. The note names
        // how much is missing when there is room for it (sized for the most digits it needs).
        std::size_t note_room = 0;
        if (room >= kMinBytesForCutNote) {
          note_room = std::strlen(kCutNotePrefix) + std::to_string(line.length).size() +
                      std::strlen(kCutNoteSuffix);
        }
        std::size_t keep = common::utf8::prefix_length(line.text, room - 1 - note_room);
        std::string note;
        if (note_room > 0) {
          note = kCutNotePrefix + std::to_string(line.length - keep) + kCutNoteSuffix;
        }
        page.content.append(line.text, 0, keep);
        page.content.append(note);
        page.content.push_back('\n');
      } else {
        break;  // the next page starts with this line
      }
      ++page.to_line;
      offset = scanner.offset();
    }
  } catch (const std::system_error& e) {
    throw path_error(e.code().value(), "cannot read run log", path);
  }
  if (positions_) positions_->remember(path.string(), st, page.to_line + 1, offset);
  return page;
}

namespace {

// Whether `path` is a log marked finished by its mode (is_finished_mode).
bool has_finished_mode(const fs::path& path) noexcept {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && is_finished_mode(st.st_mode);
}

}  // namespace

bool RunLogStore::mark_finished(std::int64_t log_date_time_ms,
                                std::int64_t log_id) const noexcept {
  try {
    // The log file itself carries the mark: no file is created for it (creating files is what
    // limits how many runs complete per second). Checked after setting, since a file system
    // without Unix modes may accept the change and drop it.
    const fs::path log = path_for(log_date_time_ms, log_id);
    struct stat st {};
    if (::stat(log.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (is_finished_mode(st.st_mode)) return true;
      if (::chmod(log.c_str(), finished_mode(st.st_mode)) == 0 && has_finished_mode(log)) return true;
    }
    // No log file (it could not be created), or a file system that cannot keep the mark: a
    // marker file beside it, as earlier versions always wrote.
    fs::path marker = end_marker_for(log_date_time_ms, log_id);
    create_private_directory(marker.parent_path());
    int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, kPrivateFileMode);
    if (fd < 0) {
      spdlog::error("cannot mark run log {} finished: {}", marker.string(), std::strerror(errno));
      return false;
    }
    ::close(fd);
    return true;
  } catch (const std::exception& e) {
    spdlog::error("cannot mark run log {} finished: {}", log_id, e.what());
    return false;
  }
}

bool RunLogStore::is_finished(std::int64_t log_date_time_ms,
                              std::int64_t log_id) const noexcept {
  try {
    return has_finished_mode(path_for(log_date_time_ms, log_id)) ||
           ::access(end_marker_for(log_date_time_ms, log_id).c_str(), F_OK) == 0;
  } catch (const std::exception&) {
    return false;
  }
}

int RunLogStore::make_day_directories_private() const {
  int failed = 0;
  std::error_code ec;
  fs::directory_iterator entries(dir_, ec);
  if (ec) return 0;  // no directory: nothing to change
  for (const auto& entry : entries) {
    if (!parse_day_name(entry.path().filename().string())) continue;
    std::error_code status_ec;
    if (!fs::is_directory(entry.symlink_status(status_ec)) || status_ec) continue;
    if (!make_private(entry.path(), kPrivateDirectoryMode)) {
      spdlog::warn("cannot make run log directory {} private (mode 0700): {}", entry.path().string(),
                   std::strerror(errno));
      ++failed;
    }
  }
  return failed;
}

int RunLogStore::remove_expired(std::int64_t now_ms) const {
  if (retention_days_ == 0) return 0;
  auto oldest_kept = utc_day(now_ms) - std::chrono::days(retention_days_);
  int removed = 0;
  std::error_code ec;
  fs::directory_iterator entries(dir_, ec);
  if (ec) {
    if (ec != std::errc::no_such_file_or_directory) {
      spdlog::warn("cannot list run log directory {}: {}", dir_.string(), ec.message());
    }
    return 0;
  }
  for (const auto& entry : entries) {
    std::string name = entry.path().filename().string();
    auto day = parse_day_name(name);
    if (!day || *day >= oldest_kept) continue;
    // symlink_status: a link named like a day is not ours to follow or delete.
    std::error_code status_ec;
    if (!fs::is_directory(entry.symlink_status(status_ec)) || status_ec) continue;
    std::error_code remove_ec;
    fs::remove_all(entry.path(), remove_ec);
    if (remove_ec) {
      spdlog::warn("cannot remove expired run logs {}: {}", entry.path().string(),
                   remove_ec.message());
      continue;
    }
    ++removed;
  }
  return removed;
}

}  // namespace cronwheel::executor
