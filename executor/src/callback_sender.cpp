#include "executor/src/callback_sender.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <system_error>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/protocol_error.h"
#include "executor/src/unique_fd.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using common::http::HttpClient;
using common::http::HttpClientOptions;
using common::protocol::CallbackBatch;
using common::protocol::HandleCallbackParam;
using SteadyClock = std::chrono::steady_clock;
using Results = std::vector<HandleCallbackParam>;

// How much of an unreadable spool line goes into the warning about it.
constexpr std::size_t kLineExcerpt = 120;

std::string errno_text(int error) {
  return std::error_code(error, std::system_category()).message();
}

bool flock_retrying(int fd, int operation) {
  for (;;) {
    if (::flock(fd, operation) == 0) return true;
    if (errno != EINTR) return false;
  }
}

// Whether `path` still names the file open as `fd`. A reader that locked a spool file may have
// removed it before we got the lock; the lock then protects nothing.
bool still_named(int fd, const fs::path& path) {
  struct stat by_fd {};
  struct stat by_path {};
  if (::fstat(fd, &by_fd) != 0 || ::stat(path.c_str(), &by_path) != 0) return false;
  return by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool read_all(int fd, std::string& out) {
  out.clear();
  char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

bool is_spool_file_name(const std::string& name) {
  return name.size() >
             CallbackSender::kSpoolFilePrefix.size() + CallbackSender::kSpoolFileSuffix.size() &&
         name.starts_with(CallbackSender::kSpoolFilePrefix) &&
         name.ends_with(CallbackSender::kSpoolFileSuffix);
}

// The start of an unreadable line, printable (a damaged file can hold any bytes).
std::string excerpt(std::string_view line) {
  std::string out(line.substr(0, kLineExcerpt));
  for (char& c : out) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  if (line.size() > kLineExcerpt) out += "...";
  return out;
}

// The spool lines for `results`: one callback body per max_batch results.
std::string spool_lines(const Results& results, std::size_t max_batch) {
  std::string content;
  for (std::size_t i = 0; i < results.size(); i += max_batch) {
    CallbackBatch batch;
    auto end = std::min(results.size(), i + max_batch);
    batch.callbacks.assign(results.begin() + static_cast<std::ptrdiff_t>(i),
                           results.begin() + static_cast<std::ptrdiff_t>(end));
    content += common::protocol::to_json_string(batch);
    content += '\n';
  }
  return content;
}

// Reads every result of a spool file, skipping (with a warning when `warn`) lines that are not a
// callback body: a line cut short by a crash, or damaged on disk. A last line without its newline
// is accepted when it parses (its content is complete).
Results parse_spool(const std::string& content, const fs::path& path, bool warn) {
  Results results;
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < content.size()) {
    ++line_number;
    auto end = content.find('\n', start);
    bool terminated = end != std::string::npos;
    std::string_view line(content.data() + start, (terminated ? end : content.size()) - start);
    start = terminated ? end + 1 : content.size();
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      auto batch = common::protocol::parse<CallbackBatch>(line);
      for (auto& callback : batch.callbacks) results.push_back(std::move(callback));
    } catch (const std::exception& e) {
      if (!warn) continue;
      spdlog::warn("callback spool {}: skipping unreadable line {}{}: {} ({})", path.string(),
                   line_number, terminated ? "" : " (cut short)", e.what(), excerpt(line));
    }
  }
  return results;
}

void fsync_dir(const fs::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || ::fsync(fd.get()) != 0) {
    // The file itself is on disk; only a power loss before the directory entry is written could
    // lose it. Some file systems do not support syncing a directory at all.
    int error = errno;
    if (error != EINVAL) {
      spdlog::warn("callback spool: cannot sync directory {}: {}", dir.string(), errno_text(error));
    }
  }
}

}  // namespace

