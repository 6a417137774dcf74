#include "executor/src/callback_spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <random>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/protocol/protocol_error.h"
#include "executor/src/file_io.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using common::protocol::CallbackBatch;
using Results = CallbackSpool::Results;

// How much of an unreadable spool line goes into the warning about it.
constexpr std::size_t kLineExcerpt = 120;

bool is_spool_file_name(const std::string& name) {
  return name.size() > CallbackSpool::kFilePrefix.size() + CallbackSpool::kFileSuffix.size() &&
         name.starts_with(CallbackSpool::kFilePrefix) && name.ends_with(CallbackSpool::kFileSuffix);
}

// The start of an unreadable line, printable (a damaged file can hold any bytes).
std::string excerpt(std::string_view line) {
  std::string out(line.substr(0, kLineExcerpt));
  for (char& c : out) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  if (line.size() > kLineExcerpt) out += "...";
  return out;
}

// The spool lines for `results`: one callback body per max_batch results.
std::string spool_lines(const Results& results, std::size_t max_batch) {
  std::string content;
  for (std::size_t i = 0; i < results.size(); i += max_batch) {
    CallbackBatch batch;
    auto end = std::min(results.size(), i + max_batch);
    batch.callbacks.assign(results.begin() + static_cast<std::ptrdiff_t>(i),
                           results.begin() + static_cast<std::ptrdiff_t>(end));
    content += common::protocol::to_json_string(batch);
    content += '\n';
  }
  return content;
}

// Reads every result of a spool file, skipping (with a warning when `warn`) lines that are not a
// callback body: a line cut short by a crash, or damaged on disk. A last line without its newline
// is accepted when it parses (its content is complete).
Results parse_spool(const std::string& content, const fs::path& path, bool warn) {
  Results results;
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < content.size()) {
    ++line_number;
    auto end = content.find('\n', start);
    bool terminated = end != std::string::npos;
    std::string_view line(content.data() + start, (terminated ? end : content.size()) - start);
    start = terminated ? end + 1 : content.size();
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      auto batch = common::protocol::parse<CallbackBatch>(line);
      for (auto& callback : batch.callbacks) results.push_back(std::move(callback));
    } catch (const std::exception& e) {
      if (!warn) continue;
      spdlog::warn("callback spool {}: skipping unreadable line {}{}: {} ({})", path.string(),
                   line_number, terminated ? "" : " (cut short)", e.what(), excerpt(line));
    }
  }
  return results;
}

void fsync_dir(const fs::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || ::fsync(fd.get()) != 0) {
    // The file itself is on disk; only a power loss before the directory entry is written could
    // lose it. Some file systems do not support syncing a directory at all.
    int error = errno;
    if (error != EINVAL) {
      spdlog::warn("callback spool: cannot sync directory {}: {}", dir.string(), errno_text(error));
    }
  }
}

// The sorted log ids of `results`, which is what the spool remembers of a file.
std::vector<std::int64_t> log_ids_of(const Results& results) {
  std::vector<std::int64_t> ids;
  ids.reserve(results.size());
  for (const auto& r : results) ids.push_back(r.log_id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::uint64_t random_salt() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

}  // namespace

CallbackSpool::CallbackSpool(fs::path dir, std::size_t results_per_line, const common::Clock& clock)
    : dir_(std::move(dir)),
      results_per_line_(results_per_line),
      clock_(clock),
      name_salt_(random_salt()) {}

void CallbackSpool::create_dir() const {
  if (!create_private_directory(dir_)) {
    spdlog::error("callback spool: cannot create {}: {}", dir_.string(), errno_text(errno));
    return;
  }
  // Earlier versions made it 0755.
  if (!make_private(dir_, kPrivateDirectoryMode)) {
    spdlog::warn("callback spool: cannot make {} private (mode 0700): {}", dir_.string(),
                 errno_text(errno));
  }
}

std::string CallbackSpool::next_name() {
  const std::int64_t ms = clock_.now_ms();
  // The sequence is this spool's and fixed-width, so files it writes within one millisecond sort
  // in the order they were written (the salt tells this spool's names from another's).
  char name[128];
  std::snprintf(name, sizeof name, "%s%016lld-%ld-%020llu-%016llx%s",
                std::string(kFilePrefix).c_str(), static_cast<long long>(ms),
                static_cast<long>(::getpid()), static_cast<unsigned long long>(next_sequence_++),
                static_cast<unsigned long long>(name_salt_), std::string(kFileSuffix).c_str());
  return name;
}

std::optional<std::string> CallbackSpool::write(const Results& results) {
  const std::string content = spool_lines(results, results_per_line_);
  bool created_dir = false;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::string name = next_name();
    fs::path path = path_of(name);
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kPrivateFileMode));
    if (!fd) {
      int error = errno;
      if (error == EEXIST) continue;
      if (error == ENOENT && !created_dir) {
        created_dir = true;
        create_private_directory(dir_);
        continue;
      }
      spdlog::error("callback spool: cannot create {}: {}", path.string(), errno_text(error));
      return std::nullopt;
    }
    // Another sender's reader may lock the new, still empty file before we do and remove it as
    // done; then start again under a new name.
    if (!flock_retrying(fd.get(), LOCK_EX)) {
      int error = errno;
      ::unlink(path.c_str());
      spdlog::error("callback spool: cannot lock {}: {}", path.string(), errno_text(error));
      return std::nullopt;
    }
    if (!still_named(fd.get(), path)) continue;
    if (!write_all(fd.get(), content) || ::fsync(fd.get()) != 0) {
      int error = errno;
      ::unlink(path.c_str());
      spdlog::error("callback spool: cannot write {}: {}", path.string(), errno_text(error));
      return std::nullopt;
    }
    fsync_dir(dir_);
    auto ids = log_ids_of(results);
    {
      std::lock_guard lock(mutex_);
      counts_[name] = std::move(ids);
    }
    return name;
  }
  spdlog::error("callback spool: cannot create a spool file in {}", dir_.string());
  return std::nullopt;
}

