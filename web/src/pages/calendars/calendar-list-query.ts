// The calendar list's place in the URL (text; page) and how it loads a page (GET calendars, by
// offset, in name order). Shared by the page and its route, which starts the first page loading
// while the page's code downloads (list-prefetch.ts).
import type { LocationQuery } from 'vue-router'
import { api, call } from '@/api/client'
import type { ListQuery } from '@/composables/usePagedList'
import { queryString } from '@/utils/query'
import type { Calendar } from './calendar-model'

export type CalendarFilters = { text: string }

export const calendarListQuery: ListQuery<CalendarFilters, Calendar> = {
  fromQuery: (q: LocationQuery): CalendarFilters => ({ text: queryString(q, 'text') }),
  toQuery: (f) => ({ text: f.text }),
  fetch: (f, p) =>
    call(api.GET('/calendars', { params: { query: { text: f.text || undefined, offset: p.offset ?? 0, limit: p.limit } } })),
}
