#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "executor/src/unique_fd.h"

// What the executor's write-ahead journals (result_journal.h, lead_journal.h) share: checksummed
// lines, per-process files held under flock(2), and the files of processes that are gone.
//
// Lines: "<body>\t<checksum>\n", the checksum being the FNV-1a 32-bit hash of the body as 8 hex
// digits. A line whose checksum does not match (torn by a crash, damaged on disk) is never
// trusted, and never hides the lines after it.
//
// Files: <dir>/<prefix><epoch ms>-<pid>-<random>-<n><suffix>, mode 0600, in a directory created
// with mode 0700 (file_io.h). The name without "-<n><suffix>" is the writing process's
// "instance". A process holds an exclusive flock(2) on each of its files for as long as it has
// it open, so a file that can be locked belongs to a process that is gone (an orphan).
//
// Functions only; thread-safe as far as their arguments are not shared.
namespace cronwheel::executor {

// FNV-1a, 32 bits: the journals' line checksum.
std::uint32_t fnv1a32(std::string_view data) noexcept;

// `body` (no tab, no newline) as a journal line, with its checksum and '\n'.
std::string with_checksum(std::string body);

// The body of one line (without its '\n') when its checksum matches; false otherwise.
bool checked_body(std::string_view line, std::string_view& body);

// Calls `take` with the body of every line of `content` whose checksum matches; a line that does
// not, or that `take` refuses (false), is skipped and logged as "<what> <path>: ..." (the first
// of a file, then a count). Returns how many were skipped.
std::size_t for_each_checked_line(const std::string& content, const std::filesystem::path& path,
                                  std::string_view what,
                                  const std::function<bool(std::string_view body)>& take);

// A new instance name for this process: "<prefix><epoch ms>-<pid>-<random>".
std::string new_journal_instance(std::string_view prefix, std::int64_t now_ms);

// Creates <dir>/<name> (not existing before; `dir` is created with mode 0700 when missing) and
// locks it exclusively. An empty fd when it cannot, with what went wrong in `error`.
UniqueFd create_locked_journal_file(const std::filesystem::path& dir, const std::string& name,
                                    std::string& error);

// One locked file of a process that is gone, with its content.
struct OrphanJournalFile {
  std::string name;
  UniqueFd lock;
  std::string content;
};

// The files <prefix>...<suffix> in `dir` that no live process holds (this one included), grouped
// by instance and ordered by file number, each locked by the returned object while it lives.
// Files that cannot be opened or read are left alone (logged as "<what>: ...").
std::map<std::string, std::vector<OrphanJournalFile>> orphan_journal_files(
    const std::filesystem::path& dir, std::string_view prefix, std::string_view suffix,
    std::string_view what);

// Removes the files of `dir` named in `files` and releases their locks. False (logged) when one
// could not be removed.
bool remove_journal_files(const std::filesystem::path& dir, std::vector<OrphanJournalFile>& files,
                          std::string_view what);

}  // namespace cronwheel::executor