std::vector<std::string> CallbackSpool::list() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (is_spool_file_name(name)) names.push_back(std::move(name));
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    spdlog::warn("callback spool: cannot list {}: {}", dir_.string(), ec.message());
  }
  std::sort(names.begin(), names.end());  // oldest first: names start with the time
  return names;
}

std::optional<UniqueFd> CallbackSpool::lock(const std::string& name, bool& gone) const {
  gone = false;
  fs::path path = path_of(name);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    int error = errno;
    gone = error == ENOENT;
    if (!gone) {
      spdlog::warn("callback spool: cannot open {}: {}", path.string(), errno_text(error));
    }
    return std::nullopt;
  }
  if (!flock_retrying(fd.get(), LOCK_EX | LOCK_NB)) return std::nullopt;  // another sender's
  if (!still_named(fd.get(), path)) {
    gone = true;
    return std::nullopt;
  }
  return fd;
}

std::optional<Results> CallbackSpool::read(const UniqueFd& locked, const std::string& name) {
  std::string content;
  if (!read_all(locked.get(), content)) {
    int error = errno;
    spdlog::warn("callback spool: cannot read {}: {}", path_of(name).string(), errno_text(error));
    return std::nullopt;
  }
  bool first_read = false;
  {
    std::lock_guard lock(mutex_);
    first_read = read_files_.insert(name).second;
  }
  // A file kept through an outage is read again at every retry: its bad lines are reported once.
  Results results = parse_spool(content, path_of(name), first_read);
  auto ids = log_ids_of(results);
  std::lock_guard lock(mutex_);
  counts_[name] = std::move(ids);
  return results;
}

bool CallbackSpool::remove(const std::string& name) {
  if (::unlink(path_of(name).c_str()) != 0 && errno != ENOENT) {
    int error = errno;
    spdlog::warn("callback spool: cannot remove {}: {}", path_of(name).string(), errno_text(error));
    return false;
  }
  forget(name);
  return true;
}

void CallbackSpool::forget(const std::string& name) {
  std::lock_guard lock(mutex_);
  counts_.erase(name);
  read_files_.erase(name);
}

void CallbackSpool::keep_only(const std::vector<std::string>& names) {
  auto gone = [&](const std::string& name) {
    return !std::binary_search(names.begin(), names.end(), name);
  };
  std::lock_guard lock(mutex_);
  std::erase_if(counts_, [&](const auto& entry) { return gone(entry.first); });
  std::erase_if(read_files_, gone);
}

bool CallbackSpool::counted(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return counts_.contains(name);
}

void CallbackSpool::recount() {
  {
    std::lock_guard lock(mutex_);
    counts_.clear();
  }
  for (const auto& name : list()) {
    bool gone = false;
    auto fd = lock(name, gone);
    if (fd) read(*fd, name);  // counts it
  }
}

std::size_t CallbackSpool::total() const {
  std::lock_guard lock(mutex_);
  std::size_t sum = 0;
  for (const auto& [name, ids] : counts_) sum += ids.size();
  return sum;
}

bool CallbackSpool::holds(std::int64_t log_id) const {
  std::lock_guard lock(mutex_);
  return std::any_of(counts_.begin(), counts_.end(), [&](const auto& entry) {
    return std::binary_search(entry.second.begin(), entry.second.end(), log_id);
  });
}

}  // namespace cronwheel::executor
