#include "admin/server/console_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <brotli/decode.h>
#include <spdlog/spdlog.h>

namespace cronwheel::admin {
namespace console_files {

// A regular file as the directory listed it.
struct ListedFile {
  std::string path;  // relative to the directory, '/'-separated
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;

  bool operator==(const ListedFile&) const = default;
};

struct Listing {
  bool found = false;  // the directory exists and opens
  std::uint64_t device = 0;  // the directory's own, so that a link moved to another build is seen
  std::uint64_t inode = 0;
  std::vector<ListedFile> files;  // the loadable ones (see the header), sorted by path
  std::uint64_t total_bytes = 0;
  std::string refusal;  // why nothing of the directory may be served; empty when it may be
  // Left out, for the log line: dotfiles, symbolic links, special files (not compared).
  std::size_t skipped = 0;
  std::string skipped_example;

  bool same_as(const Listing& other) const {
    return found == other.found && device == other.device && inode == other.inode && files == other.files &&
           refusal == other.refusal;
  }
};

// One representation of a file: its bytes and their tag.
struct Representation {
  std::string bytes;
  std::string etag;
};

struct File {
  std::string_view content_type;
  bool immutable = false;  // under assets/: its name carries its content's hash
  bool is_index = false;
  Representation plain;
  std::optional<Representation> gzip;
  std::optional<Representation> brotli;
};

struct Loaded {
  Listing listing;  // what the directory held when these files were read
  std::map<std::string, File, std::less<>> files;  // by path relative to the directory
  const File* index = nullptr;  // files["index.html"], when there is one
  std::size_t gzip_copies = 0;
  std::size_t brotli_copies = 0;
};

}  // namespace console_files

namespace {

namespace fs = std::filesystem;
using console_files::File;
using console_files::ListedFile;
using console_files::Listing;
using console_files::Loaded;
using console_files::Representation;

constexpr std::string_view kIndex = "index.html";
constexpr std::string_view kGzipSuffix = ".gz";
constexpr std::string_view kBrotliSuffix = ".br";
constexpr std::string_view kAssets = "assets";
constexpr int kMaxDepth = 32;
constexpr std::string_view kImmutable = "public, max-age=31536000, immutable";
constexpr std::string_view kRevalidate = "no-cache";
// The console's own code only: no inline scripts, nothing from elsewhere. Inline styles are
// allowed because the component library and the code editor set element styles.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'";

struct ContentType {
  std::string_view extension;
  std::string_view type;
};
constexpr std::array<ContentType, 21> kContentTypes{{
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".webmanifest", "application/manifest+json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},
    {".webp", "image/webp"},
    {".ico", "image/x-icon"},
    {".woff", "font/woff"},
    {".woff2", "font/woff2"},
    {".ttf", "font/ttf"},
    {".txt", "text/plain; charset=utf-8"},
    {".wasm", "application/wasm"},
    {".xml", "application/xml"},
    {".gz", "application/gzip"},
}};

std::string_view content_type_for(std::string_view name) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos) return "application/octet-stream";
  const std::string_view extension = name.substr(dot);
  for (const auto& entry : kContentTypes) {
    if (entry.extension.size() != extension.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < extension.size() && same; ++i) {
      const char c = extension[i];
      same = (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) == entry.extension[i];
    }
    if (same) return entry.type;
  }
  return "application/octet-stream";
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The path's segments when every one may name a console file: no empty, "." or ".." segment,
// none starting with '.', no backslash or NUL (req.path is percent-decoded, so "%2e%2e" arrives
// as ".."). A trailing '/' is allowed ("/jobs/"). nullopt otherwise.
std::optional<std::vector<std::string_view>> safe_segments(std::string_view path) {
  std::vector<std::string_view> segments;
  if (path.empty() || path.front() != '/') return std::nullopt;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) {
      if (end == path.size()) break;
      return std::nullopt;
    }
    if (segment.front() == '.') return std::nullopt;
    if (segment.find_first_of(std::string_view("\\\0", 2)) != std::string_view::npos) return std::nullopt;
    segments.push_back(segment);
    start = end + 1;
  }
  return segments;
}

