#include "executor/src/builtin_handlers.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <stop_token>
#include <system_error>
#include <utility>
#include <variant>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "common/http/url.h"
#include "common/util/utf8.h"
#include "executor/src/run_context.h"
#include "executor/src/run_log.h"
#include "executor/src/script_runner.h"

namespace cronwheel::executor {
namespace {

using namespace std::chrono_literals;

// What of an HTTP answer goes to the run log: the head (status line and headers) up to this
// many bytes, then the start of the body. The body is read on (and dropped) up to
// kMaxHttpBodyBytes so that the connection ends cleanly; past that the request is cut off.
constexpr std::size_t kMaxHttpHeadLogBytes = 8 * 1024;
constexpr std::size_t kMaxHttpBodyLogBytes = 4 * 1024;
constexpr std::uint64_t kMaxHttpBodyBytes = 64ull * 1024 * 1024;
constexpr double kMaxHttpTimeoutSeconds = 3600;
constexpr double kMaxSleepSeconds = 7 * 24 * 3600;
constexpr std::string_view kHttpMethods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                             "OPTIONS"};

[[noreturn]] void invalid(const std::string& message) { throw std::invalid_argument(message); }

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

// Parses "host", "host:port", "[v6]" or "[v6]:port". `port` is 0 when none is given. Throws
// std::invalid_argument (with `what` naming the text's role) when the text is not one of those.
void parse_host_port(std::string_view text, const std::string& what, std::string& host,
                     int& port) {
  auto bad = [&](const std::string& why) {
    invalid(what + " '" + std::string(text) + "' is not a host or host:port (" + why + ")");
  };
  std::string_view port_text;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) bad("unclosed '['");
    std::string_view literal = text.substr(1, close - 1);
    if (literal.empty() || !std::all_of(literal.begin(), literal.end(), [](char c) {
          return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
        })) {
      bad("not an IPv6 address in brackets");
    }
    host = lower(text.substr(0, close + 1));
    std::string_view after = text.substr(close + 1);
    if (!after.empty()) {
      if (!after.starts_with(':')) bad("unexpected text after ']'");
      port_text = after.substr(1);
      if (port_text.empty()) bad("empty port");
    }
  } else {
    const auto colon = text.find(':');
    std::string_view name = text.substr(0, colon);
    if (name.empty()) bad("empty host");
    if (!std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' ||
                 c == '_';
        })) {
      bad("a host name holds letters, digits, '-', '.' and '_' only");
    }
    host = lower(name);
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
      if (port_text.empty()) bad("empty port");
    }
  }
  port = 0;
  if (!port_text.empty()) {
    const auto* end = port_text.data() + port_text.size();
    auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
    if (ec != std::errc() || ptr != end || port < 1 || port > 65535) bad("the port is 1-65535");
  }
}

// Seconds as a finite number in [min, max] (min excluded when `exclusive_min`).
double parse_seconds(std::string_view text, double min, double max, bool exclusive_min,
                     const std::string& what) {
  text = trim(text);
  double value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const bool in_range = exclusive_min ? value > min : value >= min;
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value) || !in_range ||
      value > max) {
    std::string range = (exclusive_min ? "more than " : "") + std::to_string(static_cast<long>(min)) +
                        " to " + std::to_string(static_cast<long>(max));
    invalid(what + " must be a number of seconds (" + range + "), not '" + std::string(text) +
            "'");
  }
  return value;
}

struct ParsedUrl {
  std::string scheme;
  std::string host;
  int port = 0;
  std::string target;
};

ParsedUrl parse_url(std::string_view url) {
  auto result = common::http::parse_http_url(url);
  if (const auto* why = std::get_if<std::string>(&result)) {
    invalid("http: '" + std::string(url) + "' is not an http(s) URL: " + *why);
  }
  auto& parsed = std::get<common::http::HttpUrl>(result);
  const int port = parsed.effective_port();
  std::string target = parsed.path.empty() ? "/" : parsed.path;
  if (!parsed.query.empty()) target += "?" + parsed.query;
  return {std::move(parsed.scheme), std::move(parsed.host), port, std::move(target)};
}

std::string host_port(const std::string& host, int port) { return host + ":" + std::to_string(port); }

