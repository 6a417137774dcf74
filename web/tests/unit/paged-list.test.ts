import { afterEach, describe, expect, it } from 'vitest'
import { effectScope, nextTick } from 'vue'
import { createMemoryHistory, createRouter, type LocationQuery, type Router } from 'vue-router'
import { queryInt, queryString } from '@/utils/query'
import {
  pageRequest,
  readPosition,
  usePagedList,
  writePosition,
  type PageAnswer,
  type PageRequest,
} from '@/composables/usePagedList'
import { prefetchList, takePrefetchedList } from '@/composables/list-prefetch'

type Filters = { text: string; group?: number }
const fromQuery = (q: LocationQuery): Filters => ({ text: queryString(q, 'text'), group: queryInt(q, 'group', undefined) })
const toQuery = (f: Filters) => ({ text: f.text, group: f.group })

// A fetch whose answers the test hands out, in any order.
function fakeApi() {
  const calls: { filters: Filters; page: PageRequest; resolve: (a: PageAnswer<string>) => void; reject: (e: unknown) => void }[] = []
  const fetch = (filters: Filters, page: PageRequest) =>
    new Promise<PageAnswer<string>>((resolve, reject) => calls.push({ filters, page, resolve, reject }))
  return { calls, fetch }
}

async function memoryRouter(at: string): Promise<Router> {
  const view = { render: () => null }
  const router = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/list', component: view },
      { path: '/other', component: view },
    ],
  })
  await router.push(at)
  await router.isReady()
  return router
}

// Lets the router's navigation, the route watcher and pending answers run.
async function settle() {
  for (let i = 0; i < 5; i++) {
    await Promise.resolve()
    await nextTick()
  }
}

const scopes: ReturnType<typeof effectScope>[] = []
afterEach(() => scopes.splice(0).forEach((s) => s.stop()))

function mount(router: Router, fetch: ReturnType<typeof fakeApi>['fetch'], keyset = false) {
  const scope = effectScope()
  scopes.push(scope)
  return scope.run(() => usePagedList({ fromQuery, toQuery, fetch, keyset, router }))!
}

describe('list position in the URL', () => {
  it('reads back what it writes, leaving defaults and empty filters out', () => {
    const pos = { filters: { text: 'nightly', group: 3 }, page: 4, size: 50 }
    const query = writePosition(pos, toQuery)
    expect(query).toEqual({ text: 'nightly', group: '3', page: '4', size: '50' })
    expect(readPosition(query as LocationQuery, fromQuery)).toEqual(pos)

    const plain = writePosition({ filters: { text: '' }, page: 1, size: 20 }, toQuery)
    expect(plain).toEqual({})
    expect(readPosition({}, fromQuery)).toEqual({ filters: { text: '', group: undefined }, page: 1, size: 20 })
  })

  it('keeps a cursor only for keyset lists, and never both', () => {
    const query = { page: '3', after: '1700000000000.42', before: '1.1' }
    expect(readPosition(query, fromQuery, true)).toMatchObject({ page: 3, after: '1700000000000.42' })
    expect(readPosition(query, fromQuery, true).before).toBeUndefined()
    expect(readPosition(query, fromQuery, false).after).toBeUndefined()
  })

  it('turns malformed page numbers into the first page', () => {
    expect(readPosition({ page: '-2', size: 'x' }, fromQuery)).toMatchObject({ page: 1, size: 20 })
    expect(readPosition({ page: '0', size: '0' }, fromQuery)).toMatchObject({ page: 1, size: 1 })
  })

  it('refuses a filter named like the pager', () => {
    expect(() => writePosition({ filters: {}, page: 1, size: 20 }, () => ({ page: 2 }))).toThrow(/page/)
  })

  it('asks by cursor when there is one, else by offset', () => {
    expect(pageRequest({ filters: {}, page: 3, size: 20 })).toEqual({ offset: 40, limit: 20 })
    expect(pageRequest({ filters: {}, page: 3, size: 20, after: 'a' })).toEqual({ limit: 20, after: 'a' })
    expect(pageRequest({ filters: {}, page: 2, size: 10, before: 'b' })).toEqual({ limit: 10, before: 'b' })
  })
})

