import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { effectScope, nextTick, ref } from 'vue'
import { MAX_HANDLER_NAMES, MAX_SUGGESTIONS, handlerNames, matchHandlers, useGroupHandlers } from '@/pages/jobs/handler-suggestions'

const NAMES = ['echo', 'fail', 'http', 'reportHandler', 'sharding', 'shell', 'sleep', 'weeklyReport']

describe('matchHandlers', () => {
  it('suggests every name while nothing is typed', () => {
    expect(matchHandlers(NAMES, '')).toEqual(NAMES)
    expect(matchHandlers(NAMES, '   ')).toEqual(NAMES)
  })

  it('lists the names that start with what is typed before those that only contain it', () => {
    expect(matchHandlers(NAMES, 'sh')).toEqual(['sharding', 'shell'])
    expect(matchHandlers(NAMES, 'report')).toEqual(['reportHandler', 'weeklyReport'])
    expect(matchHandlers(NAMES, 'e')).toEqual(['echo', 'reportHandler', 'shell', 'sleep', 'weeklyReport'])
  })

  it('ignores case and the spaces around what is typed', () => {
    expect(matchHandlers(NAMES, ' REPORT ')).toEqual(['reportHandler', 'weeklyReport'])
    expect(matchHandlers(NAMES, 'eCh')).toEqual(['echo'])
  })

  it('suggests nothing for a name none contains, which stays the user’s to type', () => {
    expect(matchHandlers(NAMES, 'notOnlineYet')).toEqual([])
    expect(matchHandlers([], 'echo')).toEqual([])
    expect(matchHandlers([], '')).toEqual([])
  })

  it('suggests at most the limit, the names that start with what is typed kept first', () => {
    const many = Array.from({ length: 500 }, (_, i) => `job${String(i).padStart(3, '0')}`)
    expect(matchHandlers(many, '')).toHaveLength(MAX_SUGGESTIONS)
    expect(matchHandlers(many, 'job')).toEqual(many.slice(0, MAX_SUGGESTIONS))
    const mixed = [...Array.from({ length: 60 }, (_, i) => `a-x${i}`), ...Array.from({ length: 60 }, (_, i) => `x${i}`)]
    const got = matchHandlers(mixed, 'x', 10)
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => `x${i}`))
  })
})

describe('handlerNames', () => {
  it('keeps the names of a well-formed answer as they are', () => {
    expect(handlerNames(NAMES)).toEqual(NAMES)
  })

  it('sorts, drops repeats, and drops what a job could not take', () => {
    expect(handlerNames(['shell', 'echo', 'shell', '', '  ', 42, null, { name: 'x' }, 'x'.repeat(256), 'y'.repeat(255)])).toEqual([
      'echo',
      'shell',
      'y'.repeat(255),
    ])
  })

  it('answers no names for an answer that is not a list', () => {
    expect(handlerNames(undefined)).toEqual([])
    expect(handlerNames('echo')).toEqual([])
    expect(handlerNames({ handlers: ['echo'] })).toEqual([])
  })

  it('keeps at most MAX_HANDLER_NAMES names', () => {
    const huge = Array.from({ length: MAX_HANDLER_NAMES + 5 }, (_, i) => `h${i}`)
    expect(handlerNames(huge)).toHaveLength(MAX_HANDLER_NAMES)
  })
})

describe('useGroupHandlers', () => {
  // Each request waits until the test answers it.
  const pending: { url: string; answer: (status: number, body: unknown) => void }[] = []
  beforeEach(() => {
    pending.length = 0
    vi.stubGlobal('fetch', (input: Request) =>
      new Promise<Response>((resolve) =>
        pending.push({
          url: new URL(input.url).pathname,
          answer: (status, body) => resolve(new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })),
        }),
      ),
    )
  })
  afterEach(() => vi.unstubAllGlobals())

  // Lets the fetch's promise chain and the watcher run.
  const settle = async () => {
    for (let i = 0; i < 10; i++) await nextTick()
  }

  it('asks for the chosen group’s handlers, and again for each group chosen after it', async () => {
    const group = ref<number | undefined>(4)
    const scope = effectScope()
    const handlers = scope.run(() => useGroupHandlers(() => group.value))!
    await settle()
    expect(pending.map((p) => p.url)).toEqual(['/api/v1/groups/4/handlers'])
    pending[0]!.answer(200, { handlers: ['echo', 'shell'] })
    await settle()
    expect(handlers.value).toEqual(['echo', 'shell'])

    group.value = 9
    await settle()
    expect(handlers.value).toEqual([])
    expect(pending.map((p) => p.url)).toEqual(['/api/v1/groups/4/handlers', '/api/v1/groups/9/handlers'])
    pending[1]!.answer(200, { handlers: [] })
    await settle()
    expect(handlers.value).toEqual([])
    scope.stop()
  })

  it('drops the answer for a group no longer chosen, whenever it arrives', async () => {
    const group = ref<number | undefined>(1)
    const scope = effectScope()
    const handlers = scope.run(() => useGroupHandlers(() => group.value))!
    await settle()
    group.value = 2
    await settle()
    pending[1]!.answer(200, { handlers: ['fromTwo'] })
    await settle()
    pending[0]!.answer(200, { handlers: ['fromOne'] })
    await settle()
    expect(handlers.value).toEqual(['fromTwo'])
    scope.stop()
  })

  it('suggests nothing, and asks nothing, while no group is chosen', async () => {
    const scope = effectScope()
    const handlers = scope.run(() => useGroupHandlers(() => undefined))!
    await settle()
    expect(pending).toEqual([])
    expect(handlers.value).toEqual([])
    scope.stop()
  })

  it('suggests nothing when the group cannot be read', async () => {
    const scope = effectScope()
    const handlers = scope.run(() => useGroupHandlers(() => 3))!
    await settle()
    pending[0]!.answer(404, { error: { code: 'not_found', message: 'no such group' } })
    await settle()
    expect(handlers.value).toEqual([])
    scope.stop()
  })
})
