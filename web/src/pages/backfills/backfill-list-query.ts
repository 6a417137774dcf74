// The backfill list's place in the URL (job or workflow, state; page) and how it loads a page
// (GET backfills, offset pages). Shared by the page and its route, which starts the first page loading while the
// page's code downloads.
import type { LocationQuery } from 'vue-router'
import { api, call } from '@/api/client'
import type { ListQuery } from '@/composables/usePagedList'
import { queryInt, queryString } from '@/utils/query'
import { isBackfillState, type Backfill, type BackfillState } from './backfill-format'

export type BackfillFilters = { jobId?: number; workflowId?: number; state: BackfillState | '' }

export const backfillListQuery: ListQuery<BackfillFilters, Backfill> = {
  fromQuery(q: LocationQuery): BackfillFilters {
    const state = queryString(q, 'state')
    return {
      jobId: queryInt(q, 'jobId', undefined),
      workflowId: queryInt(q, 'workflowId', undefined),
      state: isBackfillState(state) ? state : '',
    }
  },
  toQuery: (f) => ({ jobId: f.jobId, workflowId: f.workflowId, state: f.state }),
  fetch: (f, p) =>
    call(
      api.GET('/backfills', {
        params: {
          query: { jobId: f.jobId, workflowId: f.workflowId, state: f.state || undefined, offset: p.offset, limit: p.limit },
        },
      }),
    ),
}
