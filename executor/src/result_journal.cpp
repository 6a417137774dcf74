#include "executor/src/result_journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "executor/src/file_io.h"
#include "executor/src/journal_file.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using Result = ResultJournal::Result;

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// What a dead process's journal files say, read line by line.
struct Replay {
  std::map<std::uint64_t, Result> results;
  // Acknowledged ranges as written (not expanded: a damaged line that passed its checksum cannot
  // make this big).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> acked;
  std::size_t skipped = 0;

  // Sorts and merges `acked` into disjoint ranges; call once every line is taken.
  void merge_acked() {
    std::sort(acked.begin(), acked.end());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
    for (auto range : acked) {
      if (!merged.empty() && range.first <= merged.back().second + 1) {
        merged.back().second = std::max(merged.back().second, range.second);
      } else {
        merged.push_back(range);
      }
    }
    acked = std::move(merged);
  }

  // Whether `seq` was acknowledged (after merge_acked()).
  bool acknowledged(std::uint64_t seq) const {
    auto it = std::upper_bound(acked.begin(), acked.end(), std::make_pair(seq, UINT64_MAX));
    return it != acked.begin() && std::prev(it)->second >= seq;
  }

  // One line without its '\n'. False when it cannot be trusted.
  // One line's body (its checksum checked). False when it cannot be trusted.
  bool take(std::string_view body) {
    if (body.starts_with("r ")) {
      body.remove_prefix(2);
      auto space = body.find(' ');
      std::uint64_t seq = 0;
      if (space == std::string_view::npos || !parse_u64(body.substr(0, space), seq) || seq == 0) return false;
      try {
        results[seq] = common::protocol::parse<Result>(body.substr(space + 1));
      } catch (const std::exception&) {
        return false;
      }
      return true;
    }
    if (body.starts_with("a ")) {
      body.remove_prefix(2);
      std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
      while (!body.empty()) {
        auto comma = body.find(',');
        auto item = body.substr(0, comma);
        body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
        auto dash = item.find('-');
        std::uint64_t from = 0;
        std::uint64_t to = 0;
        if (dash == std::string_view::npos) {
          if (!parse_u64(item, from)) return false;
          to = from;
        } else if (!parse_u64(item.substr(0, dash), from) || !parse_u64(item.substr(dash + 1), to)) {
          return false;
        }
        // A range is what one batch acknowledged: far fewer than this, unless the line is forged.
        if (to < from || to - from > 1'000'000) return false;
        ranges.emplace_back(from, to);
      }
      acked.insert(acked.end(), ranges.begin(), ranges.end());
      return true;
    }
    return false;
  }

  void take_file(const std::string& content, const fs::path& path) {
    skipped += for_each_checked_line(content, path, "result journal",
                                     [this](std::string_view body) { return take(body); });
  }
};

}  // namespace