struct CallbackSender::Impl {
  Impl(Options opts, common::Clock& clock_ref) : options(std::move(opts)), clock(clock_ref) {
    if (options.admin_addresses.empty()) {
      throw std::invalid_argument("callback sender: no admin address");
    }
    if (options.spool_dir.empty()) {
      throw std::invalid_argument("callback sender: spool_dir is empty");
    }
    if (options.retry_interval <= std::chrono::milliseconds::zero()) {
      throw std::invalid_argument("callback sender: retry_interval must be positive");
    }
    if (options.max_batch == 0) {
      throw std::invalid_argument("callback sender: max_batch must be positive");
    }
    options.http.access_token = options.access_token;
    clients = make_clients(options.http);  // throws std::invalid_argument for a bad URL
    std::random_device device;
    name_salt = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }

  std::vector<HttpClient> make_clients(const HttpClientOptions& http) const {
    std::vector<HttpClient> out;
    out.reserve(options.admin_addresses.size());
    for (const auto& address : options.admin_addresses) out.emplace_back(address, http);
    return out;
  }

  // ---- sending (background thread only) ----

  // Asks one admin to take a batch (`body`, `count` results); true when it accepted it.
  static bool offer(HttpClient& admin, const std::string& body, std::size_t count) {
    auto answer =
        common::http::post_xxl_job<std::string>(admin, common::protocol::kCallbackPath, body);
    if (answer.is_success()) {
      spdlog::debug("callback: {} result(s) accepted by {}", count, admin.base_url());
      return true;
    }
    spdlog::warn("callback: {} result(s) not accepted by {}: {}", count, admin.base_url(),
                 answer.msg);
    return false;
  }

  // Sends one batch to the admins in order; true once one accepted it.
  bool send(const Results& batch) {
    const std::string body = common::protocol::to_json_string(CallbackBatch{batch});
    for (auto& admin : clients) {
      if (offer(admin, body, batch.size())) return true;
    }
    return false;
  }

