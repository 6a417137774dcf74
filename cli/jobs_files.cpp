#include "cli/jobs_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>
#include <system_error>

#include "cli/cli_error.h"

namespace cronwheel::cli {

namespace {

namespace fs = std::filesystem;
namespace jobs_file = common::jobs_file;

// Entries a directory walk looks at before it gives up: a tree that large is not a directory
// of jobs files, and walking it would take long.
constexpr std::size_t kMaxEntriesWalked = 100'000;

std::string size_text(std::size_t bytes) {
  if (bytes % (1024 * 1024) == 0) return std::to_string(bytes / (1024 * 1024)) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::string shown(const fs::path& path) { return one_line(path.string(), 400); }

bool is_hidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name.front() == '.' && name != "." && name != "..";
}

bool is_jobs_file_name(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml";
}

std::vector<fs::path> files_in(const fs::path& directory, const std::string& argument) {
  std::vector<fs::path> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(directory, fs::directory_options::none, ec);
  if (ec) throw operation_failed("cannot read " + one_line(argument, 400) + ": " + ec.message());
  std::size_t walked = 0;
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) throw operation_failed("cannot read " + one_line(argument, 400) + ": " + ec.message());
    if (++walked > kMaxEntriesWalked) {
      throw operation_failed(one_line(argument, 400) + ": more than " + std::to_string(kMaxEntriesWalked) +
                             " entries; name the directory that holds the jobs files");
    }
    const fs::path& path = it->path();
    std::error_code type_ec;
    if (is_hidden(path)) {
      if (it->is_directory(type_ec)) it.disable_recursion_pending();
      continue;
    }
    if (!is_jobs_file_name(path) || !it->is_regular_file(type_ec)) continue;
    found.push_back(path);
    if (found.size() > kMaxJobsFiles) {
      throw operation_failed(one_line(argument, 400) + ": more than " + std::to_string(kMaxJobsFiles) +
                             " jobs files; apply them in parts");
    }
  }
  if (ec) throw operation_failed("cannot read " + one_line(argument, 400) + ": " + ec.message());
  std::sort(found.begin(), found.end());
  if (found.empty()) throw operation_failed(one_line(argument, 400) + ": no *.yaml or *.yml files in it");
  return found;
}

fs::path directory_of(const fs::path& file) {
  const fs::path parent = file.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// Whether `path` is `root` or below it; both canonical.
bool is_inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // the empty last element of "dir/"
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

std::vector<JobsFileSource> jobs_file_sources(const std::vector<std::string>& arguments) {
  std::vector<JobsFileSource> sources;
  std::set<fs::path> seen;  // canonical: a file reached twice is read once
  auto add = [&](const fs::path& file, const fs::path& root) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(file, ec);
    if (ec) canonical = file;
    if (!seen.insert(canonical).second) return;
    sources.push_back({file, root});
    if (sources.size() > kMaxJobsFiles) {
      throw operation_failed("more than " + std::to_string(kMaxJobsFiles) + " jobs files; apply them in parts");
    }
  };
  for (const std::string& argument : arguments) {
    const fs::path path(argument);
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found) {
      throw operation_failed(one_line(argument, 400) + ": no such file or directory");
    }
    if (ec) throw operation_failed("cannot read " + one_line(argument, 400) + ": " + ec.message());
    if (fs::is_directory(status)) {
      for (const fs::path& file : files_in(path, argument)) add(file, path);
    } else if (fs::is_regular_file(status)) {
      add(path, directory_of(path));
    } else {
      throw operation_failed(one_line(argument, 400) + ": not a file or a directory");
    }
  }
  return sources;
}

std::string read_regular_file(const fs::path& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    throw std::runtime_error(error == ENOENT ? "no such file" : std::strerror(error));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw std::runtime_error("not a regular file");
  const std::string too_large = "larger than " + size_text(max_bytes);
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) throw std::runtime_error(too_large);
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (true) {
    // One byte of room beyond the limit tells a file that grew since fstat.
    if (got == text.size()) text.resize(std::min(max_bytes + 1, std::max<std::size_t>(text.size() * 2, 4096)));
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
    if (got > max_bytes) throw std::runtime_error(too_large);
  }
  text.resize(got);
  return text;
}

jobs_file::ParsedFile read_jobs_files(const std::vector<JobsFileSource>& sources) {
  std::size_t bytes_read = 0;
  auto count = [&](std::size_t bytes) {
    bytes_read += bytes;
    return bytes_read <= kMaxBytesRead;
  };
  const std::string too_much = "the files and their scripts come to more than " + size_text(kMaxBytesRead) +
                               "; apply them in parts";
  std::vector<jobs_file::ParsedFile> parsed;
  parsed.reserve(sources.size());
  for (const JobsFileSource& source : sources) {
    std::string text;
    try {
      text = read_regular_file(source.file, jobs_file::kMaxDocumentBytes);
    } catch (const std::runtime_error& e) {
      throw operation_failed("cannot read " + shown(source.file) + ": " + e.what());
    }
    if (!count(text.size())) throw operation_failed(too_much);

    std::error_code ec;
    const fs::path root = fs::weakly_canonical(source.root, ec);
    if (ec) throw operation_failed("cannot read " + shown(source.root) + ": " + ec.message());
    const fs::path directory = directory_of(source.file);
    const jobs_file::ScriptReader read_script = [&](const std::string& script_file) {
      const fs::path relative(script_file);
      if (relative.is_absolute()) throw std::runtime_error("give its path relative to the YAML file");
      std::error_code path_ec;
      const fs::path path = fs::weakly_canonical(directory / relative, path_ec);
      if (path_ec) throw std::runtime_error(path_ec.message());
      if (!is_inside(path, root)) {
        throw std::runtime_error("it is outside " + shown(source.root) +
                                 ", the directory given to -f (name a directory that holds both with -f)");
      }
      std::string script = read_regular_file(path, kMaxScriptFileBytes);
      if (!count(script.size())) throw std::runtime_error(too_much);
      return script;
    };
    parsed.push_back(jobs_file::parse_yaml(text, source.file.string(), read_script));
  }
  return jobs_file::merge(parsed);
}

void write_file_atomically(const fs::path& path, const std::string& text) {
  const auto fail = [&](const std::string& why) { return operation_failed("cannot write " + shown(path) + ": " + why); };
  const fs::path directory = directory_of(path);
  std::string temporary = (directory / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) throw fail(std::strerror(errno));
  bool written = false;
  std::string error;
  {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) error = std::strerror(errno);
    std::size_t at = 0;
    while (error.empty() && at < text.size()) {
      const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
      if (n < 0) {
        if (errno == EINTR) continue;
        error = std::strerror(errno);
      } else {
        at += static_cast<std::size_t>(n);
      }
    }
    if (error.empty() && ::fsync(fd) != 0) error = std::strerror(errno);
    if (::close(fd) != 0 && error.empty()) error = std::strerror(errno);
    if (error.empty() && ::rename(temporary.c_str(), path.c_str()) != 0) error = std::strerror(errno);
    written = error.empty();
  }
  if (!written) {
    ::unlink(temporary.c_str());
    throw fail(error);
  }
  // The rename itself reaches the disk with the directory.
  const int directory_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    ::fsync(directory_fd);
    ::close(directory_fd);
  }
}

}  // namespace cronwheel::cli
