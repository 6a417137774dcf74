#pragma once

// The JSON form of every record: what the REST API answers and what the audit log stores as an
// object's `before`/`after`. One function per record so responses and audit entries never
// disagree.
//
// Field names are the REST API's (DESIGN.md "Admin interfaces"): camelCase, XXL-JOB's names for
// job fields (`jobGroup`, `jobDesc`, `scheduleType`, `childJobId`, ...). Times are epoch
// milliseconds; an absent optional is null. Secrets never appear: no password hash, no token
// hash, and a group's access token only as `accessTokenSet` (it is write-only, like a user's
// password).

#include <nlohmann/json.hpp>

#include "admin/model/alarm_channel_store.h"
#include "admin/model/records.h"

namespace cronwheel::admin {

// {"id","appName","title","addressType","addressList":[...],"accessTokenSet","createdAt",
//  "updatedAt"}
nlohmann::json to_json(const Group& group);

// {"id","jobGroup","jobDesc","author","alarmEmail","scheduleType","scheduleConf","timezone",
//  "misfireStrategy","executorRouteStrategy","executorHandler","executorParam",
//  "executorBlockStrategy","executorTimeout","executorFailRetryCount","retryInterval",
//  "glueType","glueSource","glueRemark","glueUpdatedAt","childJobId":[ids...],
//  "triggerStatus","triggerLastTime","triggerNextTime","pausedWithGroup",
//  "calendarId" (null for none),"calendarMode" ("SKIP" or "ONLY"),"createdAt","updatedAt"}
nlohmann::json to_json(const Job& job);

// {"id","jobGroup","jobId","state","triggerType","scheduledTime","adminNode",
//  "executorAddress","executorHandler","executorParam","shardIndex","shardTotal",
//  "executorFailRetryCount","parentLogId","triggerTime","triggerCode","triggerMsg",
//  "handleTime","handleCode","handleMsg","alarmStatus","workflowRunId","workflowNode","output",
//  "backfillId"}
nlohmann::json to_json(const JobLog& log);

// {"id","jobId","glueType","glueSource","glueRemark","createdAt"}
nlohmann::json to_json(const ScriptVersion& version);

// {"id","registryGroup","registryKey","registryValue","updatedAt"}
nlohmann::json to_json(const RegistryEntry& entry);

// {"id","username","role","groups":[ids...],"passwordSet","createdAt","updatedAt"} (never the
// password hash; passwordSet false: a user made by a jobs file, who cannot log in until an
// admin sets a password)
nlohmann::json to_json(const User& user);

// {"id","userId","name","createdAt","lastUsedAt","revokedAt","expiresAt"} (never the hash;
// expiresAt null: never expires)
nlohmann::json to_json(const ApiToken& token);

// {"id","at","userId","username","action","entityType","entityId","before","after",
//  "remoteAddr"}; `before`/`after` are the stored JSON objects themselves (null when absent).
nlohmann::json to_json(const AuditEntry& entry);

// {"nodeId","address","version","startedAt","heartbeatAt","leaseUntil"}
nlohmann::json to_json(const AdminNode& node);

// The node's form plus "alive" (its lease has not expired by the database's clock).
nlohmann::json to_json(const NodeStatus& status);

// {"nodeId","at"}
nlohmann::json to_json(const ScanMark& mark);

// {"id","name","kind","target","secretSet","groups":[ids...],"jobs":[ids...],"createdAt",
//  "updatedAt"} (never the secret)
nlohmann::json to_json(const AlarmChannel& channel);

}  // namespace cronwheel::admin
