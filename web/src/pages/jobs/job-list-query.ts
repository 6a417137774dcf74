// The job list's place in the URL (group, status, text; page and cursor) and how it loads a page
// (GET jobs, keyset). Shared by the page and its route, which starts the first page loading while
// the page's code downloads (list-prefetch.ts); kept free of components so it stays small.
import type { LocationQuery } from 'vue-router'
import { api, call } from '@/api/client'
import type { Job } from '@/api/types'
import type { ListQuery } from '@/composables/usePagedList'
import { queryInt, queryString } from '@/utils/query'

export type JobFilters = { group?: number; status: '' | '0' | '1'; text: string }

export const jobListQuery: ListQuery<JobFilters, Job> = {
  fromQuery(q: LocationQuery): JobFilters {
    const status = queryString(q, 'status')
    return {
      group: queryInt(q, 'group', undefined),
      status: status === '0' || status === '1' ? status : '',
      text: queryString(q, 'text'),
    }
  },
  toQuery: (f) => ({ group: f.group, status: f.status, text: f.text }),
  keyset: true,
  fetch: (f, p) =>
    call(
      api.GET('/jobs', {
        params: {
          query: {
            jobGroup: f.group,
            triggerStatus: f.status === '' ? undefined : (Number(f.status) as 0 | 1),
            text: f.text || undefined,
            ...p,
          },
        },
      }),
    ),
}