  // send(), but giving up at `deadline`: each request's HTTP timeouts are cut to the time left.
  bool send_before(const Results& batch, SteadyClock::time_point deadline) {
    const std::string body = common::protocol::to_json_string(CallbackBatch{batch});
    const auto& http = options.http;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
      if (left <= std::chrono::milliseconds::zero()) return false;
      if (left >= http.connect_timeout && left >= http.read_timeout && left >= http.write_timeout) {
        if (offer(clients[i], body, batch.size())) return true;
        continue;
      }
      HttpClientOptions cut = http;
      cut.connect_timeout = std::min(http.connect_timeout, left);
      cut.read_timeout = std::min(http.read_timeout, left);
      cut.write_timeout = std::min(http.write_timeout, left);
      HttpClient quick(options.admin_addresses[i], cut);
      if (offer(quick, body, batch.size())) return true;
    }
    return false;
  }

  // ---- the spool (any thread) ----

  fs::path path_of(const std::string& name) const { return options.spool_dir / name; }

  std::string next_spool_name() {
    static std::atomic<std::uint64_t> sequence{0};  // unique among the senders of this process
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    char name[128];
    std::snprintf(name, sizeof name, "%s%016lld-%ld-%llu-%016llx%s",
                  std::string(kSpoolFilePrefix).c_str(), static_cast<long long>(ms),
                  static_cast<long>(::getpid()), static_cast<unsigned long long>(sequence++),
                  static_cast<unsigned long long>(name_salt),
                  std::string(kSpoolFileSuffix).c_str());
    return name;
  }

  // Writes `results` to a new spool file, durably. Returns its name, or nullopt (logged) when the
  // disk refused; then nothing of it is left behind.
  std::optional<std::string> write_spool(const Results& results) {
    const std::string content = spool_lines(results, options.max_batch);
    bool created_dir = false;
    for (int attempt = 0; attempt < 5; ++attempt) {
      std::string name = next_spool_name();
      fs::path path = path_of(name);
      UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
      if (!fd) {
        int error = errno;
        if (error == EEXIST) continue;
        if (error == ENOENT && !created_dir) {
          created_dir = true;
          std::error_code ec;
          fs::create_directories(options.spool_dir, ec);
          continue;
        }
        spdlog::error("callback spool: cannot create {}: {}", path.string(), errno_text(error));
        return std::nullopt;
      }
      // Another sender's reader may lock the new, still empty file before we do and remove it as
      // done; then start again under a new name.
      if (!flock_retrying(fd.get(), LOCK_EX)) {
        int error = errno;
        ::unlink(path.c_str());
        spdlog::error("callback spool: cannot lock {}: {}", path.string(), errno_text(error));
        return std::nullopt;
      }
      if (!still_named(fd.get(), path)) continue;
      if (!write_all(fd.get(), content) || ::fsync(fd.get()) != 0) {
        int error = errno;
        ::unlink(path.c_str());
        spdlog::error("callback spool: cannot write {}: {}", path.string(), errno_text(error));
        return std::nullopt;
      }
      fsync_dir(options.spool_dir);
      {
        std::lock_guard lock(spool_mutex);
        spool_counts[name] = results.size();
      }
      return name;
    }
    spdlog::error("callback spool: cannot create a spool file in {}", options.spool_dir.string());
    return std::nullopt;
  }

  // Writes results that cannot be sent; as a last resort logs them, so an operator can replay
  // them by hand.
  void spool_or_log(const Results& results) {
    if (results.empty()) return;
    if (write_spool(results)) return;
    spdlog::error("callback: {} result(s) could be neither delivered nor spooled: {}",
                  results.size(), common::protocol::to_json_string(CallbackBatch{results}));
  }

  std::vector<std::string> list_spool() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(options.spool_dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (is_spool_file_name(name)) names.push_back(std::move(name));
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
      spdlog::warn("callback spool: cannot list {}: {}", options.spool_dir.string(), ec.message());
    }
    std::sort(names.begin(), names.end());  // oldest first: names start with the time
    return names;
  }

  // Opens and locks a spool file for reading; nullopt when another sender holds it or it is gone.
  std::optional<UniqueFd> lock_spool(const std::string& name, bool& gone) const {
    gone = false;
    fs::path path = path_of(name);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
      int error = errno;
      gone = error == ENOENT;
      if (!gone) {
        spdlog::warn("callback spool: cannot open {}: {}", path.string(), errno_text(error));
      }
      return std::nullopt;
    }
    if (!flock_retrying(fd.get(), LOCK_EX | LOCK_NB)) return std::nullopt;  // another sender's
    if (!still_named(fd.get(), path)) {
      gone = true;
      return std::nullopt;
    }
    return fd;
  }

  std::optional<Results> read_spool(const UniqueFd& fd, const std::string& name) {
    std::string content;
    if (!read_all(fd.get(), content)) {
      int error = errno;
      spdlog::warn("callback spool: cannot read {}: {}", path_of(name).string(), errno_text(error));
      return std::nullopt;
    }
    bool first_read = false;
    {
      std::lock_guard lock(spool_mutex);
      first_read = read_files.insert(name).second;
    }
    // A file kept through an outage is read again at every retry: its bad lines are reported once.
    return parse_spool(content, path_of(name), first_read);
  }

  // Counts the results in the spool (start(): before anything is sent).
  void count_spool() {
    std::map<std::string, std::size_t> counts;
    for (const auto& name : list_spool()) {
      bool gone = false;
      auto fd = lock_spool(name, gone);
      if (!fd) continue;
      if (auto results = read_spool(*fd, name)) counts[name] = results->size();
    }
    std::lock_guard lock(spool_mutex);
    spool_counts = std::move(counts);
  }

  void forget(const std::string& name) {
    std::lock_guard lock(spool_mutex);
    spool_counts.erase(name);
    read_files.erase(name);
  }

  // One pass over the spool: re-sends each file, oldest first, removing it once all of it was
  // accepted. After the first failure the pass only counts the files it has not seen yet.
  void resend_spool(const std::stop_token& stop) {
    auto names = list_spool();
    {
      std::lock_guard lock(spool_mutex);
      auto gone = [&](const std::string& name) {
        return !std::binary_search(names.begin(), names.end(), name);
      };
      std::erase_if(spool_counts, [&](const auto& entry) { return gone(entry.first); });
      std::erase_if(read_files, gone);
    }
    bool admin_up = true;
    for (const auto& name : names) {
      if (stop.stop_requested()) return;
      if (!admin_up) {
        std::lock_guard lock(spool_mutex);
        if (spool_counts.contains(name)) continue;
      }
      bool gone = false;
      auto fd = lock_spool(name, gone);
      if (!fd) {
        if (gone) forget(name);
        continue;
      }
      auto results = read_spool(*fd, name);
      if (!results) continue;
      {
        std::lock_guard lock(spool_mutex);
        spool_counts[name] = results->size();
      }
      if (!admin_up) continue;

      std::size_t sent = 0;
      while (sent < results->size()) {
        auto end = std::min(results->size(), sent + options.max_batch);
        Results batch(results->begin() + static_cast<std::ptrdiff_t>(sent),
                      results->begin() + static_cast<std::ptrdiff_t>(end));
        if (!send(batch)) {
          admin_up = false;
          break;
        }
        sent = end;
      }
      if (sent == 0 && !results->empty()) continue;
      if (sent < results->size()) {
        // Keep the rest in a file of its own before the old one goes; if that fails the old file
        // stays and its accepted part is sent again later (the admin ignores repeats).
        Results rest(results->begin() + static_cast<std::ptrdiff_t>(sent), results->end());
        if (!write_spool(rest)) continue;
      }
      if (::unlink(path_of(name).c_str()) != 0 && errno != ENOENT) {
        int error = errno;
        spdlog::warn("callback spool: cannot remove {}: {}", path_of(name).string(),
                     errno_text(error));
        continue;
      }
      forget(name);
      if (!results->empty()) {
        spdlog::info("callback spool: {} spooled result(s) delivered from {}", sent, name);
      }
    }
  }

  // ---- the background thread ----

  Results take_batch_locked(std::size_t limit) {
    auto count = std::min(queue.size(), limit);
    Results batch(std::make_move_iterator(queue.begin()),
                  std::make_move_iterator(queue.begin() + static_cast<std::ptrdiff_t>(count)));
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(count));
    in_flight = batch.size();
    return batch;
  }

  void run(const std::stop_token& stop) noexcept {
    try {
      resend_spool(stop);
      auto next_resend = clock.steady_now() + options.retry_interval;
      // stop() ends the wait at once, as a push does.
      std::stop_callback on_stop(stop, [this] { interrupt_wait(); });
      std::unique_lock lock(mutex);
      while (!stop.stop_requested()) {
        if (clock.steady_now() >= next_resend) {
          // Before the queue, so a steady stream of new results cannot starve the spool.
          held = false;
          lock.unlock();
          resend_spool(stop);
          lock.lock();
          next_resend = clock.steady_now() + options.retry_interval;
          continue;
        }
        if (queue.empty() || held) {
          wait = std::stop_source();
          const auto token = wait.get_token();
          lock.unlock();
          clock.sleep_until(next_resend, token);
          lock.lock();
          continue;
        }
        Results batch = take_batch_locked(options.max_batch);
        lock.unlock();
        bool done = send(batch) || write_spool(batch).has_value();
        lock.lock();
        in_flight = 0;
        if (!done) {
          // Neither an admin nor the disk took it: keep it first in line and try again at the
          // next retry instead of spinning.
          queue.insert(queue.begin(), std::make_move_iterator(batch.begin()),
                       std::make_move_iterator(batch.end()));
          held = true;
        }
      }
      lock.unlock();
      flush();
    } catch (const std::exception& e) {
      // Only allocation failures get here; stop() spools what is left in the queue.
      spdlog::critical("callback sender thread failed: {}", e.what());
    }
  }

  // Ends the background thread's wait for the next retry (a result was queued, or stop()).
  void interrupt_wait() noexcept {
    std::lock_guard lock(mutex);
    wait.request_stop();
  }

  // After stop(): sends what is queued while time is left, spools the rest, and hands later
  // pushes over to the spool (stopped).
  void flush() {
    bool admin_up = true;
    std::unique_lock lock(mutex);
    while (!queue.empty()) {
      auto deadline = flush_deadline;
      bool may_send = admin_up && SteadyClock::now() < deadline;
      // Once nothing more is sent, everything left goes to one file.
      Results batch = take_batch_locked(may_send ? options.max_batch : queue.size());
      lock.unlock();
      bool sent = may_send && send_before(batch, deadline);
      if (may_send && !sent) admin_up = false;
      if (!sent) spool_or_log(batch);
      lock.lock();
      in_flight = 0;
    }
    stopped = true;
  }

  Options options;
  std::uint64_t name_salt = 0;
  std::vector<HttpClient> clients;  // used by the background thread only

  common::Clock& clock;  // the retry interval's; flushing at stop() counts real time

  mutable std::mutex mutex;
  std::stop_source wait;  // the background thread's wait in progress; push() ends it
  std::deque<HandleCallbackParam> queue;
  std::size_t in_flight = 0;  // results taken from the queue and not yet sent or spooled
  bool held = false;          // the last batch could not be sent nor spooled: wait for the retry
  bool started = false;
  bool stopped = false;  // pushes go straight to the spool
  SteadyClock::time_point flush_deadline;

  mutable std::mutex spool_mutex;
  std::map<std::string, std::size_t> spool_counts;  // spool file name → results in it
  std::set<std::string> read_files;                 // spool files read at least once

  std::mutex lifecycle_mutex;  // serializes start() and stop()
  std::jthread worker;
};

