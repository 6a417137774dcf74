#include "executor/src/lead_journal.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <utility>

#include <spdlog/spdlog.h>

#include "executor/src/file_io.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;

bool parse_lead_id(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// "h <id> <time>" lines for `fires`.
std::string held_lines(const std::vector<LeadJournal::Fire>& fires) {
  std::string lines;
  for (const auto& fire : fires) {
    lines += with_checksum("h " + std::to_string(fire.log_id) + " " + std::to_string(fire.log_date_time));
  }
  return lines;
}

// Replays one process's files: what is held at their end.
class LeadReplay {
 public:
  bool take(std::string_view body) {
    if (body.size() < 3 || body[1] != ' ') return false;
    const char kind = body[0];
    body.remove_prefix(2);
    if (kind == 'h') {
      auto space = body.find(' ');
      std::int64_t id = 0;
      std::int64_t time = 0;
      if (space == std::string_view::npos || !parse_lead_id(body.substr(0, space), id) ||
          !parse_lead_id(body.substr(space + 1), time)) {
        return false;
      }
      held_[id] = time;
      return true;
    }
    if (kind != 's' && kind != 'c' && kind != 'n') return false;
    std::vector<std::int64_t> ids;
    while (!body.empty()) {
      auto comma = body.find(',');
      std::int64_t id = 0;
      if (!parse_lead_id(body.substr(0, comma), id) || ids.size() >= LeadJournal::kIdsPerLine) return false;
      ids.push_back(id);
      body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
    }
    for (auto id : ids) held_.erase(id);
    return true;
  }

  std::vector<LeadJournal::Fire> unstarted() const {
    std::vector<LeadJournal::Fire> out;
    out.reserve(held_.size());
    for (const auto& [id, time] : held_) out.push_back({id, time});
    return out;
  }

 private:
  std::map<std::int64_t, std::int64_t> held_;
};

}  // namespace

LeadJournal::LeadJournal(Options options, const common::Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

LeadJournal::~LeadJournal() { close(); }

bool LeadJournal::open_file_locked() {
  if (instance_.empty()) instance_ = new_journal_instance(kFilePrefix, clock_.now_ms());
  std::string name = instance_ + "-" + std::to_string(next_file_++) + std::string(kFileSuffix);
  std::string error;
  UniqueFd fd = create_locked_journal_file(options_.dir, name, error);
  if (!fd) {
    if (!failing_) spdlog::error("lead journal: {}", error);
    failing_ = true;
    return false;
  }
  // A new file takes over from the old one once it holds what is held (compaction).
  const std::string lines = held_lines([this] {
    std::vector<Fire> fires;
    for (const auto& [id, time] : held_) fires.push_back({id, time});
    return fires;
  }());
  if (!lines.empty() && !write_all(fd.get(), lines)) {
    if (!failing_) spdlog::error("lead journal: cannot write {}: {}", name, errno_text(errno));
    failing_ = true;
    ::unlink((options_.dir / name).c_str());
    return false;
  }
  if (!name_.empty()) {
    const fs::path old = options_.dir / name_;
    if (::unlink(old.c_str()) != 0 && errno != ENOENT) {
      spdlog::warn("lead journal: cannot remove {}: {}", old.string(), errno_text(errno));
    }
  }
  name_ = std::move(name);
  fd_ = std::move(fd);
  bytes_ = lines.size();
  return true;
}

bool LeadJournal::write_locked(const std::string& lines) {
  if (closed_) return false;
  if ((!fd_ || bytes_ >= options_.compact_bytes) && !open_file_locked() && !fd_) return false;
  if (!write_all(fd_.get(), lines)) {
    const int error = errno;
    // Take back a partial line, so the next one starts on a line of its own.
    if (::ftruncate(fd_.get(), static_cast<off_t>(bytes_)) != 0) {
      spdlog::warn("lead journal: cannot cut back {}: {}", name_, errno_text(errno));
    }
    if (!failing_) {
      spdlog::error("lead journal: cannot write {}: {}", name_, errno_text(error));
    }
    failing_ = true;
    return false;
  }
  if (failing_) spdlog::info("lead journal: writing again");
  failing_ = false;
  bytes_ += lines.size();
  return true;
}

void LeadJournal::after_release_locked() {
  if (!held_.empty() || !fd_ || bytes_ == 0) return;
  if (::ftruncate(fd_.get(), 0) == 0) {
    bytes_ = 0;
  } else {
    spdlog::warn("lead journal: cannot empty {}: {}", name_, errno_text(errno));
  }
}

bool LeadJournal::held(const std::vector<Fire>& fires) {
  if (fires.empty()) return true;
  const std::string lines = held_lines(fires);
  std::lock_guard lock(mutex_);
  if (!write_locked(lines)) return false;
  for (const auto& fire : fires) held_[fire.log_id] = fire.log_date_time;
  return true;
}

bool LeadJournal::record_locked(char kind, const std::vector<std::int64_t>& log_ids) {
  std::vector<std::int64_t> known;
  for (auto id : log_ids) {
    if (held_.contains(id)) known.push_back(id);
  }
  if (known.empty()) return true;
  std::string lines;
  for (std::size_t from = 0; from < known.size(); from += kIdsPerLine) {
    std::string body(1, kind);
    body += ' ';
    for (std::size_t i = from; i < known.size() && i < from + kIdsPerLine; ++i) {
      if (i != from) body += ',';
      body += std::to_string(known[i]);
    }
    lines += with_checksum(std::move(body));
  }
  if (!write_locked(lines)) return false;
  for (auto id : known) held_.erase(id);
  after_release_locked();
  return true;
}

bool LeadJournal::started(const std::vector<std::int64_t>& log_ids) {
  std::lock_guard lock(mutex_);
  return record_locked('s', log_ids);
}

bool LeadJournal::cancelled(const std::vector<std::int64_t>& log_ids) {
  std::lock_guard lock(mutex_);
  return record_locked('c', log_ids);
}

bool LeadJournal::returned(const std::vector<std::int64_t>& log_ids) {
  std::lock_guard lock(mutex_);
  return record_locked('n', log_ids);
}

std::size_t LeadJournal::held_count() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

void LeadJournal::close() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  closed_ = true;
  if (!fd_) return;
  if (held_.empty()) {
    const fs::path path = options_.dir / name_;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      spdlog::warn("lead journal: cannot remove {}: {}", path.string(), errno_text(errno));
    }
  } else {
    spdlog::warn("lead journal: {} held fire(s) neither started nor reported stay in {} for the next start",
                 held_.size(), options_.dir.string());
  }
  fd_ = UniqueFd();  // releases the lock
}

std::vector<LeadJournal::Orphan> LeadJournal::orphans() const {
  std::vector<Orphan> out;
  for (auto& [instance, files] : orphan_journal_files(options_.dir, kFilePrefix, kFileSuffix, "lead journal")) {
    LeadReplay replay;
    for (const auto& file : files) {
      for_each_checked_line(file.content, options_.dir / file.name, "lead journal",
                            [&replay](std::string_view body) { return replay.take(body); });
    }
    out.push_back(Orphan{instance, std::move(files), replay.unstarted()});
  }
  return out;
}

bool LeadJournal::remove(Orphan& orphan) const {
  return remove_journal_files(options_.dir, orphan.files, "lead journal");
}

}  // namespace cronwheel::executor
