// The workflow list's place in the URL (group, text; page) and how it loads a page (GET
// workflows, by offset). Shared by the page and its route, which starts the first page loading
// while the page's code downloads (list-prefetch.ts).
import type { LocationQuery } from 'vue-router'
import { api, call, type Schemas } from '@/api/client'
import type { ListQuery } from '@/composables/usePagedList'
import { queryInt, queryString } from '@/utils/query'

export type Workflow = Schemas['Workflow']
export type WorkflowFilters = { group?: number; text: string }

export const workflowListQuery: ListQuery<WorkflowFilters, Workflow> = {
  fromQuery: (q: LocationQuery): WorkflowFilters => ({ group: queryInt(q, 'group', undefined), text: queryString(q, 'text') }),
  toQuery: (f) => ({ group: f.group, text: f.text }),
  fetch: (f, p) =>
    call(
      api.GET('/workflows', {
        params: { query: { jobGroup: f.group, text: f.text || undefined, offset: p.offset ?? 0, limit: p.limit } },
      }),
    ),
}
