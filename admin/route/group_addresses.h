#pragma once

#include <string_view>

#include "admin/model/records.h"

namespace cronwheel::admin {

// Whether `address` is one of `group`'s executor addresses (its address_list: the live
// registrations of an automatic group, the entered ones of a manual group). A group's fires go
// only to its own addresses, and so its access token too: an address asked for by a trigger
// (POST jobs/{id}/trigger's addressList) must pass this when the trigger is made and again when
// the fire is sent. Spellings that differ only in trailing slashes are the same address.
bool is_group_address(const Group& group, std::string_view address);

}  // namespace cronwheel::admin
