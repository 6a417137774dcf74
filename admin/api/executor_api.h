#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "admin/complete/completion.h"
#include "admin/auth/executor_tokens.h"
#include "admin/model/registry_store.h"
#include "admin/model/stores.h"
#include "common/http/http_server.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// The executor-facing endpoints of an admin node, exactly as XXL-JOB 2.4's admin serves them, so
// xxl-job-core executors and cronwheel-executor alike talk to it:
//
//   POST /api/registry         RegistryParam  → RegistryStore::upsert
//   POST /api/registryRemove   RegistryParam  → RegistryStore::remove
//   POST /api/callback         [HandleCallbackParam...] or {"callbackList":[...]} (XXL-JOB 3.5)
//                              → Completion::report, one transaction per result
//
// The answer to /api/registry carries cronwheel's X-Cronwheel-Clock header
// (protocol::kClockHeader): "<received>,<sent>", this node's wall-clock times (epoch ms) when
// the handler began and just before it answered, whatever the answer, so an executor can
// estimate the difference between its clock and the admin's from the exchange.
//
// also under a context path (`/xxl-job-admin/api/registry`), as an XXL-JOB admin deployed in a
// servlet container is addressed. Not under /api/v1: these are not REST resources.
//
// Every answer is a ReturnT with HTTP 200, as XXL-JOB's admin answers: {"code":200,...} when
// done; {"code":500,"msg":...} otherwise, the message naming the problem:
//  - the XXL-JOB-ACCESS-TOKEN header is not the one `tokens` asks of the group the registration
//    names: "The access token is wrong." (nothing is written); for a callback batch, results of
//    runs whose group wants another token are not recorded, the others are, and the answer says
//    how many were refused (so the executor keeps them and sends them again);
//  - a body that is not the message ("registryKey: expected a string, got number") or a
//    registration the store cannot hold (empty, too long, not an http(s) URL);
//  - the database unavailable: the executor keeps its registration heartbeat or its results
//    and sends them again (results are idempotent: a repeated one is ignored).
// A callback for an unknown or already finished run is ignored and the batch still answered
// 200, as XXL-JOB does, so an executor never resends it forever.
//
//
// An app name takes at most `max_executors_per_group` live registrations: one more new address
// is refused ("... has N executors registered, the most a group takes ...", logged at most once a
// minute per app name) while renewing one it has always works, so a group's token cannot flood
// routing with addresses that lead nowhere.
struct ExecutorRouteOptions {
  // Called after a registration that is new (not a heartbeat) or a removal, so automatic
  // groups' address lists can be refreshed at once.
  std::function<void()> registrations_changed;
  // Called with the address of every registration taken, new or renewed: the executor is alive.
  std::function<void(const std::string& address)> registered;
  // Called with the app name of every registration refused for the cap.
  std::function<void(const std::string& app_name)> refused_full;
  std::size_t max_executors_per_group = 512;
  // A registration older than this is no executor (RegistryMonitor's dead_after).
  std::int64_t dead_after_ms = 90'000;
  // The wall clock whose times answer a registration (kClockHeader); SystemClock when null.
  // Must outlive the server's handlers.
  const common::Clock* clock = nullptr;
};
void add_executor_routes(common::http::HttpServer& server, RegistryStore& registry, Completion& completion,
                         ExecutorTokens& tokens, ExecutorRouteOptions options = {});

// The registration's problem as a ReturnT message ("registryValue: not an http:// or https://
// URL"), or empty when the store can hold it: each field non-empty, at most 255
// characters, no control characters; the value an http(s) URL (common/http/url.h).
std::string registration_problem(const common::protocol::RegistryParam& param);

}  // namespace cronwheel::admin