// CR or LF in a request line or header value would end it and start another one of the
// parameter's choosing (header or request smuggling to an allowed host); NUL cuts it short.
bool breaks_lines(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// Refuses `value` for `field` when it breaks lines (see breaks_lines).
void refuse_line_breaks(std::string_view value, const std::string& field) {
  if (breaks_lines(value)) {
    invalid("http: " + field + " holds a CR, LF or NUL character, which a request line or header "
            "cannot carry");
  }
}

// ---------------------------------------------------------------------------------------------
// Handlers

void run_shell(JobContext& ctx, bool allowed) {
  if (!allowed) {
    ctx.fail("the shell handler is disabled: this executor does not allow scripts "
             "(started with --no-scripts)");
    return;
  }
  const std::string command(trim(ctx.params()));
  if (command.empty()) {
    ctx.fail("shell: the job parameter must be the command line to run");
    return;
  }
  auto* run = dynamic_cast<RunContext*>(&ctx);
  if (run == nullptr) {
    ctx.fail("shell: this run has no process supervision (not run by a cronwheel executor)");
    return;
  }
  ctx.log("shell: /bin/sh -c " + command);
  const ScriptOutcome outcome =
      run->run_command({"/bin/sh", "-c", command, "cronwheel-shell",
                        std::to_string(ctx.shard_index()), std::to_string(ctx.shard_total())});
  switch (outcome.kind) {
    case ScriptOutcome::Kind::kExited:
      if (outcome.exit_code == 0) {
        ctx.succeed("exit code 0");
      } else {
        ctx.fail("shell: " + outcome.message);
      }
      return;
    case ScriptOutcome::Kind::kSignaled:
    case ScriptOutcome::Kind::kStopped:
    case ScriptOutcome::Kind::kFailedToStart:
      ctx.fail("shell: " + outcome.message);
      return;
  }
}

// Appends `text` to `out` unless that makes `out` longer than `limit`; returns false when it
// did not fit (once: `out` is then marked as cut).
bool append_bounded(std::string& out, std::string_view text, std::size_t limit, bool& cut) {
  if (cut) return false;
  if (out.size() + text.size() > limit) {
    out += "[... cut at " + std::to_string(limit) + " bytes]";
    cut = true;
    return false;
  }
  out += text;
  return true;
}

void run_http(JobContext& ctx, const HttpAllowList& allow_hosts) {
  if (allow_hosts.empty()) {
    ctx.fail("the http handler is disabled: no host is allowed (start the executor with "
             "--http-allow-hosts host[:port],...)");
    return;
  }
  HttpJobRequest request;
  try {
    request = parse_http_job_params(ctx.params());
  } catch (const std::invalid_argument& e) {
    ctx.fail(e.what());
    return;
  }
  const std::string url = request.scheme + "://" + host_port(request.host, request.port) +
                          request.target;
  if (!allow_hosts.allows(request.host, request.port)) {
    ctx.fail("http: " + host_port(request.host, request.port) +
             " is not on this executor's allow-list (--http-allow-hosts)");
    return;
  }

  httplib::Client client(request.scheme + "://" + host_port(request.host, request.port));
  client.set_connection_timeout(request.timeout);
  client.set_read_timeout(request.timeout);
  client.set_write_timeout(request.timeout);
  client.set_follow_location(false);
  client.set_keep_alive(false);
  client.set_tcp_nodelay(true);

  httplib::Request req;
  req.method = request.method;
  req.path = request.target;
  req.headers.emplace("User-Agent", "cronwheel-executor");
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    req.body = request.body;
    req.headers.emplace("Content-Type", request.content_type);
  }
  // The parameter's fields were checked when parsed; this holds for whatever goes on the wire,
  // whichever field it came from.
  if (breaks_lines(req.method) || breaks_lines(req.path)) {
    ctx.fail("http: the request line holds a CR, LF or NUL character");
    return;
  }
  for (const auto& [name, value] : req.headers) {
    if (breaks_lines(name) || breaks_lines(value)) {
      ctx.fail("http: header " + name + " holds a CR, LF or NUL character");
      return;
    }
  }

  // The head is captured as it arrives, so the status is known even when the body is cut off.
  std::string head;
  bool head_cut = false;
  int status = 0;
  std::string body;
  std::uint64_t body_bytes = 0;
  bool body_too_big = false;
  const std::stop_token stop = ctx.stop_token();
  req.response_handler = [&](const httplib::Response& response) {
    status = response.status;
    append_bounded(head, response.version + " " + std::to_string(response.status) + " " +
                             response.reason + "\n",
                   kMaxHttpHeadLogBytes, head_cut);
    for (const auto& [name, value] : response.headers) {
      if (!append_bounded(head, name + ": " + value + "\n", kMaxHttpHeadLogBytes, head_cut)) break;
    }
    return !stop.stop_requested();
  };
  req.content_receiver = [&](const char* data, std::size_t length, std::uint64_t, std::uint64_t) {
    if (body.size() < kMaxHttpBodyLogBytes) {
      body.append(data, std::min(length, kMaxHttpBodyLogBytes - body.size()));
    }
    body_bytes += length;
    if (body_bytes > kMaxHttpBodyBytes) {
      body_too_big = true;
      return false;
    }
    return !stop.stop_requested();
  };

  ctx.log("http: " + request.method + " " + url);
  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  bool sent = false;
  {
    // A stop (kill, timeout) shuts the connection down, which ends a wait for the answer at once.
    std::stop_callback cancel(stop, [&client]() noexcept { client.stop(); });
    if (!stop.stop_requested()) sent = client.send(req, response, error);
  }
  if (!head.empty()) ctx.log("http: response head:\n" + head);
  if (!body.empty()) {
    std::string shown = body.substr(0, common::utf8::prefix_length(body, body.size()));
    ctx.log("http: response body (" +
            (body_bytes > shown.size() ? "first " + std::to_string(shown.size()) + " of " : "") +
            std::to_string(body_bytes) + " bytes):\n" + shown);
  }

  if (stop.stop_requested()) {
    ctx.fail("http: " + request.method + " " + url + " cancelled");
    return;
  }
  if (!sent && status == 0) {
    ctx.fail("http: " + request.method + " " + url + " failed: " + httplib::to_string(error));
    return;
  }
  if (body_too_big) {
    ctx.log("http: the response body was cut off after " + std::to_string(kMaxHttpBodyBytes) +
            " bytes");
  }
  const std::string outcome = "HTTP " + std::to_string(status);
  if (status >= 200 && status < 300) {
    ctx.succeed(outcome);
  } else if (status >= 300 && status < 400) {
    ctx.fail(outcome + " (redirects are not followed)");
  } else {
    ctx.fail(outcome);
  }
}

