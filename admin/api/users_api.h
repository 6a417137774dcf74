#pragma once

#include "admin/api/api_router.h"
#include "admin/api/auth_api.h"

namespace cronwheel::admin {

// User administration, for admins only:
//   GET    users               {"items":[user...],"total"}
//   GET    users/{id}          user
//   POST   users               {"username","password","role"?,"groups"?} → 201 user
//   PUT    users/{id}          {"role"?,"groups"?,"password"?} → user ("username" may be sent
//                              only unchanged: names are immutable)
//   DELETE users/{id}          → 204
// A user is {"id","username","role","groups","createdAt","updatedAt"}; the password is
// write-only. `role` is "admin" or "normal" (default); `groups` are the ids of the groups a
// normal user may see and act on, each of which must exist.
//
// Rules: an admin neither deletes their own user nor changes their own role (409), and nobody
// deletes or demotes the last admin (409 on role: the UserStore's rule, checked in the same
// transaction as the change, so two admins demoting each other at once leave one admin). A
// password set here ends every session of that user (but the one of an admin setting their
// own) and revokes all their API tokens. Each change is audited by the UserStore
// ("user.create", "user.update", "user.password", "user.delete", "token.revoke").
void add_users_routes(ApiRouter& router, AuthServices& services);

}  // namespace cronwheel::admin