ResultJournal::ResultJournal(Options options, const common::Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

ResultJournal::~ResultJournal() { close(); }

bool ResultJournal::open_segment_locked() {
  if (instance_.empty()) instance_ = new_journal_instance(kFilePrefix, clock_.now_ms());
  std::string name = instance_ + "-" + std::to_string(next_file_++) + std::string(kFileSuffix);
  std::string error;
  UniqueFd fd = create_locked_journal_file(options_.dir, name, error);
  if (!fd) {
    if (!failing_) spdlog::error("result journal: {}", error);
    return false;
  }
  Segment segment;
  segment.name = std::move(name);
  segment.fd = std::move(fd);
  segment.first = next_seq_;
  segments_.emplace(segment.first, std::move(segment));
  return true;
}

bool ResultJournal::write_line_locked(Segment& segment, const std::string& line) {
  if (write_all(segment.fd.get(), line)) {
    segment.bytes += line.size();
    return true;
  }
  int error = errno;
  // Take back a partial line, so the next one starts on a line of its own.
  if (::ftruncate(segment.fd.get(), static_cast<off_t>(segment.bytes)) != 0) {
    spdlog::warn("result journal: cannot cut back {}: {}", segment.name, errno_text(errno));
  }
  if (!failing_) {
    spdlog::error("result journal: cannot write {}: {} (results are kept in memory only until the disk takes them)",
                  segment.name, errno_text(error));
  }
  return false;
}

std::uint64_t ResultJournal::append(const Result& result) {
  std::string json = common::protocol::to_json_string(result);
  std::lock_guard lock(mutex_);
  if (closed_) return 0;
  const bool rotate = !segments_.empty() && segments_.rbegin()->second.bytes >= options_.segment_bytes;
  if ((segments_.empty() || rotate) && !open_segment_locked()) {
    failing_ = true;
    return 0;
  }
  Segment& segment = segments_.rbegin()->second;
  const std::uint64_t seq = next_seq_;
  if (!write_line_locked(segment, with_checksum("r " + std::to_string(seq) + " " + json))) {
    failing_ = true;
    return 0;
  }
  if (failing_) spdlog::info("result journal: writing again");
  failing_ = false;
  ++next_seq_;
  segment.acked.push_back(false);
  ++segment.unacked;
  ++unacked_;
  return seq;
}

void ResultJournal::acknowledge(const std::vector<std::uint64_t>& seqs) {
  std::vector<std::uint64_t> sorted;
  sorted.reserve(seqs.size());
  for (auto s : seqs) {
    if (s != 0) sorted.push_back(s);
  }
  if (sorted.empty()) return;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());

  std::lock_guard lock(mutex_);
  if (closed_ || segments_.empty()) return;
  std::string ranges;
  std::uint64_t from = 0;
  std::uint64_t to = 0;
  auto flush_range = [&] {
    if (from == 0) return;
    if (!ranges.empty()) ranges += ',';
    ranges += std::to_string(from);
    if (to != from) ranges += "-" + std::to_string(to);
  };
  for (auto seq : sorted) {
    auto it = segments_.upper_bound(seq);
    if (it == segments_.begin()) continue;  // in a file already removed
    Segment& segment = std::prev(it)->second;
    auto index = seq - segment.first;
    if (index >= segment.acked.size() || segment.acked[index]) continue;
    segment.acked[index] = true;
    --segment.unacked;
    --unacked_;
    if (from != 0 && seq == to + 1) {
      to = seq;
    } else {
      flush_range();
      from = to = seq;
    }
  }
  flush_range();
  if (ranges.empty()) return;

  drop_acknowledged_locked();
  Segment& active = segments_.rbegin()->second;
  if (unacked_ == 0 && segments_.size() == 1 && active.bytes >= options_.truncate_bytes) {
    // Everything in it is acknowledged: empty it rather than record that.
    if (::ftruncate(active.fd.get(), 0) == 0) {
      active.bytes = 0;
      active.first = next_seq_;
      active.acked.clear();
      auto node = segments_.extract(segments_.begin());
      node.key() = next_seq_;
      segments_.insert(std::move(node));
      return;
    }
    spdlog::warn("result journal: cannot empty {}: {}", active.name, errno_text(errno));
  }
  // A failed write only means these results may be sent again after a crash.
  write_line_locked(active, with_checksum("a " + ranges));
}

void ResultJournal::drop_acknowledged_locked() {
  // Older files whose results are all acknowledged; the last one is still written to.
  for (auto it = segments_.begin(); it != segments_.end() && std::next(it) != segments_.end();) {
    if (it->second.unacked != 0) {
      ++it;
      continue;
    }
    fs::path path = options_.dir / it->second.name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      spdlog::warn("result journal: cannot remove {}: {}", path.string(), errno_text(errno));
      ++it;
      continue;
    }
    it = segments_.erase(it);
  }
}

void ResultJournal::close() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  closed_ = true;
  if (unacked_ == 0) {
    for (auto& [first, segment] : segments_) {
      fs::path path = options_.dir / segment.name;
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        spdlog::warn("result journal: cannot remove {}: {}", path.string(), errno_text(errno));
      }
    }
  } else {
    spdlog::warn("result journal: {} result(s) neither delivered nor spooled stay in {} for the next start",
                 unacked_, options_.dir.string());
  }
  segments_.clear();  // closes the files, releasing their locks
}

std::size_t ResultJournal::unacknowledged() const {
  std::lock_guard lock(mutex_);
  return unacked_;
}

std::vector<ResultJournal::Orphan> ResultJournal::orphans() const {
  std::vector<Orphan> out;
  for (auto& [instance, files] : orphan_journal_files(options_.dir, kFilePrefix, kFileSuffix, "result journal")) {
    Orphan orphan;
    orphan.instance = instance;
    Replay replay;
    for (auto& file : files) {
      replay.take_file(file.content, options_.dir / file.name);
      orphan.files.push_back(std::move(file.name));
      orphan.locks.push_back(std::move(file.lock));
    }
    replay.merge_acked();
    for (auto& [seq, result] : replay.results) {
      if (!replay.acknowledged(seq)) orphan.results.push_back(std::move(result));
    }
    out.push_back(std::move(orphan));
  }
  return out;
}

bool ResultJournal::remove(Orphan& orphan) const {
  bool all = true;
  for (const auto& name : orphan.files) {
    fs::path path = options_.dir / name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      spdlog::warn("result journal: cannot remove {}: {}", path.string(), errno_text(errno));
      all = false;
    }
  }
  orphan.locks.clear();
  return all;
}

}  // namespace cronwheel::executor
