#pragma once

#include <string_view>

#include "admin/model/records.h"

// The executor groups resource (routes: add_group_routes in resource_routes.h).
namespace cronwheel::admin {

enum class GroupBodyKind {
  kCreate,  // POST groups: appName and title required
  kUpdate,  // PUT groups/{id}: fields left out keep their values; appName may only repeat
};

// Reads a group from a JSON request body onto `base` (Group{} for a create, the stored group
// for an update) and validates it, throwing HttpError 400 naming the field:
//  - appName: 4-64 characters, [A-Za-z0-9][A-Za-z0-9._-]*, never changed by an update;
//  - title: required, at most 64 characters;
//  - addressType: 0 (addresses from executor registrations) or 1 (entered by hand);
//  - addressList: http(s) URLs, no duplicates, required and only allowed for addressType 1
//    (an array, or XXL-JOB's comma-separated string); switching to 0 clears it;
//  - accessToken: write-only, at most 255 characters; "" removes the group's own token.
Group read_group_body(std::string_view body_text, Group base, GroupBodyKind kind);

}  // namespace cronwheel::admin
