#include "admin/server/admin_server.h"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <stdexcept>

#include "admin/auth/bootstrap_admin.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

std::pair<std::string, int> parse_listen_address(const std::string& listen) {
  auto colon = listen.rfind(':');
  auto bad = [&listen](const std::string& why) {
    return std::invalid_argument("listen address '" + listen + "': " + why);
  };
  if (colon == std::string::npos) throw bad("expected host:port");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) throw bad("expected host:port");
  int port = -1;
  const char* begin = listen.data() + colon + 1;
  const char* end = listen.data() + listen.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || ptr != end || begin == end || port < 0 || port > 65535) {
    throw bad("port must be a number 0-65535");
  }
  return {host, port};
}

namespace {

common::http::HttpServerOptions server_options(const AdminConfig& config) {
  auto [host, port] = parse_listen_address(config.listen);
  common::http::HttpServerOptions options;
  options.host = host;
  options.port = port;
  options.worker_threads = static_cast<std::size_t>(config.http_threads);
  options.error_formatter = common::http::rest_error;
  options.name = "admin-api";
  return options;
}

Database::Options database_options(const AdminConfig& config) {
  Database::Options options;
  options.url = config.db_url;
  options.pool_size = static_cast<std::size_t>(config.db_pool_size);
  return options;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "admin";
  return name;
}

}  // namespace

AdminServer::AdminServer(const AdminConfig& config, std::string version)
    : config_(config),
      version_(std::move(version)),
      host_(parse_listen_address(config.listen).first),
      database_(database_options(config), &PgStores::prepare),
      stores_(database_),
      http_(server_options(config)) {
  const int configured_port = parse_listen_address(config.listen).second;
  node_id_ = config_.node_id.empty() ? host_name() + ":" + std::to_string(configured_port) : config_.node_id;
  health_ = std::make_unique<HealthCheck>(config_.db_url, node_id_, version_);
  add_routes();
}

AdminServer::~AdminServer() { stop(); }

void AdminServer::start() {
  bootstrap_admin(stores_.users(), api_->passwords(), config_.admin_password);
  http_.start();
  if (config_.node_id.empty()) {
    // With port 0 the real port is known only now.
    std::lock_guard lock(node_id_mutex_);
    node_id_ = host_name() + ":" + std::to_string(http_.port());
    health_->set_node_id(node_id_);
  }
}

void AdminServer::stop() noexcept { http_.stop(); }

int AdminServer::port() const noexcept { return http_.port(); }

void AdminServer::add_routes() {
  http_.get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    auto result = health_->check();
    common::http::write_json(res, result.body.dump(), result.healthy ? 200 : 503);
  });

  RestApi::Options api;
  api.sessions.session_lifetime = std::chrono::hours(config_.session_hours);
  api.sessions.secure_cookie = config_.secure_cookie;
  api.resources.clock = &common::SystemClock::instance();
  api.resources.node_id = [this] {
    std::lock_guard lock(node_id_mutex_);  // start() may still be settling it
    return node_id_;
  };
  api.resources.access_token = config_.access_token;
  api_ = std::make_unique<RestApi>(http_, stores_.stores(), std::move(api));
}

}  // namespace cronwheel::admin
