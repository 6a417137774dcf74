// One server-side paged list: its filters, page and page size kept in the URL query (so a reload,
// a shared link and back/forward show the same), a page loaded from the API whenever the query
// changes, the loading and error state, and what the pager shows.
//
// The page says how its filters read from and write to the query, and how to load a page; the
// rest is here. A load answered after a newer one was started is dropped, so a slow answer never
// overwrites a newer list.
//
// A route may start loading its list's first page before the page's code is in
// (list-prefetch.ts); the first load then takes that answer.
//
// Keyset lists (GET jobs, GET logs: openapi.yaml KeyedPage) also move to the next or previous
// page by the cursors of the page shown (`after` / `before` in the query) instead of an offset,
// which the admin reads without counting the rows before it. Any other jump is by offset.
import { computed, ref, shallowRef, watch, type ComputedRef, type Ref } from 'vue'
import { useRouter, type LocationQuery, type Router } from 'vue-router'
import { compactQuery, queryInt, queryString } from '@/utils/query'
import { takePrefetchedList } from './list-prefetch'

export const DEFAULT_PAGE_SIZE = 20

/** Which page to load: by offset, or (keyset lists) right after or before a cursor. */
export interface PageRequest {
  /** Undefined when the page is asked for by cursor. */
  offset?: number
  limit: number
  after?: string
  before?: string
}

/** A page as the admin answers it (openapi.yaml Page, KeyedPage). */
export interface PageAnswer<T> {
  items?: T[]
  total: number
  /** False: `total` is a lower bound. Lists that always count exactly leave it out. */
  totalExact?: boolean
  nextCursor?: string | null
  prevCursor?: string | null
}

/** The filters as query values; empty values are left out of the URL. */
export type QueryValues = Record<string, string | number | undefined | null>

/** How a list reads its place from the URL and loads a page: what a route's `meta.list` names
 * for list-prefetch.ts, and the core of PagedListOptions. */
export interface ListQuery<F extends object, T> {
  /** The filters a URL query names; absent or malformed values read as "no filter". A list
   * without filters leaves this and toQuery out. */
  fromQuery?: (query: LocationQuery) => F
  /** The filters as query values (the inverse of fromQuery). */
  toQuery?: (filters: F) => QueryValues
  /** Loads one page with these filters. */
  fetch: (filters: F, page: PageRequest) => Promise<PageAnswer<T>>
  /** Pages by the answer's cursors when moving one page forward or back. */
  keyset?: boolean
}

/** The page a URL query names, loaded as `list` loads pages. */
export function loadFromQuery<F extends object, T>(list: ListQuery<F, T>, query: LocationQuery): Promise<PageAnswer<T>> {
  const pos = readPosition(query, list.fromQuery ?? (() => ({}) as F), list.keyset ?? false)
  return list.fetch(pos.filters, pageRequest(pos))
}

export interface PagedListOptions<F extends object, T> extends ListQuery<F, T> {
  /** Called with every page shown. */
  onLoaded?: (items: T[]) => void
  /** The router whose current query holds the list's state (default: the app's). */
  router?: Router
}

/** What a list's table and pager show of it, whatever its filters (PagedTable, ListTable). */
export interface PagedListView<T = object> {
  items: Readonly<Ref<T[]>>
  loading: Readonly<Ref<boolean>>
  error: Readonly<Ref<unknown>>
  filtered: ComputedRef<boolean>
  pager: ComputedRef<{ total: number; exact: boolean; page: number; size: number }>
  load: () => Promise<void>
  setPage: (to: { page: number; size?: number }) => unknown
}

/** The list's place as the URL query holds it. */
export interface ListPosition<F> {
  filters: F
  page: number
  size: number
  after?: string
  before?: string
}

const PAGE_KEYS = ['page', 'size', 'after', 'before'] as const

/** Reads a list's position from a URL query. */
export function readPosition<F>(query: LocationQuery, fromQuery: (q: LocationQuery) => F, keyset = false): ListPosition<F> {
  const pos: ListPosition<F> = {
    filters: fromQuery(query),
    page: Math.max(1, queryInt(query, 'page', 1)),
    size: Math.max(1, queryInt(query, 'size', DEFAULT_PAGE_SIZE)),
  }
  if (keyset) {
    const after = queryString(query, 'after')
    const before = queryString(query, 'before')
    if (after) pos.after = after
    else if (before) pos.before = before
  }
  return pos
}

/** A list's position as a URL query: defaults and empty values left out. */
export function writePosition<F>(pos: ListPosition<F>, toQuery: (f: F) => QueryValues) {
  const values = toQuery(pos.filters)
  for (const k of PAGE_KEYS) {
    if (k in values) throw new Error(`a list filter may not be named ${k}`)
  }
  return compactQuery(
    { ...values, page: pos.page, size: pos.size, after: pos.after, before: pos.before },
    { page: 1, size: DEFAULT_PAGE_SIZE },
  )
}

