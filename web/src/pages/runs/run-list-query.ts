// The run list's place in the URL (group, job, result, scheduled range; page and cursor) and how
// it loads a page (GET logs, keyset). Shared by the page and its route, which starts the first
// page loading while the page's code downloads (list-prefetch.ts).
import type { LocationQuery } from 'vue-router'
import { api, call } from '@/api/client'
import type { JobLog } from '@/api/types'
import type { ListQuery } from '@/composables/usePagedList'
import { queryInt, queryString } from '@/utils/query'
import { isRunStatusFilter, type RunStatusFilter } from './run-format'

export type RunFilters = { group?: number; jobId?: number; status: RunStatusFilter | ''; range: [number, number] | null }

export const runListQuery: ListQuery<RunFilters, JobLog> = {
  fromQuery(q: LocationQuery): RunFilters {
    const status = queryString(q, 'status')
    const from = queryInt(q, 'from', undefined)
    const to = queryInt(q, 'to', undefined)
    return {
      group: queryInt(q, 'group', undefined),
      jobId: queryInt(q, 'jobId', undefined),
      status: isRunStatusFilter(status) ? status : '',
      range: from !== undefined && to !== undefined ? [from, to] : null,
    }
  },
  toQuery: (f) => ({ group: f.group, jobId: f.jobId, status: f.status, from: f.range?.[0], to: f.range?.[1] }),
  keyset: true,
  fetch: (f, p) =>
    call(
      api.GET('/logs', {
        params: {
          query: {
            jobGroup: f.group,
            jobId: f.jobId,
            status: f.status || undefined,
            from: f.range?.[0],
            to: f.range?.[1],
            ...p,
          },
        },
      }),
    ),
}
