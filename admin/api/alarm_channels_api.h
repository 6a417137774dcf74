#pragma once

#include "admin/alarm/alarm_delivery.h"
#include "admin/alarm/alarm_message.h"
#include "admin/api/api_router.h"
#include "admin/model/alarm_channel_store.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// alarm-channels (admins only; openapi.yaml, docs/alarms.md): GET/POST alarm-channels,
// GET/PUT/DELETE alarm-channels/{id}, POST alarm-channels/{id}/test.
//
// A webhook channel's secret is answered once, when it is made (given or generated) or
// replaced (rotateSecret); afterwards only "secretSet" says there is one. The test sends a test
// alarm to the channel at once, outside any transaction, and answers what the destination said:
// 200 {"delivered":true}, 502 when it refused or could not be reached, 503 when this node cannot
// send to that kind of channel (no SMTP server configured).
struct AlarmChannelRoutes {
  AlarmChannelStore* store = nullptr;       // required
  const AlarmDelivery* delivery = nullptr;  // required for the test
  AlarmTextOptions text;                    // the node and console named in a test alarm
};

// `routes.store`, `routes.delivery` and `clock` must outlive the server.
void add_alarm_channel_routes(ApiRouter& router, const AlarmChannelRoutes& routes, common::Clock& clock);

// The body of POST (kCreate) or PUT (kUpdate) alarm-channels, applied to `channel` (empty for a
// create): {"name","kind","target","secret","rotateSecret","groups","jobs"}, PUT with any of
// them. Throws HttpError 400 naming the field. Returns the channel and, when the request made or
// replaced the secret, true in `secret_changed`.
enum class ChannelBodyKind { kCreate, kUpdate };
AlarmChannel read_channel_body(std::string_view body, AlarmChannel channel, ChannelBodyKind kind,
                               bool& secret_changed);

}  // namespace cronwheel::admin