// True when an Accept-Encoding header value accepts `coding` (or its alias): its token without
// q=0.
bool accepts(std::string_view header, std::string_view coding_wanted, std::string_view alias = {}) {
  std::size_t start = 0;
  while (start < header.size()) {
    std::size_t end = header.find(',', start);
    if (end == std::string_view::npos) end = header.size();
    std::string_view item = header.substr(start, end - start);
    start = end + 1;
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    const std::size_t semicolon = item.find(';');
    std::string_view coding = item.substr(0, semicolon);
    while (!coding.empty() && (coding.back() == ' ' || coding.back() == '\t')) coding.remove_suffix(1);
    if (coding != coding_wanted && (alias.empty() || coding != alias)) continue;
    if (semicolon == std::string_view::npos) return true;
    // "gzip;q=0" (any number of zeros) refuses it.
    std::string compact;
    for (char c : item.substr(semicolon + 1)) {
      if (c != ' ' && c != '\t') compact += c;
    }
    return !(compact.rfind("q=", 0) == 0 && compact.size() > 2 && compact.find_first_not_of("0.", 2) == std::string::npos);
  }
  return false;
}

// True when the If-None-Match header value lists `etag` (or is "*"); weak comparison, as
// If-None-Match asks.
bool etag_listed(std::string_view header, std::string_view etag) {
  std::size_t start = 0;
  while (start < header.size()) {
    std::size_t end = header.find(',', start);
    if (end == std::string_view::npos) end = header.size();
    std::string_view item = header.substr(start, end - start);
    start = end + 1;
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.substr(0, 2) == "W/") item.remove_prefix(2);
    if (item == etag || item == "*") return true;
  }
  return false;
}

// A strong tag for `bytes`: equal bytes, equal tags, on every node running this build.
std::string etag_for(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t hash = std::hash<std::string_view>{}(bytes);
  std::string tag = "\"";
  for (int shift = 60; shift >= 0; shift -= 4) tag += kHex[(hash >> shift) & 0xf];
  tag += "-" + std::to_string(bytes.size()) + "\"";
  return tag;
}

// True when `gz` can be `plain`'s gzip copy: gzip's magic and deflate, smaller, and its trailer
// (ISIZE, the uncompressed size modulo 2^32) gives plain's size. Not a full check (that would
// mean inflating it), but a copy left over from another build of the file is caught by its size
// almost always; hashed file names catch the rest.
bool gzip_copy_of(std::string_view gz, std::string_view plain) {
  constexpr std::size_t kHeaderAndTrailer = 18;
  if (gz.size() < kHeaderAndTrailer || gz.size() >= plain.size()) return false;
  if (static_cast<unsigned char>(gz[0]) != 0x1f || static_cast<unsigned char>(gz[1]) != 0x8b || gz[2] != 8) {
    return false;
  }
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i) {
    size |= static_cast<std::uint32_t>(static_cast<unsigned char>(gz[gz.size() - 4 + i])) << (8 * i);
  }
  return size == static_cast<std::uint32_t>(plain.size());
}

// True when `br` is `plain`'s brotli copy: smaller, and it decompresses to exactly `plain`
// (brotli has no magic number to look at, and decompressing the console's copies once when they
// are loaded costs milliseconds).
bool brotli_copy_of(std::string_view br, std::string_view plain) {
  if (br.empty() || br.size() >= plain.size()) return false;
  std::string out(plain.size() + 1, '\0');  // one byte more: a longer original does not fit
  std::size_t out_size = out.size();
  if (BrotliDecoderDecompress(br.size(), reinterpret_cast<const std::uint8_t*>(br.data()), &out_size,
                              reinterpret_cast<std::uint8_t*>(out.data())) != BROTLI_DECODER_RESULT_SUCCESS) {
    return false;
  }
  return std::string_view(out.data(), out_size) == plain;
}

// The compressed copies a file may have beside it, in the order they are preferred: the
// smallest first.
struct CopyKind {
  std::string_view suffix;  // FILE<suffix> beside FILE
  std::string_view coding;  // its Accept-Encoding token and Content-Encoding
  std::string_view alias;   // another token for it, or empty
  bool (*is_copy_of)(std::string_view copy, std::string_view plain);
  std::optional<Representation> File::*slot;
  std::size_t Loaded::*count;
};
constexpr CopyKind kCopyKinds[] = {
    {kBrotliSuffix, "br", "", brotli_copy_of, &File::brotli, &Loaded::brotli_copies},
    {kGzipSuffix, "gzip", "x-gzip", gzip_copy_of, &File::gzip, &Loaded::gzip_copies},
};

class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string errno_text(int error) { return std::error_code(error, std::generic_category()).message(); }

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// Walks the directory with file descriptors only (openat, O_NOFOLLOW), so that nothing a
// symbolic link points to is ever looked at or read, and lists its loadable files; with
// `contents`, reads them too. Stops at the first reason to refuse the directory.
class Walk {
 public:
  Walk(const ConsoleFiles::Limits& limits, std::map<std::string, std::string, std::less<>>* contents)
      : limits_(limits), contents_(contents) {}

