#pragma once

// Jobs files on the local disk, for `cronwheel apply`, `export` and `import` (docs/cli.md):
// which files `apply -f` reads, reading them with their script files, and writing a file so
// that a reader never sees half of it.
//
// What is read may be hostile (a pull request's files applied by CI): every file is bounded in
// bytes before it is parsed, a directory in how many files it yields, all of it together in
// bytes, only regular files are read (a FIFO or a device is refused, never waited on), and a
// `scriptFile` must stay inside the directory the files came from, so a file cannot send
// /run/secrets/... to the server as a job's script.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "common/jobs_file/jobs_file.h"

namespace cronwheel::cli {

// A directory yields at most this many jobs files; more is an error naming the directory.
inline constexpr std::size_t kMaxJobsFiles = 1000;
// A script file is at most 1 MiB (the admin's limit on a job's script).
inline constexpr std::size_t kMaxScriptFileBytes = 1024 * 1024;
// Everything one apply reads, jobs files and script files together.
inline constexpr std::size_t kMaxBytesRead = 4 * common::jobs_file::kMaxDocumentBytes;

// A jobs file to read, and the directory its script files must stay inside: the directory
// named with -f for the files found in it, the file's own directory for a file named with -f.
struct JobsFileSource {
  std::filesystem::path file;
  std::filesystem::path root;
};

// The files `apply -f ARG...` reads, in order: each ARG that is a file as it is (whatever its
// name), each ARG that is a directory as its *.yaml and *.yml files, recursively, sorted by
// path (hidden files and directories, those whose names start with '.', left out; symbolic
// links to directories not followed). Throws CliError (status 1) for an ARG that does not
// exist or is neither, for a directory without jobs files, and for a directory with more than
// kMaxJobsFiles.
std::vector<JobsFileSource> jobs_file_sources(const std::vector<std::string>& arguments);

// Up to `max_bytes` of the regular file at `path`. Throws std::runtime_error with the reason
// ("no such file", "not a regular file", "larger than 1 MiB", the system's message).
std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes);

// Reads each source's YAML (at most kMaxDocumentBytes), parses it with its script files read
// relative to its own directory (at most kMaxScriptFileBytes each, inside the source's root),
// and merges them into one document. `bytes_read` counts everything read against
// kMaxBytesRead. Throws jobs_file::JobsFileError for a problem in a file (naming its file,
// line and key, a script file that cannot be read included), CliError for a jobs file that
// cannot be read.
common::jobs_file::ParsedFile read_jobs_files(const std::vector<JobsFileSource>& sources);

// Writes `text` to `path` through a temporary file in the same directory, flushed to disk and
// renamed over `path`: a reader finds the old file or the new one, never a part, and a failure
// leaves the old file as it was. The new file's mode is 0666 less the umask. Throws CliError
// (status 1) naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace cronwheel::cli
