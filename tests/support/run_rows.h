#pragma once

// Writing many run rows by SQL at once, for fixtures and benchmarks. Runs live in two tables
// (sql/0028_active_runs.sql): job_log_active for the runs not finished, job_log_finished for the
// others. The view job_log takes writes too, but one row at a time (its trigger), which is far
// too slow for millions.

#include <string>

namespace cronwheel::testing {

// One statement that inserts the rows `select` answers, each into the table its state belongs
// in. `select` answers the run columns `columns` (a comma-separated list naming `state`), by
// name; the rows take their ids from job_log_id_seq in the order `select` gives them within
// each table.
inline std::string insert_runs(const std::string& columns, const std::string& select) {
  const std::string unfinished = "state IN ('pending', 'sending', 'triggered')";
  return "WITH runs AS MATERIALIZED (" + select + "), active AS (INSERT INTO job_log_active (" + columns + ") SELECT " +
         columns + " FROM runs WHERE " + unfinished + ") INSERT INTO job_log_finished (" + columns + ") SELECT " +
         columns + " FROM runs WHERE NOT " + unfinished;
}

}  // namespace cronwheel::testing
