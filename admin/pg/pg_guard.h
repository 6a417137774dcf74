#pragma once

#include <string>
#include <string_view>

namespace cronwheel::admin::pg {

// The fire path's statements find a run (or a job) by its primary key alone, whatever the
// table's statistics say (docs/scheduling.md, "Plans that do not depend on statistics").
//
// A guarded transition reads "the row with this id, if it is in this state and owned by this
// node". Written as `WHERE id = $1 AND state = 'pending' AND admin_node = $2`, the planner may
// prove from the guard that a partial index (job_log_active_waiting_slot, job_log_unsettled_time,
// job_schedule_due, ...) holds the row, and on a table that has not been
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

// A batch statement's per-row values (the runs and what each is set to), as a MATERIALIZED CTE
// named `name` that the statement joins to its table by primary key: `FROM name WHERE t.id =
// name.run_id`. Its arrays come from `guard` too, so the planner cannot count them: it takes
// the values for a handful of rows and drives the join from them, each looking its run up by
// primary key, once. Given the arrays as literals (a custom plan), it counts them and, on a
// table it believes small, reads the whole table instead; given a second condition `t.id = ANY
// (ids)`, a generic plan put the values on the inner side of a nested loop and unnested them
// again for every run of the batch (a claim of 2,000 fires took 15 s instead of 0.2 s).
//
// batch_values_cte("claim", "c", "unnest(guard.ids, guard.addresses) AS c(run_id, address)") is
// "claim AS MATERIALIZED (SELECT c.* FROM guard, unnest(guard.ids, guard.addresses) AS
// c(run_id, address))": list it after guard_cte(...), whose values name the arrays.
inline std::string batch_values_cte(std::string_view name, std::string_view alias, std::string_view rows) {
  return std::string(name) + " AS MATERIALIZED (SELECT " + std::string(alias) + ".* FROM guard, " + std::string(rows) + ")";
}

}  // namespace cronwheel::admin::pg
