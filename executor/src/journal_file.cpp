#include "executor/src/journal_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <random>
#include <system_error>

#include <spdlog/spdlog.h>

#include "executor/src/file_io.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;

// "<prefix>...-<n><suffix>" → "<prefix>..."; "" when the name has no file number.
std::string journal_instance_of(std::string_view name, std::string_view prefix, std::string_view suffix) {
  std::string_view stem = name.substr(0, name.size() - suffix.size());
  auto dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash < prefix.size()) return {};
  return std::string(stem.substr(0, dash));
}

// The file number of a journal file name (the part after the instance), for ordering.
std::uint64_t journal_file_number_of(std::string_view name, std::string_view suffix) {
  std::string_view stem = name.substr(0, name.size() - suffix.size());
  auto digits = stem.substr(stem.rfind('-') + 1);
  std::uint64_t n = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return n;
}

}  // namespace

std::uint32_t fnv1a32(std::string_view data) noexcept {
  std::uint32_t hash = 2166136261u;
  for (char c : data) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return hash;
}

std::string with_checksum(std::string body) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "\t%08x\n", fnv1a32(body));
  body += hex;
  return body;
}

bool checked_body(std::string_view line, std::string_view& body) {
  auto tab = line.rfind('\t');
  if (tab == std::string_view::npos || line.size() - tab - 1 != 8) return false;
  std::uint32_t sum = 0;
  auto hex = line.substr(tab + 1);
  auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), sum, 16);
  if (error != std::errc() || end != hex.data() + hex.size()) return false;
  if (fnv1a32(line.substr(0, tab)) != sum) return false;
  body = line.substr(0, tab);
  return true;
}

std::size_t for_each_checked_line(const std::string& content, const fs::path& path, std::string_view what,
                                  const std::function<bool(std::string_view body)>& take) {
  std::size_t start = 0;
  std::size_t line_number = 0;
  std::size_t bad = 0;
  while (start < content.size()) {
    ++line_number;
    auto end = content.find('\n', start);
    std::string_view line(content.data() + start, (end == std::string::npos ? content.size() : end) - start);
    start = end == std::string::npos ? content.size() : end + 1;
    if (line.empty()) continue;
    std::string_view body;
    if (!checked_body(line, body) || !take(body)) {
      if (bad == 0) {
        spdlog::warn("{} {}: skipping unreadable line {} (damaged or cut short by a crash)", what,
                     path.string(), line_number);
      }
      ++bad;
    }
  }
  if (bad > 1) spdlog::warn("{} {}: {} unreadable line(s) skipped in all", what, path.string(), bad);
  return bad;
}

std::string new_journal_instance(std::string_view prefix, std::int64_t now_ms) {
  std::random_device device;
  auto salt = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  char name[96];
  std::snprintf(name, sizeof name, "%.*s%016lld-%ld-%016llx", static_cast<int>(prefix.size()), prefix.data(),
                static_cast<long long>(now_ms), static_cast<long>(::getpid()),
                static_cast<unsigned long long>(salt));
  return name;
}

UniqueFd create_locked_journal_file(const fs::path& dir, const std::string& name, std::string& error) {
  fs::path path = dir / name;
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC;
  UniqueFd fd(::open(path.c_str(), flags, kPrivateFileMode));
  if (!fd && errno == ENOENT) {
    create_private_directory(dir);
    fd = UniqueFd(::open(path.c_str(), flags, kPrivateFileMode));
  }
  if (!fd) {
    error = "cannot create " + path.string() + ": " + errno_text(errno);
    return fd;
  }
  // Nobody else can hold it yet (the name is new); the lock tells other processes it is ours.
  if (!flock_retrying(fd.get(), LOCK_EX | LOCK_NB)) {
    error = "cannot lock " + path.string() + ": " + errno_text(errno);
    ::unlink(path.c_str());
    return UniqueFd();
  }
  return fd;
}

std::map<std::string, std::vector<OrphanJournalFile>> orphan_journal_files(const fs::path& dir,
                                                                          std::string_view prefix,
                                                                          std::string_view suffix,
                                                                          std::string_view what) {
  std::map<std::string, std::vector<std::string>> by_instance;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) {
      continue;
    }
    std::string instance = journal_instance_of(name, prefix, suffix);
    if (instance.empty()) {
      spdlog::warn("{}: ignoring {}: not a journal file name", what, name);
      continue;
    }
    by_instance[instance].push_back(std::move(name));
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    spdlog::warn("{}: cannot list {}: {}", what, dir.string(), ec.message());
  }

  std::map<std::string, std::vector<OrphanJournalFile>> out;
  for (auto& [instance, names] : by_instance) {
    std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
      return journal_file_number_of(a, suffix) < journal_file_number_of(b, suffix);
    });
    std::vector<OrphanJournalFile> files;
    for (auto& name : names) {
      fs::path path = dir / name;
      UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd) {
        if (errno != ENOENT) spdlog::warn("{}: cannot open {}: {}", what, path.string(), errno_text(errno));
        continue;
      }
      // Held by a live process (this one included): not an orphan.
      if (!flock_retrying(fd.get(), LOCK_EX | LOCK_NB) || !still_named(fd.get(), path)) continue;
      std::string content;
      if (!read_all(fd.get(), content)) {
        spdlog::warn("{}: cannot read {}: {}", what, path.string(), errno_text(errno));
        continue;  // left in place: not adopted, not removed
      }
      files.push_back(OrphanJournalFile{std::move(name), std::move(fd), std::move(content)});
    }
    if (!files.empty()) out.emplace(instance, std::move(files));
  }
  return out;
}

bool remove_journal_files(const fs::path& dir, std::vector<OrphanJournalFile>& files, std::string_view what) {
  bool all = true;
  for (auto& file : files) {
    fs::path path = dir / file.name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      spdlog::warn("{}: cannot remove {}: {}", what, path.string(), errno_text(errno));
      all = false;
    }
    file.lock = UniqueFd();
  }
  return all;
}

}  // namespace cronwheel::executor
