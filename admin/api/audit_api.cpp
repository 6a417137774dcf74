#include "admin/api/audit_api.h"

#include "admin/api/api_errors.h"
#include "admin/api/json_body.h"
#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

ApiResponse list_audit(AuditStore& audit, const common::http::Request& req) {
  auto page = page_query(req);
  AuditStore::Filter filter;
  filter.page = page;
  filter.user_id = query_int(req.get_param_value("userId"), "userId");
  filter.entity_type = req.get_param_value("entityType");
  if (filter.entity_type.size() > 32) throw invalid("entityType", "entityType: at most 32 characters");
  filter.entity_id = query_int(req.get_param_value("entityId"), "entityId");
  filter.from = query_int(req.get_param_value("from"), "from");
  filter.to = query_int(req.get_param_value("to"), "to");
  if (filter.from && filter.to && *filter.from > *filter.to) throw invalid("to", "to: must not be before from");
  auto result = audit.list(filter);
  return {200, page_json(result.items, result.total, [](const AuditEntry& e) { return to_json(e); })};
}

}  // namespace

void add_audit_routes(ApiRouter& router, AuditStore& audit) {
  router.add("GET", "audit", Access::kAdmin,
             [&audit](ApiRouter::RouteContext&, const common::http::Request& req) { return list_audit(audit, req); },
             paged({"userId", "entityType", "entityId", "from", "to"}));
}

}  // namespace cronwheel::admin
