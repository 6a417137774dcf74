#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/clock.h"
#include "cronwheel/executor.h"

// The handlers every standalone cronwheel-executor has (an embedding service may add them too):
//
//   shell     the job parameter is a command line, run as `/bin/sh -c <parameter> cronwheel-shell
//             <shard index> <shard total>` in a process group of its own (output to the run log;
//             a kill or timeout ends the whole group, TERM then KILL); exit code 0 is success.
//             Disabled (every run fails, saying why) when scripts are not allowed.
//   http      the parameter is a URL, or {"url","method","body","contentType","timeout"}; only
//             hosts on the allow-list may be called; a 2xx status is success; the status line,
//             headers and the start of the body go to the run log, bounded. Redirects are not
//             followed (a redirect could lead off the allow-list).
//   echo      logs its parameter and shard and succeeds with the parameter as its message.
//   sleep     the parameter is a number of seconds (fractions allowed) on the clock it is given
//             (add_builtin_handlers: the system's, as Executor's); returns promptly when the run is
//             stopped.
//   fail      fails with the parameter as its message.
//   sharding  logs "shard <index> of <total>" (the index counts from 0) and succeeds with it.
//
// A parameter a handler cannot use fails the run with a message saying what was expected.
// Handlers are stateless apart from their options and may run concurrently.
namespace cronwheel::executor {

// The hosts the `http` handler may call. An entry is a host ("api.example.com": any port) or a
// host and port ("api.example.com:8443": that port only); IPv6 literals are written in brackets
// ("[::1]:8080"). Names compare case-insensitively and exactly: no wildcards, no DNS lookup, so
// "localhost" does not allow "127.0.0.1". Immutable once built; thread-safe.
class HttpAllowList {
 public:
  HttpAllowList() = default;  // empty: allows nothing
  // Throws std::invalid_argument naming the entry that is not a host or host:port.
  explicit HttpAllowList(const std::vector<std::string>& entries);
  // A comma-separated list ("a.example.com, b.example.com:8080"); empty items are skipped.
  static HttpAllowList parse(std::string_view comma_separated);

  // `host` as it appears in a URL (brackets around an IPv6 literal); `port` the effective port.
  bool allows(std::string_view host, int port) const;
  bool empty() const noexcept { return entries_.empty(); }

 private:
  struct Entry {
    std::string host;  // lower case; an IPv6 literal keeps its brackets
    int port = 0;      // 0: any port
  };
  std::vector<Entry> entries_;
};

// What an `http` job asks for.
struct HttpJobRequest {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower case; an IPv6 literal keeps its brackets
  int port = 0;        // explicit, or the scheme's default
  std::string target;  // path and query, starting with '/'
  std::string method = "GET";
  std::string body;
  std::string content_type;  // sent with a body; default application/json for a body starting
                             // with '{' or '[', text/plain otherwise
  std::chrono::milliseconds timeout{10'000};  // connect, and each wait for the answer's bytes
};

// Parses the `http` handler's parameter: a URL ("https://host[:port]/path?query"), or a JSON
// object {"url" (required), "method" (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS; default GET),
// "body", "contentType", "timeout" (seconds, 0 < t <= 3600; default 10)}. URLs with user
// information ("user@host") are refused, and so is a URL, method or contentType holding CR, LF
// or NUL (they would end the request line or header and smuggle others in). Throws
// std::invalid_argument saying what is wrong and naming the field.
HttpJobRequest parse_http_job_params(std::string_view params);

// Parses the `sleep` handler's parameter: seconds, 0 to 604800 (a week), fractions allowed.
// Throws std::invalid_argument saying what is wrong.
std::chrono::milliseconds parse_sleep_seconds(std::string_view params);

struct BuiltinHandlerOptions {
  // Whether `shell` runs commands (the standalone executor's --allow-scripts / --no-scripts).
  bool allow_shell = true;
  HttpAllowList http_allow_hosts;  // empty: every `http` run fails, saying how to allow hosts
};

// Registers shell, http, echo, sleep, fail and sharding on `executor` (Executor::handle).
void add_builtin_handlers(Executor& executor, const BuiltinHandlerOptions& options);

// The handlers one by one, as registered by add_builtin_handlers.
Handler shell_handler(bool allowed);
Handler http_handler(HttpAllowList allow_hosts);
Handler echo_handler();
Handler sleep_handler(common::Clock& clock);  // `clock` must outlive the handler
Handler fail_handler();
Handler sharding_handler();

}  // namespace cronwheel::executor