CallbackSender::CallbackSender(Options options, common::Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), clock)) {}

CallbackSender::~CallbackSender() {
  try {
    stop(std::chrono::milliseconds::zero());
  } catch (const std::exception& e) {
    spdlog::error("callback sender: stop failed: {}", e.what());
  } catch (...) {
    spdlog::error("callback sender: stop failed");
  }
}

void CallbackSender::start() {
  std::lock_guard lifecycle(impl_->lifecycle_mutex);
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->started || impl_->stopped) {
      throw std::logic_error("callback sender: start() called twice or after stop()");
    }
    impl_->started = true;
  }
  std::error_code ec;
  fs::create_directories(impl_->options.spool_dir, ec);
  if (ec) {
    spdlog::error("callback spool: cannot create {}: {}", impl_->options.spool_dir.string(),
                  ec.message());
  }
  impl_->count_spool();
  if (auto left = spooled(); left > 0) {
    spdlog::info("callback spool: {} result(s) from an earlier run to re-send", left);
  }
  impl_->worker = std::jthread([impl = impl_.get()](std::stop_token stop) { impl->run(stop); });
}

void CallbackSender::push(common::protocol::HandleCallbackParam result) {
  std::unique_lock lock(impl_->mutex);
  if (impl_->stopped) {
    lock.unlock();
    impl_->spool_or_log({std::move(result)});
    return;
  }
  impl_->queue.push_back(std::move(result));
  impl_->wait.request_stop();
}

void CallbackSender::stop(std::chrono::milliseconds flush_timeout) {
  std::lock_guard lifecycle(impl_->lifecycle_mutex);
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) return;
    impl_->flush_deadline = SteadyClock::now() + flush_timeout;
  }
  if (impl_->worker.joinable()) {
    impl_->worker.request_stop();
    impl_->worker.join();
  }
  // Never started, or the thread failed: spool what is left.
  Results left;
  {
    std::lock_guard lock(impl_->mutex);
    left.assign(std::make_move_iterator(impl_->queue.begin()),
                std::make_move_iterator(impl_->queue.end()));
    impl_->queue.clear();
    impl_->stopped = true;
  }
  impl_->spool_or_log(left);
}

std::size_t CallbackSender::queued() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->queue.size() + impl_->in_flight;
}

std::size_t CallbackSender::spooled() const {
  std::lock_guard lock(impl_->spool_mutex);
  std::size_t total = 0;
  for (const auto& [name, count] : impl_->spool_counts) total += count;
  return total;
}

}  // namespace cronwheel::executor
