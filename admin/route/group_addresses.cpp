#include "admin/route/group_addresses.h"

#include <algorithm>

namespace cronwheel::admin {
namespace {

std::string_view without_trailing_slashes(std::string_view address) {
  while (!address.empty() && address.back() == '/') address.remove_suffix(1);
  return address;
}

}  // namespace

bool is_group_address(const Group& group, std::string_view address) {
  const auto wanted = without_trailing_slashes(address);
  if (wanted.empty()) return false;
  return std::any_of(group.address_list.begin(), group.address_list.end(),
                     [&](const std::string& own) { return without_trailing_slashes(own) == wanted; });
}

}  // namespace cronwheel::admin