  Listing run(const fs::path& directory) {
    Fd root(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (root.get() < 0) {
      if (errno != ENOENT) listing_.refusal = "cannot open it: " + errno_text(errno);
      return std::move(listing_);
    }
    struct stat st {};
    if (::fstat(root.get(), &st) != 0) {
      listing_.refusal = "cannot look at it: " + errno_text(errno);
      return std::move(listing_);
    }
    listing_.found = true;
    listing_.device = st.st_dev;
    listing_.inode = st.st_ino;
    walk(root.release(), "", 0);
    std::sort(listing_.files.begin(), listing_.files.end(),
              [](const ListedFile& a, const ListedFile& b) { return a.path < b.path; });
    if (listing_.refusal.empty() && listing_.total_bytes > limits_.max_total_bytes) {
      listing_.refusal = "its files hold " + std::to_string(listing_.total_bytes) + " bytes, more than the limit of " +
                         std::to_string(limits_.max_total_bytes);
    }
    return std::move(listing_);
  }

 private:
  void skip(const std::string& path) {
    if (listing_.skipped++ == 0) listing_.skipped_example = path;
  }

  // Takes `fd` (a directory); false once the directory is refused.
  bool walk(int fd, const std::string& prefix, int depth) {
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      const int error = errno;
      ::close(fd);
      listing_.refusal = "cannot list " + (prefix.empty() ? std::string(".") : prefix) + ": " + errno_text(error);
      return false;
    }
    const bool ok = walk_entries(dir, prefix, depth);
    ::closedir(dir);
    return ok;
  }

  bool walk_entries(DIR* dir, const std::string& prefix, int depth) {
    const int fd = ::dirfd(dir);
    for (;;) {
      errno = 0;
      const dirent* entry = ::readdir(dir);
      if (entry == nullptr) {
        if (errno == 0) return true;
        listing_.refusal = "cannot list " + (prefix.empty() ? std::string(".") : prefix) + ": " + errno_text(errno);
        return false;
      }
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (++entries_ > limits_.max_entries) {
        listing_.refusal = "it holds more than " + std::to_string(limits_.max_entries) + " entries";
        return false;
      }
      const std::string path = prefix + std::string(name);
      if (name.front() == '.') {
        skip(path);
        continue;
      }
      struct stat st {};
      if (::fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // removed since listed
        listing_.refusal = "cannot look at " + path + ": " + errno_text(errno);
        return false;
      }
      if (S_ISDIR(st.st_mode)) {
        if (depth + 1 > kMaxDepth) {
          listing_.refusal = "its directories nest deeper than " + std::to_string(kMaxDepth);
          return false;
        }
        const int child = ::openat(fd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (child < 0) {
          if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) continue;  // replaced since listed
          listing_.refusal = "cannot open " + path + ": " + errno_text(errno);
          return false;
        }
        if (!walk(child, path + "/", depth + 1)) return false;
      } else if (S_ISREG(st.st_mode)) {
        if (!take_file(fd, entry->d_name, path, st)) return false;
      } else {
        skip(path);  // a symbolic link, FIFO, socket or device
      }
    }
  }

  // Lists a regular file; with contents_, reads it (its size as read is what is listed).
  bool take_file(int dir_fd, const char* name, const std::string& path, struct stat st) {
    if (contents_ != nullptr) {
      // O_NONBLOCK: should the file have become a FIFO since fstatat, opening it does not wait.
      Fd file(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (file.get() < 0) {
        if (errno == ENOENT || errno == ELOOP) return true;  // removed or replaced since listed
        listing_.refusal = "cannot open " + path + ": " + errno_text(errno);
        return false;
      }
      if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return true;
      std::string bytes;
      if (!read_all(file.get(), path, static_cast<std::uint64_t>(st.st_size), bytes)) return false;
      st.st_size = static_cast<off_t>(bytes.size());
      contents_->emplace(path, std::move(bytes));
    }
    listing_.files.push_back({path, static_cast<std::uint64_t>(st.st_size), mtime_ns(st),
                              static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
    listing_.total_bytes += static_cast<std::uint64_t>(st.st_size);
    return true;
  }

  // Reads the whole file, which fstat said holds `size` bytes: never past the directory's limit.
  bool read_all(int fd, const std::string& path, std::uint64_t size, std::string& bytes) {
    const std::uint64_t room =
        limits_.max_total_bytes > listing_.total_bytes ? limits_.max_total_bytes - listing_.total_bytes : 0;
    if (size > room) {
      listing_.refusal = "its files hold more than the limit of " + std::to_string(limits_.max_total_bytes) + " bytes";
      return false;
    }
    // One byte more than announced, to see a file still growing; never more than the room left.
    bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(size + 1, room)));
    std::size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        listing_.refusal = "cannot read " + path + ": " + errno_text(errno);
        return false;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got > size && got == room) {
      listing_.refusal = "its files hold more than the limit of " + std::to_string(limits_.max_total_bytes) + " bytes";
      return false;
    }
    bytes.resize(got);
    return true;
  }

