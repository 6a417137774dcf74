#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "common/http/message.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

namespace console_files {  // ConsoleFiles' inner parts, defined in console_files.cpp
struct Listing;  // what the directory held at one look
struct Loaded;   // one load of the directory: the files and their answers
}  // namespace console_files

// What ConsoleFiles takes in, and how often it looks at its directory again.
struct ConsoleFilesLimits {
  // A built console is a few MiB.
  std::size_t max_total_bytes = 64 * 1024 * 1024;
  std::size_t max_entries = 10'000;
  std::chrono::milliseconds recheck_interval{1'000};
};

// The web console's built files (web/, `npm run build`: index.html, hashed assets under
// assets/, a few files beside them), held in memory and served by the admin: no Node.js at run
// time, and no disk read while answering a request.
//
// What is loaded from `directory` (which may itself be a symbolic link, e.g. to a release):
//  - regular files only, found without following symbolic links: a link, a FIFO or a device
//    inside the directory is not served, nor anything under a linked directory;
//  - nothing whose name starts with '.', file or directory (.env, .git/, .DS_Store);
//  - FILE.br and FILE.gz beside FILE are FILE's brotli and gzip copies (the console's build
//    writes both for each text file over 1 KiB), never files of their own: a client that accepts
//    brotli gets the brotli copy (about 15 % smaller than gzip's for the console's scripts), one
//    that accepts gzip only the gzip copy. A .br is taken when it is smaller than FILE and
//    decompresses to exactly FILE; a .gz when it starts like gzip, is smaller than FILE, and its
//    trailer gives FILE's size; either is ignored otherwise (with a warning). Nothing is
//    compressed at run time: a file without a copy is sent as it is;
//  - bounded: at most Limits::max_total_bytes of files in all, Limits::max_entries directory
//    entries looked at, directories nested at most 32 deep; a directory over any of these is
//    refused whole, with an error log line saying which. (While a reload reads the directory,
//    the files it replaces are held too: twice the limit at most.)
// A directory without index.html is not a console: nothing of it is served.
//
// What a GET or HEAD of a path answers (req.path is percent-decoded: "/%2eenv" is "/.env"):
//  - a loaded file: 200 with it; files under assets/ carry a content hash in their names and
//    are cached for a year ("public, max-age=31536000, immutable"), every other file is
//    revalidated on each use ("no-cache");
//  - any other path whose last segment has no '.': index.html, for the console's client-side
//    routes (/jobs/42 is a page of the console, not a file);
//  - 404 with an empty body (the caller writes its error) for a missing file with an extension
//    (/assets/gone.js), and for every path with an empty, ".", ".." or dot-prefixed segment,
//    a backslash or a NUL, whatever the directory holds (never index.html under such a name);
//  - paths under /api, /healthz and /metrics are never the console's (owns()): the caller
//    answers them, so the console shadows neither the REST API, nor the executors' endpoints
//    (/api/registry, /api/callback), nor the health check and the metrics.
// Every file answer carries Content-Type, a strong ETag (a hash of the bytes of the
// representation sent: each copy has its own), Vary: Accept-Encoding and
// X-Content-Type-Options: nosniff; index.html also a Content-Security-Policy. A request whose
// If-None-Match lists that ETag (or "*") is answered 304, with those headers and no body. Range
// is ignored, as HTTP allows: the whole file is sent.
//
// The answer goes out as it is made: common/http's HttpServer neither compresses it again (over
// a copy) nor cuts ranges out of it.
//
// A rebuilt console is picked up without a restart: at most once per Limits::recheck_interval
// (a second), one request lists the directory again (names, sizes, modification times, inodes:
// nothing is read) and, when the listing differs from the one last loaded, loads the directory
// again. The new files replace the old ones only when the listing did not change while they
// were read and they include index.html (a directory being emptied or written keeps the old
// files served); a build caught half-written anyway differs from its end, so its end is taken
// at the first check after it. A refused directory keeps the old files too. Why not watch
// index.html alone: the build writes its files in no set
// order, so a load started by a new index.html may miss assets written after it, and would
// never look again. Why not load once at start: the admin may start before the console is
// built (its log line says to build it then), and whoever rebuilds the console expects the
// next page load to show it.
//
// Thread-safe. A request answered during a reload is answered wholly from the files it started
// with.
class ConsoleFiles {
 public:
  using Limits = ConsoleFilesLimits;

  // Loads `directory` now, logging what it serves or why it serves nothing. Time for the
  // rechecks comes from `clock`, which must outlive this object.
  explicit ConsoleFiles(std::filesystem::path directory, Limits limits = {},
                        const common::Clock& clock = common::SystemClock::instance());
  ~ConsoleFiles();

  ConsoleFiles(const ConsoleFiles&) = delete;
  ConsoleFiles& operator=(const ConsoleFiles&) = delete;

  // The directory for --web-dir's default: the first of <dir of the admin binary>/../web (a
  // build directory: build/bin/cronwheel-admin and build/web) and
  // <dir of the admin binary>/../share/cronwheel/web (an install prefix, and the Docker image)
  // that has an index.html; nullopt when neither has.
  static std::optional<std::filesystem::path> default_directory();

  const std::filesystem::path& directory() const noexcept { return directory_; }
  // True when the files being served include index.html (after a recheck, when one is due).
  bool installed() const;

  // False for paths the console must not answer (/api/..., /healthz, /metrics): the caller
  // answers them as unknown routes.
  static bool owns(std::string_view path) noexcept;

  // Answers `req` (GET or HEAD, req.path decoded, owns(req.path) true) into `res`. Sets a 404
  // status with an empty body when there is nothing to send; the caller writes its error.
  void serve(const common::http::Request& req, common::http::Response& res) const;

 private:
  // The files being served, after a recheck of the directory when one is due.
  std::shared_ptr<const console_files::Loaded> current() const;
  // Lists the directory and loads it again when it changed (see the class comment). One at a
  // time; a call while another runs returns at once.
  void recheck() const;

  const std::filesystem::path directory_;
  const Limits limits_;
  const common::Clock& clock_;

  mutable std::mutex mutex_;  // guards files_ and next_check_
  mutable std::shared_ptr<const console_files::Loaded> files_;  // never null
  mutable common::Clock::SteadyTime next_check_{};

  mutable std::mutex recheck_mutex_;  // held by the one recheck running; guards seen_
  // The listing last loaded or refused: a directory still listing the same is not read again.
  mutable std::unique_ptr<console_files::Listing> seen_;
};

}  // namespace cronwheel::admin
