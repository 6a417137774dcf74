#pragma once

#include <string_view>
#include <vector>

namespace cronwheel::admin {

// One numbered schema migration (sql/NNNN_description.sql).
struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

// The migrations built into this binary, in version order, versions 1..N without gaps.
const std::vector<Migration>& embedded_migrations();

}  // namespace cronwheel::admin
