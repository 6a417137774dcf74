#include "tests/bench/http_engines/bench_service.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/http/http_error.h"

namespace cronwheel::bench::http_engines {

Route find_route(std::string_view method, std::string_view path) {
  struct Entry {
    std::string_view method;
    std::string_view path;
    Route route;
  };
  static constexpr Entry kRoutes[] = {
      {"GET", "/healthz", Route::kHealthz}, {"POST", "/run", Route::kRun}, {"GET", "/slow", Route::kSlow}};
  bool path_known = false;
  for (const auto& entry : kRoutes) {
    if (entry.path != path) continue;
    if (entry.method == method) return entry.route;
    path_known = true;
  }
  return path_known ? Route::kMethodNotAllowed : Route::kNotFound;
}

std::size_t body_limit(Route route) { return route == Route::kRun ? kRunMaxBodyBytes : kMaxBodyBytes; }

bool runs_on_lane(Route route) { return route == Route::kSlow; }

Answer error_answer(int status, std::string_view code, std::string_view message) {
  auto shaped = common::http::rest_error({status, std::string(code), std::string(message), {}, 0});
  return {shaped.status, std::move(shaped.body)};
}

Answer handle(Route route, const std::string& body) {
  switch (route) {
    case Route::kHealthz:
      return {200, R"({"status":"UP"})"};
    case Route::kRun: {
      const auto trigger = nlohmann::json::parse(body, nullptr, false);
      if (trigger.is_discarded() || !trigger.is_object() || !trigger.contains("jobId")) {
        return error_answer(400, common::http::kBadRequestCode, "the body is not a trigger");
      }
      return {200, R"({"code":200})"};
    }
    case Route::kSlow:
      std::this_thread::sleep_for(kSlowHandlerTime);
      return {200, R"({"code":200})"};
    case Route::kMethodNotAllowed:
      return error_answer(405, "method_not_allowed", "method not allowed");
    case Route::kNotFound:
      break;
  }
  return error_answer(404, common::http::kNotFoundCode, "no such route");
}

int listen_port(int argc, char** argv) { return argc > 1 ? std::atoi(argv[1]) : 0; }

void announce(int port) {
  std::printf("listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
}

namespace {
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}
}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A client that leaves while its answer is written must not end the server.
  signal(SIGPIPE, SIG_IGN);
}

void wait_for_stop_signal() {
  const sigset_t set = stop_signals();
  int received = 0;
  sigwait(&set, &received);
}

TaskPool::TaskPool(std::size_t threads, std::size_t max_waiting)
    : capacity_(max_waiting > std::numeric_limits<std::size_t>::max() - threads ? max_waiting
                                                                                 : threads + max_waiting) {
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

bool TaskPool::try_submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (inside_ >= capacity_) return false;
    ++inside_;
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

void TaskPool::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
    std::lock_guard lock(mutex_);
    --inside_;
  }
}

}  // namespace cronwheel::bench::http_engines
