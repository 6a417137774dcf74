#pragma once

#include "admin/api/api_router.h"
#include "admin/model/stores.h"

namespace cronwheel::admin {

// The audit log, for admins only:
//   GET audit?offset&limit&userId&entityType&entityId&from&to
//       → {"items":[{"id","at","userId","username","action","entityType","entityId","before",
//          "after","remoteAddr"}...],"total"}, newest first; `from`/`to` are epoch ms
//          (at >= from, at < to).
void add_audit_routes(ApiRouter& router, AuditStore& audit);

}  // namespace cronwheel::admin