void run_sleep(JobContext& ctx, common::Clock& clock) {
  std::chrono::milliseconds duration;
  try {
    duration = parse_sleep_seconds(ctx.params());
  } catch (const std::invalid_argument& e) {
    ctx.fail(e.what());
    return;
  }
  const std::string seconds(trim(ctx.params()));
  ctx.log("sleeping " + seconds + " s");
  const auto started = clock.steady_now();
  if (!clock.sleep_until(started + duration, ctx.stop_token())) {
    const auto slept =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.steady_now() - started);
    ctx.log("sleep stopped after " + std::to_string(slept.count()) + " ms");
    ctx.fail("sleep stopped after " + std::to_string(slept.count()) + " ms");
    return;
  }
  ctx.log("slept " + seconds + " s");
  ctx.succeed("slept " + seconds + " s");
}

std::string shard_text(const JobContext& ctx) {
  return "shard " + std::to_string(ctx.shard_index()) + " of " + std::to_string(ctx.shard_total());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// HttpAllowList

HttpAllowList::HttpAllowList(const std::vector<std::string>& entries) {
  for (const auto& raw : entries) {
    const std::string_view entry = trim(raw);
    if (entry.empty()) continue;
    if (entry.find("://") != std::string_view::npos) {
      invalid("http allow-list entry '" + std::string(entry) +
              "' is a URL; write the host or host:port only");
    }
    Entry parsed;
    parse_host_port(entry, "http allow-list entry", parsed.host, parsed.port);
    entries_.push_back(std::move(parsed));
  }
}

HttpAllowList HttpAllowList::parse(std::string_view comma_separated) {
  std::vector<std::string> entries;
  std::size_t start = 0;
  for (;;) {
    const auto comma = comma_separated.find(',', start);
    entries.emplace_back(comma_separated.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return HttpAllowList(entries);
}

bool HttpAllowList::allows(std::string_view host, int port) const {
  const std::string wanted = lower(host);
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return entry.host == wanted && (entry.port == 0 || entry.port == port);
  });
}

// ---------------------------------------------------------------------------------------------
// Parameters

HttpJobRequest parse_http_job_params(std::string_view params) {
  params = trim(params);
  if (params.empty()) {
    invalid("http: the job parameter must be a URL or {\"url\":...,\"method\":...,\"body\":...,"
            "\"timeout\":...}");
  }
  HttpJobRequest request;
  std::string url;
  if (params.starts_with('{')) {
    nlohmann::json json;
    try {
      json = nlohmann::json::parse(params);
    } catch (const nlohmann::json::parse_error& e) {
      invalid(std::string("http: the job parameter is not valid JSON: ") + e.what());
    }
    for (const auto& [key, value] : json.items()) {
      auto text = [&, &key = key, &value = value]() {
        if (!value.is_string()) invalid("http: \"" + key + "\" must be a string");
        return value.get<std::string>();
      };
      if (key == "url") {
        url = text();
        refuse_line_breaks(url, "\"url\"");
      } else if (key == "method") {
        request.method = upper(text());
        refuse_line_breaks(request.method, "\"method\"");
      } else if (key == "body") {
        request.body = text();
      } else if (key == "contentType") {
        request.content_type = text();
        refuse_line_breaks(request.content_type, "\"contentType\"");
      } else if (key == "timeout") {
        double seconds = 0;
        if (value.is_number()) {
          seconds = value.get<double>();
          if (!std::isfinite(seconds) || seconds <= 0 || seconds > kMaxHttpTimeoutSeconds) {
            invalid("http: \"timeout\" must be a number of seconds (more than 0 to 3600)");
          }
        } else if (value.is_string()) {
          seconds = parse_seconds(value.get<std::string>(), 0, kMaxHttpTimeoutSeconds, true,
                                  "http: \"timeout\"");
        } else {
          invalid("http: \"timeout\" must be a number of seconds (more than 0 to 3600)");
        }
        request.timeout = std::max(std::chrono::milliseconds(1),
                                   std::chrono::milliseconds(std::llround(seconds * 1000)));
      } else {
        invalid("http: unknown field \"" + key +
                "\" in the job parameter (url, method, body, contentType, timeout)");
      }
    }
    if (url.empty()) invalid("http: the job parameter has no \"url\"");
  } else {
    url = std::string(params);
    refuse_line_breaks(url, "the URL");
  }
  if (std::find(std::begin(kHttpMethods), std::end(kHttpMethods), request.method) ==
      std::end(kHttpMethods)) {
    invalid("http: method '" + request.method +
            "' is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
  }
  ParsedUrl parsed = parse_url(url);
  request.scheme = std::move(parsed.scheme);
  request.host = std::move(parsed.host);
  request.port = parsed.port;
  request.target = std::move(parsed.target);
  if (request.content_type.empty()) {
    const std::string_view body = trim(request.body);
    request.content_type = body.starts_with('{') || body.starts_with('[')
                               ? "application/json"
                               : "text/plain; charset=utf-8";
  }
  return request;
}

std::chrono::milliseconds parse_sleep_seconds(std::string_view params) {
  const double seconds = parse_seconds(params, 0, kMaxSleepSeconds, false, "sleep: the job parameter");
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

// ---------------------------------------------------------------------------------------------
// Registration

Handler shell_handler(bool allowed) {
  return [allowed](JobContext& ctx) { run_shell(ctx, allowed); };
}

Handler http_handler(HttpAllowList allow_hosts) {
  return [allow = std::move(allow_hosts)](JobContext& ctx) { run_http(ctx, allow); };
}

Handler echo_handler() {
  return [](JobContext& ctx) {
    ctx.log("params: " + ctx.params());
    ctx.log(shard_text(ctx));
    ctx.succeed(ctx.params());
  };
}

Handler sleep_handler(common::Clock& clock) {
  return [&clock](JobContext& ctx) { run_sleep(ctx, clock); };
}

Handler fail_handler() {
  return [](JobContext& ctx) {
    std::string message(trim(ctx.params()));
    if (message.empty()) message = "failed on purpose (the fail handler was given no message)";
    ctx.log("failing: " + message);
    ctx.fail(message);
  };
}

Handler sharding_handler() {
  return [](JobContext& ctx) {
    const std::string text = shard_text(ctx);
    ctx.log(text);
    ctx.succeed(text);
  };
}

void add_builtin_handlers(Executor& executor, const BuiltinHandlerOptions& options) {
  executor.handle("shell", shell_handler(options.allow_shell));
  executor.handle("http", http_handler(options.http_allow_hosts));
  executor.handle("echo", echo_handler());
  executor.handle("sleep", sleep_handler(common::SystemClock::instance()));
  executor.handle("fail", fail_handler());
  executor.handle("sharding", sharding_handler());
}

}  // namespace cronwheel::executor