describe('usePagedList', () => {
  it('loads the page the URL names, and shows it', async () => {
    const router = await memoryRouter('/list?text=db&group=2&page=3&size=10')
    const api = fakeApi()
    const list = mount(router, api.fetch)
    expect(list.filters.value).toEqual({ text: 'db', group: 2 })
    expect(list.pager.value).toMatchObject({ page: 3, size: 10 })
    expect(list.loading.value).toBe(true)
    expect(api.calls).toHaveLength(1)
    expect(api.calls[0].filters).toEqual({ text: 'db', group: 2 })
    expect(api.calls[0].page).toEqual({ offset: 20, limit: 10 })

    api.calls[0].resolve({ items: ['a', 'b'], total: 22 })
    await settle()
    expect(list.items.value).toEqual(['a', 'b'])
    expect(list.pager.value).toEqual({ total: 22, exact: true, page: 3, size: 10 })
    expect(list.loading.value).toBe(false)
    expect(list.filtered.value).toBe(true)
  })

  it('puts applied filters in the URL from page 1, and the pager keeps them', async () => {
    const router = await memoryRouter('/list?page=4')
    const api = fakeApi()
    const list = mount(router, api.fetch)
    expect(list.filtered.value).toBe(false)

    list.filters.value.text = 'backup'
    await list.setFilters({ group: 7 })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'backup', group: '7' })
    expect(api.calls.at(-1)!.filters).toEqual({ text: 'backup', group: 7 })
    expect(api.calls.at(-1)!.page).toEqual({ offset: 0, limit: 20 })
    expect(list.filtered.value).toBe(true)

    // Typed but not applied: the pager pages the list as shown.
    list.filters.value.text = 'half-typed'
    await list.setPage({ page: 2 })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'backup', group: '7', page: '2' })
    // A new size starts again at page 1.
    await list.setPage({ page: 1, size: 50 })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'backup', group: '7', size: '50' })
    expect(api.calls.at(-1)!.page).toEqual({ offset: 0, limit: 50 })
  })

  it('never lets an answer to an older request overwrite a newer one', async () => {
    const router = await memoryRouter('/list')
    const api = fakeApi()
    const list = mount(router, api.fetch)
    await list.setPage({ page: 2 })
    await settle()
    expect(api.calls).toHaveLength(2)

    // The newer request is answered first, the older one after it.
    api.calls[1].resolve({ items: ['page 2'], total: 40 })
    await settle()
    expect(list.items.value).toEqual(['page 2'])
    expect(list.loading.value).toBe(false)
    api.calls[0].resolve({ items: ['page 1'], total: 39 })
    await settle()
    expect(list.items.value).toEqual(['page 2'])
    expect(list.total.value).toBe(40)

    // Likewise a late failure of an older request is not shown, nor does it end the loading mark.
    await list.setPage({ page: 3 })
    await settle()
    await list.setPage({ page: 4 })
    await settle()
    api.calls[2].reject(new Error('late'))
    await settle()
    expect(list.error.value).toBeNull()
    expect(list.loading.value).toBe(true)
    api.calls[3].resolve({ items: ['page 4'], total: 80 })
    await settle()
    expect(list.items.value).toEqual(['page 4'])
    expect(list.loading.value).toBe(false)
  })

  it('shows a failure until a load succeeds; a quiet load that fails shows nothing', async () => {
    const router = await memoryRouter('/list')
    const api = fakeApi()
    const list = mount(router, api.fetch)
    const boom = new Error('503')
    api.calls[0].reject(boom)
    await settle()
    expect(list.error.value).toBe(boom)
    expect(list.loading.value).toBe(false)

    void list.load()
    api.calls[1].resolve({ items: ['x'], total: 1 })
    await settle()
    expect(list.error.value).toBeNull()

    void list.load({ quiet: true })
    expect(list.loading.value).toBe(false)
    api.calls[2].reject(new Error('blip'))
    await settle()
    expect(list.error.value).toBeNull()
    expect(list.items.value).toEqual(['x'])
  })

  it('follows back and forward, and stops listening once its route is left', async () => {
    const router = await memoryRouter('/list?text=a')
    const api = fakeApi()
    const list = mount(router, api.fetch)
    await list.setFilters({ text: 'b' })
    await settle()
    router.back()
    await new Promise((r) => setTimeout(r, 10))
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'a' })
    expect(list.filters.value.text).toBe('a')
    expect(api.calls.at(-1)!.filters.text).toBe('a')

    const before = api.calls.length
    await router.push('/other?text=zzz')
    await settle()
    expect(api.calls).toHaveLength(before)
    expect(list.filters.value.text).toBe('a')
  })

  it('moves one page by the cursors of a keyset list, and jumps by offset', async () => {
    const router = await memoryRouter('/list?text=a')
    const api = fakeApi()
    const list = mount(router, api.fetch, true)
    api.calls[0].resolve({ items: ['1'], total: 10_000, totalExact: false, nextCursor: '900.9', prevCursor: null })
    await settle()
    expect(list.pager.value.exact).toBe(false)

    await list.setPage({ page: 2 })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'a', page: '2', after: '900.9' })
    expect(api.calls[1].page).toEqual({ limit: 20, after: '900.9' })
    api.calls[1].resolve({ items: ['2'], total: 10_000, totalExact: false, nextCursor: '800.8', prevCursor: '899.9' })
    await settle()

    await list.setPage({ page: 3 })
    await settle()
    api.calls[2].resolve({ items: ['3'], total: 10_000, totalExact: false, nextCursor: '700.7', prevCursor: '799.8' })
    await settle()
    await list.setPage({ page: 2 })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'a', page: '2', before: '799.8' })
    expect(api.calls[3].page).toEqual({ limit: 20, before: '799.8' })
    api.calls[3].resolve({ items: ['2'], total: 10_000, totalExact: false, nextCursor: '800.8', prevCursor: '899.9' })
    await settle()

    // The first page, another page, another size, or new filters: by offset, no cursor.
    await list.setPage({ page: 1 })
    await settle()
    expect(api.calls[4].page).toEqual({ offset: 0, limit: 20 })
    api.calls[4].resolve({ items: ['1'], total: 10_000, totalExact: false, nextCursor: '900.9', prevCursor: null })
    await settle()
    await list.setPage({ page: 40 })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'a', page: '40' })
    expect(api.calls[5].page).toEqual({ offset: 780, limit: 20 })
    await list.setFilters({ text: 'b' })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ text: 'b' })
  })

  it('moves by offset while the page it has cursors of is no longer the one asked for', async () => {
    const router = await memoryRouter('/list')
    const api = fakeApi()
    const list = mount(router, api.fetch, true)
    api.calls[0].resolve({ items: ['1'], total: 100, nextCursor: '900.9', prevCursor: null })
    await settle()
    await list.setPage({ page: 2 })
    await settle()
    // Page 2 not answered yet: page 1's cursor would show page 2 again under the name page 3.
    await list.setPage({ page: 3 })
    await settle()
    expect(router.currentRoute.value.query).toEqual({ page: '3' })
    expect(api.calls[2].page).toEqual({ offset: 40, limit: 20 })
  })

  it('reloads a cursor page from the URL as it was', async () => {
    const router = await memoryRouter('/list?page=5&after=500.5')
    const api = fakeApi()
    mount(router, api.fetch, true)
    expect(api.calls[0].page).toEqual({ limit: 20, after: '500.5' })
  })
})

