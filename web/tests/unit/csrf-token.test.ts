// The CSRF token's life in the API client: kept in memory, read from sessionStorage only when
// asked for before the session told it, and written there after the task that learnt it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

function fakeStorage(initial: Record<string, string> = {}) {
  const data = new Map(Object.entries(initial))
  return {
    data,
    getItem: vi.fn((k: string) => data.get(k) ?? null),
    setItem: vi.fn((k: string, v: string) => void data.set(k, v)),
    removeItem: vi.fn((k: string) => void data.delete(k)),
  }
}

// A fresh copy of the client, with `storage` as the page's sessionStorage.
async function freshClient(storage: ReturnType<typeof fakeStorage>) {
  vi.resetModules()
  vi.stubGlobal('sessionStorage', storage)
  return import('@/api/client')
}

describe('the CSRF token', () => {
  const fetchMock = vi.fn<(input: Request) => Promise<Response>>()
  beforeEach(() => {
    vi.useFakeTimers()
    fetchMock.mockReset()
    fetchMock.mockImplementation(async () => new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } }))
    vi.stubGlobal('fetch', fetchMock)
  })
  afterEach(() => {
    vi.useRealTimers()
    vi.unstubAllGlobals()
  })

  it('is not read from sessionStorage while the page loads', async () => {
    const storage = fakeStorage({ 'cronwheel.csrf': 'from-last-load' })
    const client = await freshClient(storage)
    await client.call(client.api.GET('/auth/me'))
    expect(storage.getItem).not.toHaveBeenCalled()
  })

  it('is read from sessionStorage for a change sent before the session told it', async () => {
    const client = await freshClient(fakeStorage({ 'cronwheel.csrf': 'from-last-load' }))
    await client.call(client.api.POST('/auth/logout'))
    expect(fetchMock.mock.calls[0]![0].headers.get('X-CSRF-Token')).toBe('from-last-load')
  })

  it('goes with changes as soon as it is set, and into sessionStorage after that task', async () => {
    const storage = fakeStorage()
    const client = await freshClient(storage)
    client.setCsrfToken('new-token')
    expect(storage.setItem).not.toHaveBeenCalled()
    await client.call(client.api.POST('/auth/logout'))
    expect(fetchMock.mock.calls[0]![0].headers.get('X-CSRF-Token')).toBe('new-token')
    vi.runAllTimers()
    expect(storage.data.get('cronwheel.csrf')).toBe('new-token')
    expect(storage.getItem).not.toHaveBeenCalled()
  })

  it('stored is the last one set', async () => {
    const storage = fakeStorage({ 'cronwheel.csrf': 'old' })
    const client = await freshClient(storage)
    client.setCsrfToken('first')
    client.setCsrfToken(null)
    vi.runAllTimers()
    expect(storage.data.has('cronwheel.csrf')).toBe(false)
    expect(storage.setItem).not.toHaveBeenCalled()
    client.setCsrfToken('again')
    vi.runAllTimers()
    expect(storage.data.get('cronwheel.csrf')).toBe('again')
    expect(client.getCsrfToken()).toBe('again')
  })

  it('is never sent with a read', async () => {
    const client = await freshClient(fakeStorage())
    client.setCsrfToken('token')
    await client.call(client.api.GET('/auth/me'))
    expect(fetchMock.mock.calls[0]![0].headers.get('X-CSRF-Token')).toBeNull()
  })
})
