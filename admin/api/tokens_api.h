#pragma once

#include "admin/api/api_router.h"
#include "admin/api/auth_api.h"

namespace cronwheel::admin {

// The caller's own API tokens, for automation (`Authorization: Bearer <token>`):
//   POST   tokens       {"name"} → 201 {"id","name","token","userId","createdAt",...}: the
//                       secret, shown this once; only its SHA-256 is stored.
//   GET    tokens       {"items":[token...],"total"}: the caller's tokens, revoked ones with
//                       their revokedAt, never a secret.
//   DELETE tokens/{id}  revokes the caller's token → 204; 404 when it is not theirs.
// Names are 1 to 64 characters and unique per user (409). Audited by the TokenStore
// ("token.create", "token.revoke").
void add_tokens_routes(ApiRouter& router, AuthServices& services);

}  // namespace cronwheel::admin
