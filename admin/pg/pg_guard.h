#pragma once

#include <string>
#include <string_view>

namespace cronwheel::admin::pg {

// The fire path's statements find a run (or a job) by its primary key alone, whatever the
// table's statistics say (docs/scheduling.md, "Plans that do not depend on statistics").
//
// A guarded transition reads "the row with this id, if it is in this state and owned by this
// node". Written as `WHERE id = $1 AND state = 'pending' AND admin_node = $2`, the planner may
// prove from the guard that a partial index (job_log_pending, job_log_sending,
// job_log_unsettled_time, job_info_due, ...) holds the row, and on a table that has not been
// analysed since those indexes were created empty, such an index looks empty and cheaper than
// the primary key: the lookup then reads every pending run of the node to find one. So every
// value a guard compares the row with comes from this one-row MATERIALIZED CTE named `guard`:
// the planner sees no constant in the guards, no partial index predicate can be proven from
// them, and the only way into the table left is the id. The guards themselves are unchanged
// (they are still conditions on the row being updated, re-checked on its newest version).
//
// guard_cte("$1::bigint AS run_id, 'pending'::text AS run_state") is
// "guard AS MATERIALIZED (SELECT $1::bigint AS run_id, 'pending'::text AS run_state)", to be
// listed in the statement's WITH and FROM. Name its columns apart from the table's.
inline std::string guard_cte(std::string_view values) {
  return "guard AS MATERIALIZED (SELECT " + std::string(values) + ")";
}

}  // namespace cronwheel::admin::pg