  const ConsoleFiles::Limits& limits_;
  std::map<std::string, std::string, std::less<>>* contents_;
  Listing listing_;
  std::size_t entries_ = 0;
};

// The files `contents` holds, with each FILE.gz and FILE.br attached to its FILE.
std::shared_ptr<Loaded> assemble(Listing listing, std::map<std::string, std::string, std::less<>> contents,
                                 const fs::path& directory) {
  auto loaded = std::make_shared<Loaded>();
  for (auto& [path, bytes] : contents) {
    const std::string_view name = path;  // a structured binding is not captured by clang 14
    const bool copy = std::any_of(std::begin(kCopyKinds), std::end(kCopyKinds), [&](const CopyKind& kind) {
      return ends_with(name, kind.suffix) && contents.count(name.substr(0, name.size() - kind.suffix.size())) != 0;
    });
    if (copy) continue;  // taken with its file below
    File file;
    file.content_type = content_type_for(path);
    file.immutable = path.rfind(kAssets, 0) == 0 && path.size() > kAssets.size() && path[kAssets.size()] == '/';
    file.is_index = path == kIndex;
    file.plain.etag = etag_for(bytes);
    file.plain.bytes = std::move(bytes);
    loaded->files.emplace(path, std::move(file));
  }
  for (auto& [path, file] : loaded->files) {
    for (const CopyKind& kind : kCopyKinds) {
      auto copy = contents.find(path + std::string(kind.suffix));
      if (copy == contents.end()) continue;
      if (!kind.is_copy_of(copy->second, file.plain.bytes)) {
        spdlog::warn("web console: not sending {}{} (not a {} copy of {}: another build's, or not smaller)",
                     (directory / path).string(), kind.suffix, kind.coding, path);
        continue;
      }
      auto& slot = file.*kind.slot;
      slot = Representation{std::move(copy->second), {}};
      slot->etag = etag_for(slot->bytes);
      ++((*loaded).*kind.count);
    }
  }
  if (auto index = loaded->files.find(kIndex); index != loaded->files.end()) loaded->index = &index->second;
  loaded->listing = std::move(listing);
  return loaded;
}

std::uint64_t bytes_held(const Loaded& loaded) {
  std::uint64_t total = 0;
  for (const auto& [path, file] : loaded.files) {
    total += file.plain.bytes.size();
    for (const CopyKind& kind : kCopyKinds) {
      if (const auto& copy = file.*kind.slot) total += copy->bytes.size();
    }
  }
  return total;
}

bool names_a_regular_file(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

fs::path own_binary_directory() {
  std::error_code error;
  const fs::path binary = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return binary.parent_path();
}

}  // namespace

ConsoleFiles::ConsoleFiles(std::filesystem::path directory, Limits limits, const common::Clock& clock)
    : directory_(std::move(directory)), limits_(limits), clock_(clock), files_(std::make_shared<Loaded>()) {
  recheck();
  next_check_ = clock_.steady_now() + limits_.recheck_interval;
}

ConsoleFiles::~ConsoleFiles() = default;

std::optional<std::filesystem::path> ConsoleFiles::default_directory() {
  const fs::path binary_directory = own_binary_directory();
  if (binary_directory.empty()) return std::nullopt;
  for (const fs::path& candidate :
       {binary_directory.parent_path() / "web", binary_directory.parent_path() / "share" / "cronwheel" / "web"}) {
    if (names_a_regular_file(candidate / kIndex)) return candidate.lexically_normal();
  }
  return std::nullopt;
}

bool ConsoleFiles::installed() const { return current()->index != nullptr; }

bool ConsoleFiles::owns(std::string_view path) noexcept {
  auto under = [path](std::string_view prefix) {
    return path.substr(0, prefix.size()) == prefix &&
           (path.size() == prefix.size() || path[prefix.size()] == '/');
  };
  return !(under("/api") || under("/healthz") || under("/metrics"));
}

std::shared_ptr<const Loaded> ConsoleFiles::current() const {
  const auto now = clock_.steady_now();
  {
    std::lock_guard lock(mutex_);
    if (now < next_check_) return files_;
    next_check_ = now + limits_.recheck_interval;
  }
  recheck();
  std::lock_guard lock(mutex_);
  return files_;
}