/** The request for a position: a cursor when there is one, else an offset. */
export function pageRequest(pos: ListPosition<unknown>): PageRequest {
  if (pos.after) return { limit: pos.size, after: pos.after }
  if (pos.before) return { limit: pos.size, before: pos.before }
  return { offset: (pos.page - 1) * pos.size, limit: pos.size }
}

export function usePagedList<F extends object, T>(options: PagedListOptions<F, T>) {
  const router = options.router ?? useRouter()
  const fromQuery = options.fromQuery ?? (() => ({}) as F)
  const toQuery = options.toQuery ?? (() => ({}))
  const keyset = options.keyset ?? false
  // The list answers only to its own route: leaving it changes the query too.
  const path = router.currentRoute.value.path

  let applied = readPosition(router.currentRoute.value.query, fromQuery, keyset)
  /** The filters as the form shows them: edited freely, applied by setFilters. */
  const filters = ref({ ...applied.filters }) as Ref<F>
  const page = ref(applied.page)
  const size = ref(applied.size)
  const appliedFilters = shallowRef(applied.filters)

  // Deep: a page may update a row in place (a job switched on or off).
  const items = ref([]) as Ref<T[]>
  const total = ref(0)
  const totalExact = ref(true)
  const nextCursor = ref<string | null>(null)
  const prevCursor = ref<string | null>(null)
  const loading = ref(false)
  const error = shallowRef<unknown>(null)

  function show(res: PageAnswer<T>) {
    items.value = res.items ?? []
    total.value = res.total
    totalExact.value = res.totalExact ?? true
    nextCursor.value = res.nextCursor ?? null
    prevCursor.value = res.prevCursor ?? null
    error.value = null
    options.onLoaded?.(items.value)
  }

  let seq = 0
  /**
   * Loads the page the URL names. Quiet: no loading mark, and a failure leaves the list as it is.
   * `fullPath`: the URL it is loaded for, whose page the router may have started loading already
   * (list-prefetch.ts); an answer already in is shown at once, before the page first renders.
   */
  async function load(opts: { quiet?: boolean; fullPath?: string } = {}) {
    const mine = ++seq
    const early = opts.fullPath === undefined ? null : takePrefetchedList<T>(opts.fullPath)
    if (early?.settled?.ok) {
      show(early.settled.value)
      loading.value = false
      return
    }
    if (!opts.quiet) loading.value = true
    const pos = applied
    try {
      const res = await (early ? early.answer : options.fetch(pos.filters, pageRequest(pos)))
      if (mine !== seq) return
      show(res)
    } catch (e) {
      if (mine === seq && !opts.quiet) error.value = e
    } finally {
      if (mine === seq) loading.value = false
    }
  }

  function go(pos: ListPosition<F>) {
    return router.push({ query: writePosition(pos, toQuery) })
  }

  /** Applies the filters as the form shows them, with `changes`, from the first page. */
  function setFilters(changes: Partial<F> = {}) {
    return go({ filters: { ...filters.value, ...changes }, page: 1, size: size.value })
  }

  /** What the pager picked: a page, or a page size (from page 1). Filters stay as applied. */
  function setPage(to: { page: number; size?: number }) {
    const pos: ListPosition<F> = { filters: applied.filters, page: to.page, size: to.size ?? size.value }
    if (keyset && pos.size === size.value && pos.page > 1) {
      if (pos.page === page.value + 1 && nextCursor.value) pos.after = nextCursor.value
      else if (pos.page === page.value - 1 && prevCursor.value) pos.before = prevCursor.value
    }
    return go(pos)
  }

  watch(
    () => router.currentRoute.value,
    (route) => {
      if (route.path !== path) return
      applied = readPosition(route.query, fromQuery, keyset)
      filters.value = fromQuery(route.query)
      appliedFilters.value = applied.filters
      page.value = applied.page
      size.value = applied.size
      // The cursors belong to the page they came with: until the new one is in, the pager
      // moves by offset.
      nextCursor.value = null
      prevCursor.value = null
      void load({ fullPath: route.fullPath })
    },
    { immediate: true },
  )

  /** Whether the list shown is filtered (for "no results" rather than "empty"). */
  const filtered = computed(() => Object.values(compactQuery(toQuery(appliedFilters.value))).length > 0)
  /** What ListPagination shows. */
  const pager = computed(() => ({ total: total.value, exact: totalExact.value, page: page.value, size: size.value }))

  return {
    filters,
    appliedFilters,
    page,
    size,
    items,
    total,
    totalExact,
    nextCursor,
    prevCursor,
    loading,
    error,
    filtered,
    pager,
    load,
    setFilters,
    setPage,
  }
}
