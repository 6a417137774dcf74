#pragma once

// How a webhook receiver knows an alarm came from cronwheel and is fresh (docs/alarms.md):
//
//   X-Cronwheel-Timestamp: <unix seconds when it was sent>
//   X-Cronwheel-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>
//
// The receiver recomputes the HMAC over the timestamp header, a dot and the raw body, compares
// in constant time, and refuses timestamps more than a few minutes old (a replayed request).

#include <cstdint>
#include <string>
#include <string_view>

namespace cronwheel::admin {

inline constexpr std::string_view kWebhookTimestampHeader = "X-Cronwheel-Timestamp";
inline constexpr std::string_view kWebhookSignatureHeader = "X-Cronwheel-Signature";

// Lower-case hex of HMAC-SHA256(key, message) (RFC 2104; keys of any length).
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

// The X-Cronwheel-Signature value: "sha256=" + hmac_sha256_hex(secret, "<timestamp>.<body>").
std::string webhook_signature(std::string_view secret, std::int64_t timestamp_s, std::string_view body);

}  // namespace cronwheel::admin