describe('a list page started by its route', () => {
  it('shows the answer already in at once, without asking again', async () => {
    const api = fakeApi()
    prefetchList('/list?text=a', () => Promise.resolve({ items: ['early'], total: 1 }))
    await settle()
    const router = await memoryRouter('/list?text=a')
    const list = mount(router, api.fetch)
    // Set before any await: the page's first render shows the rows.
    expect(list.items.value).toEqual(['early'])
    expect(list.loading.value).toBe(false)
    await settle()
    expect(api.calls).toHaveLength(0)
  })

  it('waits for an answer still on its way instead of asking again', async () => {
    const api = fakeApi()
    let answer: (a: PageAnswer<string>) => void = () => {}
    prefetchList('/list?text=b', () => new Promise((resolve) => (answer = resolve)))
    const router = await memoryRouter('/list?text=b')
    const list = mount(router, api.fetch)
    expect(list.loading.value).toBe(true)
    answer({ items: ['later'], total: 1 })
    await settle()
    expect(list.items.value).toEqual(['later'])
    expect(api.calls).toHaveLength(0)
  })

  it('asks itself when the answer was started for another address, and takes an answer once', async () => {
    const api = fakeApi()
    prefetchList('/list?text=other', () => Promise.resolve({ items: ['wrong'], total: 1 }))
    await settle()
    const router = await memoryRouter('/list?text=c')
    const list = mount(router, api.fetch)
    expect(api.calls).toHaveLength(1)
    api.calls[0]!.resolve({ items: ['own'], total: 1 })
    await settle()
    expect(list.items.value).toEqual(['own'])

    prefetchList('/list?text=d', () => Promise.resolve({ items: ['once'], total: 1 }))
    await settle()
    expect(takePrefetchedList('/list?text=d')?.settled).toEqual({ ok: true, value: { items: ['once'], total: 1 } })
    expect(takePrefetchedList('/list?text=d')).toBeNull()
  })

  it('shows the failure of an answer started for it', async () => {
    const api = fakeApi()
    prefetchList('/list?text=e', () => Promise.reject(new Error('down')))
    await settle()
    const router = await memoryRouter('/list?text=e')
    const list = mount(router, api.fetch)
    await settle()
    expect((list.error.value as Error).message).toBe('down')
    expect(api.calls).toHaveLength(0)
  })
})