void ConsoleFiles::recheck() const {
  std::unique_lock running(recheck_mutex_, std::try_to_lock);
  if (!running.owns_lock()) return;

  const std::string where = directory_.string();
  Listing listing = Walk(limits_, nullptr).run(directory_);
  if (seen_ && listing.same_as(*seen_)) return;

  bool serving;
  {
    std::lock_guard lock(mutex_);
    serving = files_->index != nullptr;
  }
  const char* kept = serving ? "; still serving the files loaded before" : "";
  if (!listing.refusal.empty()) {
    spdlog::error("not serving the web console from {}: {}{}", where, listing.refusal, kept);
    seen_ = std::make_unique<Listing>(std::move(listing));
    return;
  }
  const bool has_index = std::any_of(listing.files.begin(), listing.files.end(),
                                     [](const ListedFile& file) { return file.path == kIndex; });
  if (!has_index) {
    spdlog::warn("no web console in {} (no index.html): build it with scripts/build-console.sh, or set --web-dir{}",
                 where, kept);
    seen_ = std::make_unique<Listing>(std::move(listing));
    return;
  }

  std::map<std::string, std::string, std::less<>> contents;
  Listing read = Walk(limits_, &contents).run(directory_);
  if (!read.refusal.empty()) {
    spdlog::error("not serving the web console from {}: {}{}", where, read.refusal, kept);
    seen_ = std::make_unique<Listing>(std::move(read));
    return;
  }
  if (!read.same_as(listing)) {
    // Being written (a build in progress): left for the next check, which lists it again.
    spdlog::debug("the web console in {} changed while being loaded; loading it again later", where);
    return;
  }
  seen_ = std::make_unique<Listing>(read);
  std::shared_ptr<const Loaded> loaded = assemble(std::move(read), std::move(contents), directory_);
  spdlog::info("serving the web console from {}: {} files, {} of them with a gzip copy and {} with a brotli copy, "
               "{} bytes in memory{}",
               where, loaded->files.size(), loaded->gzip_copies, loaded->brotli_copies, bytes_held(*loaded),
               loaded->listing.skipped == 0
                   ? std::string()
                   : fmt::format(" ({} entries left out: dotfiles, symbolic links, special files; e.g. {})",
                                 loaded->listing.skipped, loaded->listing.skipped_example));
  std::lock_guard lock(mutex_);
  files_ = std::move(loaded);
}

void ConsoleFiles::serve(const common::http::Request& req, common::http::Response& res) const {
  const std::string accept_encoding = req.get_header_value("Accept-Encoding");
  res.status = 404;
  const auto segments = safe_segments(req.path);
  if (!segments) return;
  const std::shared_ptr<const Loaded> loaded = current();
  if (loaded->index == nullptr) return;  // not a console

  std::string path;
  for (std::string_view segment : *segments) {
    if (!path.empty()) path += '/';
    path += segment;
  }
  const File* file = nullptr;
  if (auto found = loaded->files.find(path); found != loaded->files.end()) {
    file = &found->second;
  } else {
    // A client route (no extension in its last segment) is the console's page; a missing file
    // is not found, rather than index.html under a script's or an image's name.
    if (!segments->empty() && segments->back().find('.') != std::string_view::npos) return;
    file = loaded->index;
  }

  // The smallest representation the client takes: brotli, gzip, or the file itself.
  std::string_view encoding;
  const Representation* sent = &file->plain;
  for (const CopyKind& kind : kCopyKinds) {
    const auto& copy = file->*kind.slot;
    if (copy && accepts(accept_encoding, kind.coding, kind.alias)) {
      encoding = kind.coding;
      sent = &*copy;
      break;
    }
  }
  res.set_header("Cache-Control", std::string(file->immutable ? kImmutable : kRevalidate));
  res.set_header("ETag", sent->etag);
  res.set_header("Vary", "Accept-Encoding");
  // Once: the server may set it on every answer already.
  if (!res.has_header("X-Content-Type-Options")) res.set_header("X-Content-Type-Options", "nosniff");
  if (file->is_index) {
    res.set_header("Content-Security-Policy", std::string(kContentSecurityPolicy));
    res.set_header("Referrer-Policy", "same-origin");
  }
  if (etag_listed(req.get_header_value("If-None-Match"), sent->etag)) {
    res.status = 304;
    return;
  }
  if (!encoding.empty()) res.set_header("Content-Encoding", std::string(encoding));
  res.status = 200;
  res.set_content(sent->bytes, std::string(file->content_type));
}

}  // namespace cronwheel::admin
