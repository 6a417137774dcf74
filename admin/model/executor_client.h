#pragma once

#include <cstdint>
#include <string>

#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"

namespace cronwheel::admin {

// ExecutorClient's code for a call that cannot have reached the executor (below). Never on the
// wire: XXL-JOB's codes are 200, 500 and 502.
inline constexpr int kNotReachedCode = 503;

// The admin's calls to executors (XXL-JOB 2.4: POST {address}beat, idleBeat, run, kill, log),
// with the group's access token. Never throws: a transport failure or a malformed answer is a
// ReturnT with code 500 and a message naming the executor and what failed.
//
// Two failures are told apart from a refusal:
//  - the request may have reached the executor but no complete answer came back (the read timed
//    out, or the connection broke after the request was sent): code 502 (kTimeoutCode). For
//    /run that means the executor may have queued the run: a caller must not send it again
//    before asking the executor (/log);
//  - the request cannot have reached it: no connection was made (refused, timed out, the
//    address unusable) or nothing of the request was written: code kNotReachedCode. A /run that
//    got it was provably not delivered, and may go to another executor.
// Code 500 means the executor answered and refused the call (or answered something that is not
// a ReturnT). Callers may treat 502 and kNotReachedCode like 500; a fake may answer 500 for
// every failure.
//
// Thread-safe. Connections are kept alive and reused across calls (a small pool per
// address), with TCP_NODELAY and bounded connect/read timeouts; a fake replaces it in tests.
class ExecutorClient {
 public:
  using Result = common::protocol::ReturnT<std::string>;

  virtual ~ExecutorClient() = default;

  virtual Result beat(const std::string& address, const std::string& access_token) = 0;
  virtual Result idle_beat(const std::string& address, const std::string& access_token,
                           std::int32_t job_id) = 0;
  virtual Result run(const std::string& address, const std::string& access_token,
                     const common::protocol::TriggerParam& trigger) = 0;
  virtual Result kill(const std::string& address, const std::string& access_token,
                      std::int32_t job_id) = 0;
  virtual common::protocol::ReturnT<common::protocol::LogResult> log(
      const std::string& address, const std::string& access_token,
      const common::protocol::LogParam& param) = 0;

  // Lead dispatch, cronwheel executors only (docs/scheduling.md, "Lead dispatch"): POST /lead
  // hands over fires ahead of their instant, POST /leadCancel takes held ones back. Codes as
  // above; an XXL-JOB executor answers neither with success (its unknown-path answer is a 500).
  using LeadResult = common::protocol::ReturnT<common::protocol::LeadAnswer>;
  using LeadCancelResult = common::protocol::ReturnT<common::protocol::LeadCancelAnswer>;
  virtual LeadResult lead(const std::string& address, const std::string& access_token,
                          const common::protocol::LeadRequest& request) = 0;
  virtual LeadCancelResult cancel_lead(const std::string& address, const std::string& access_token,
                                       const common::protocol::LeadCancelParam& param) = 0;
};

}  // namespace cronwheel::admin
