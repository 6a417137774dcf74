#pragma once

// Port: deleting old runs (docs/operations.md "Retention"). Implemented by PgRetentionStore
// (admin/pg/pg_retention_store.h), faked by tests/support/fake_retention_store.h; both pass
// tests/support/retention_contract_tests.h. Thread-safe; StoreUnavailable when the store
// cannot be reached.

#include <cstdint>

#include "admin/model/store_errors.h"

namespace cronwheel::admin {

class RetentionStore {
 public:
  virtual ~RetentionStore() = default;

  // In one short transaction, deletes at most `batch` runs scheduled before `before` (epoch
  // ms), oldest first, and returns how many it deleted. Only finished runs go: succeeded,
  // failed, lost or cancelled — never a fire that is pending, being sent or running — and not
  // a run whose alarm is still to be decided or being sent (alarm_status 0 or -1 on a run that
  // ended badly). Runs another node is deleting at the same moment are skipped, not waited for.
  // The run report (the dashboard's counts) is not touched.
  virtual std::int64_t delete_runs_before(std::int64_t before, int batch) = 0;

  // The same for workflow runs (docs/workflows.md) scheduled before `before`, with their nodes'
  // records: only runs that ended (succeeded, failed, cancelled, skipped, timed out), and not a
  // run whose alarm is still to be decided or being sent. Their nodes' runs are runs like any
  // other, deleted by delete_runs_before. Returns how many workflow runs it deleted.
  virtual std::int64_t delete_workflow_runs_before(std::int64_t before, int batch) = 0;
};

}  // namespace cronwheel::admin
