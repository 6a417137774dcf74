// The workflow run list's place in the URL (workflow, state; page and cursor) and how it loads
// a page (GET workflow-runs, keyset like the job runs). Shared by the page and its route.
import type { LocationQuery } from 'vue-router'
import { api, call } from '@/api/client'
import type { ListQuery } from '@/composables/usePagedList'
import { queryInt, queryString } from '@/utils/query'
import { isWorkflowRunState, type WorkflowRun, type WorkflowRunState } from './workflow-run-format'

export type WorkflowRunFilters = { workflowId?: number; state: WorkflowRunState | '' }

export const workflowRunListQuery: ListQuery<WorkflowRunFilters, WorkflowRun> = {
  fromQuery(q: LocationQuery): WorkflowRunFilters {
    const state = queryString(q, 'state')
    return { workflowId: queryInt(q, 'workflowId', undefined), state: isWorkflowRunState(state) ? state : '' }
  },
  toQuery: (f) => ({ workflowId: f.workflowId, state: f.state }),
  keyset: true,
  fetch: (f, p) =>
    call(
      api.GET('/workflow-runs', {
        params: { query: { workflowId: f.workflowId, state: f.state || undefined, ...p } },
      }),
    ),
}
