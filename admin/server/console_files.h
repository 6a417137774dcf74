#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <httplib.h>

namespace cronwheel::admin {

// The web console's built files (web/, `npm run build`), served by the admin from a directory.
// No Node.js at run time: the console is index.html, hashed assets under assets/, and whatever
// else the build put beside them.
//
// What a GET (or HEAD) of a path answers:
//  - a file of the directory: the file, with its content type; files under assets/ carry a
//    content hash in their names and are cached for a year ("immutable"), every other file is
//    revalidated on each use ("no-cache", with an ETag); when the client accepts gzip and the
//    build left FILE.gz beside FILE, that is sent instead (Content-Encoding: gzip);
//  - any other path without a file extension: index.html, for the console's client-side routes
//    (/jobs/42 is a page of the console, not a file);
//  - paths under /api/, /healthz and /metrics are never the console's: the caller answers
//    them (a JSON 404 for a path no route serves), so the console shadows nothing;
//  - a missing file with an extension (/assets/gone.js), a path with "." or ".." segments, and
//    files that are not regular files or are larger than max_file_bytes: 404.
// Files are read from disk on each request, so a rebuilt console is served without a restart.
//
// Thread-safe: serve() only reads the directory.
class ConsoleFiles {
 public:
  static constexpr std::size_t kMaxFileBytes = 32 * 1024 * 1024;

  // `directory` holds index.html. Nothing is checked here: see installed().
  explicit ConsoleFiles(std::filesystem::path directory, std::size_t max_file_bytes = kMaxFileBytes);

  // The directory for --web-dir's default: the first of <dir of the admin binary>/../web (a
  // build directory: build/bin/cronwheel-admin and build/web) and
  // <dir of the admin binary>/../share/cronwheel/web (an install prefix, and the Docker image)
  // that has an index.html; nullopt when neither has.
  static std::optional<std::filesystem::path> default_directory();

  const std::filesystem::path& directory() const noexcept { return directory_; }
  // True when the directory has an index.html.
  bool installed() const;

  // False for paths the console must not answer (/api/..., /healthz, /metrics): the caller
  // answers them as unknown routes.
  static bool owns(std::string_view path) noexcept;

  // Answers `req` (GET or HEAD, req.path decoded, owns(req.path) true) into `res`. Sets a 404
  // status with an empty body when there is nothing to send; the caller writes its error.
  void serve(const httplib::Request& req, httplib::Response& res) const;

 private:
  std::filesystem::path directory_;
  std::size_t max_file_bytes_;
};

}  // namespace cronwheel::admin
