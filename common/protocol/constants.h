#pragma once

#include <string_view>

// Constants of the XXL-JOB 2.4 admin/executor protocol (see DESIGN.md, "Wire protocol").
namespace cronwheel::common::protocol {

// ReturnT.code and HandleCallbackParam.handleCode values. Any other code is a failure too.
inline constexpr int kSuccessCode = 200;
inline constexpr int kFailCode = 500;
inline constexpr int kTimeoutCode = 502;  // a job that ran past executorTimeout

// Request header carrying the shared access token, on every call in both directions when a token
// is configured.
inline constexpr std::string_view kAccessTokenHeader = "XXL-JOB-ACCESS-TOKEN";

inline constexpr std::string_view kJsonContentType = "application/json";

// Executor endpoints (POST, relative to the executor's address "http://ip:port/").
inline constexpr std::string_view kBeatPath = "/beat";
inline constexpr std::string_view kIdleBeatPath = "/idleBeat";
inline constexpr std::string_view kRunPath = "/run";
inline constexpr std::string_view kKillPath = "/kill";
inline constexpr std::string_view kLogPath = "/log";
// cronwheel executors only (lead dispatch, docs/scheduling.md "Lead dispatch"): a second's fires
// handed over ahead of their instant, and held ones taken back. XXL-JOB's executors have neither.
inline constexpr std::string_view kLeadPath = "/lead";
inline constexpr std::string_view kLeadCancelPath = "/leadCancel";

// Admin endpoints (POST, relative to an admin address such as
// "http://host:8080/xxl-job-admin/").
inline constexpr std::string_view kCallbackPath = "api/callback";
inline constexpr std::string_view kRegistryPath = "api/registry";
inline constexpr std::string_view kRegistryRemovePath = "api/registryRemove";

// cronwheel's own header on the answer to kRegistryPath: "<received>,<sent>", the admin's
// wall-clock times (epoch ms) when it began handling the registration and just before it
// answered, from which an executor estimates the difference between the clocks as NTP does
// (executor/src/clock_offset.h). XXL-JOB's executors ignore it.
inline constexpr std::string_view kClockHeader = "X-Cronwheel-Clock";

// RegistryParam.registryGroup values (XXL-JOB's RegistryConfig.RegistType).
inline constexpr std::string_view kRegistryGroupExecutor = "EXECUTOR";
inline constexpr std::string_view kRegistryGroupAdmin = "ADMIN";

}  // namespace cronwheel::common::protocol
