#pragma once

#include <cstdint>

#include "admin/api/api_router.h"
#include "admin/api/auth_api.h"

namespace cronwheel::admin {

// The caller's own API tokens, for automation (`Authorization: Bearer <token>`):
//   POST   tokens       {"name","expiresInDays"?} → 201 {"id","name","token","userId",
//                       "createdAt","expiresAt",...}: the secret, shown this once; only its
//                       SHA-256 is stored. `expiresInDays` (1 to kMaxTokenLifetimeDays, as
//                       GitHub and GitLab offer) makes the token stop authenticating that many
//                       days from now; without it the token lives until revoked.
//   GET    tokens       {"items":[token...],"total"}: the caller's tokens, revoked ones with
//                       their revokedAt, expired ones with their expiresAt, never a secret.
//   DELETE tokens/{id}  revokes the caller's token → 204; 404 when it is not theirs.
// Names are 1 to 64 characters and unique among the user's tokens not revoked (409; an
// expired token keeps its name until revoked). A password change revokes every token of the
// user (UserStore). Audited by the TokenStore ("token.create", "token.revoke").
inline constexpr std::int64_t kMaxTokenLifetimeDays = 365;

void add_tokens_routes(ApiRouter& router, AuthServices& services);

}  // namespace cronwheel::admin
