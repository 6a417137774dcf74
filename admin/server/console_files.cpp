#include "admin/server/console_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>
#include <vector>

namespace cronwheel::admin {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kIndex = "index.html";
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
constexpr std::array<ContentType, 20> kContentTypes{{
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

// The path's segments when every one is a plain file name: no empty, "." or ".." segments, no
// backslash or NUL (req.path is percent-decoded, so "%2e%2e" arrives as ".."). nullopt otherwise.
std::optional<std::vector<std::string_view>> safe_segments(std::string_view path) {
  std::vector<std::string_view> segments;
  if (path.empty() || path.front() != '/') return std::nullopt;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) {
      if (end == path.size()) break;  // a trailing '/' ("/jobs/")
      return std::nullopt;
    }
    if (segment == "." || segment == "..") return std::nullopt;
    for (char c : segment) {
      if (c == '\\' || c == '\0') return std::nullopt;
    }
    segments.push_back(segment);
    start = end + 1;
  }
  return segments;
}

struct FileInfo {
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
};

// Information about a regular file (symbolic links followed), or nullopt.
std::optional<FileInfo> regular_file(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileInfo{static_cast<std::uintmax_t>(st.st_size),
                  static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

std::optional<std::string> read_file(const fs::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string content;
  content.resize(max_bytes + 1);
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got > max_bytes || in.bad()) return std::nullopt;
  content.resize(got);
  return content;
}

// True when an Accept-Encoding header value accepts gzip (a "gzip" token without q=0).
bool accepts_gzip(std::string_view header) {
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
    if (coding != "gzip" && coding != "x-gzip") continue;
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

std::string etag_for(const FileInfo& info, bool gzip) {
  return "\"" + std::to_string(info.size) + "-" + std::to_string(info.mtime_ns) + (gzip ? "-gz" : "") + "\"";
}

// True when the If-None-Match header value lists `etag` (or is "*").
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

fs::path own_binary_directory() {
  std::error_code error;
  const fs::path binary = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return binary.parent_path();
}

}  // namespace

ConsoleFiles::ConsoleFiles(std::filesystem::path directory, std::size_t max_file_bytes)
    : directory_(std::move(directory)), max_file_bytes_(max_file_bytes) {}

std::optional<std::filesystem::path> ConsoleFiles::default_directory() {
  const fs::path binary_directory = own_binary_directory();
  if (binary_directory.empty()) return std::nullopt;
  for (const fs::path& candidate :
       {binary_directory.parent_path() / "web", binary_directory.parent_path() / "share" / "cronwheel" / "web"}) {
    if (regular_file(candidate / kIndex)) return candidate.lexically_normal();
  }
  return std::nullopt;
}

bool ConsoleFiles::installed() const { return regular_file(directory_ / kIndex).has_value(); }

bool ConsoleFiles::owns(std::string_view path) noexcept {
  auto under = [path](std::string_view prefix) {
    return path.substr(0, prefix.size()) == prefix &&
           (path.size() == prefix.size() || path[prefix.size()] == '/');
  };
  return !(under("/api") || under("/healthz") || under("/metrics"));
}

void ConsoleFiles::serve(const httplib::Request& req, httplib::Response& res) const {
  res.status = 404;
  const auto segments = safe_segments(req.path);
  if (!segments) return;

  fs::path file = directory_;
  for (std::string_view segment : *segments) file /= fs::path(std::string(segment));
  std::optional<FileInfo> info = segments->empty() ? std::nullopt : regular_file(file);
  bool immutable = info && segments->size() > 1 && segments->front() == "assets";
  if (!info) {
    // A client route (no extension in its last segment) is the console's page; a missing file
    // is not found, rather than index.html under a script's or an image's name.
    if (!segments->empty() && segments->back().find('.') != std::string_view::npos) return;
    file = directory_ / kIndex;
    info = regular_file(file);
    immutable = false;
    if (!info) return;
  }
  const std::string name = file.filename().string();

  bool gzip = false;
  if (accepts_gzip(req.get_header_value("Accept-Encoding"))) {
    fs::path compressed = file;
    compressed += ".gz";
    if (auto compressed_info = regular_file(compressed)) {
      file = std::move(compressed);
      info = compressed_info;
      gzip = true;
    }
  }
  if (info->size > max_file_bytes_) return;

  const std::string etag = etag_for(*info, gzip);
  res.set_header("Cache-Control", std::string(immutable ? kImmutable : kRevalidate));
  res.set_header("ETag", etag);
  res.set_header("Vary", "Accept-Encoding");
  res.set_header("X-Content-Type-Options", "nosniff");
  if (name == kIndex) {
    res.set_header("Content-Security-Policy", std::string(kContentSecurityPolicy));
    res.set_header("Referrer-Policy", "same-origin");
  }
  if (etag_listed(req.get_header_value("If-None-Match"), etag)) {
    res.status = 304;
    return;
  }
  std::optional<std::string> content = read_file(file, max_file_bytes_);
  if (!content) return;
  if (gzip) res.set_header("Content-Encoding", "gzip");
  res.status = 200;
  res.set_content(std::move(*content), std::string(content_type_for(name)));
}

}  // namespace cronwheel::admin
