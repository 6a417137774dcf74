import { describe, expect, it } from 'vitest'
import { i18n } from '@/i18n'
import { NAMED_FAILURES, bulkOutcome, bulkSummary, settleLimited } from '@/pages/jobs/job-bulk'
import type { Job } from '@/api/types'

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e))
const t = (key: string, named: Record<string, unknown>) => i18n.global.t(key, named)

describe('settleLimited', () => {
  it('never has more than the limit in flight, and runs every item', async () => {
    let inFlight = 0
    let most = 0
    const releases: (() => void)[] = []
    const started: number[] = []
    const done = settleLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      started.push(n)
      inFlight++
      most = Math.max(most, inFlight)
      await new Promise<void>((resolve) => releases.push(resolve))
      inFlight--
      return n * 10
    })
    // Let each waiting call finish in turn, in the order they started.
    for (let i = 0; i < 7; i++) {
      await Promise.resolve()
      await new Promise((r) => setTimeout(r, 0))
      expect(inFlight).toBeLessThanOrEqual(3)
      releases.shift()!()
    }
    const results = await done
    expect(most).toBe(3)
    expect(started.sort()).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : null))).toEqual([10, 20, 30, 40, 50, 60, 70])
  })

  it('answers each outcome in the items’ order, a failure stopping nothing', async () => {
    const results = await settleLimited(['a', 'bad', 'c'], 2, async (s) => {
      if (s === 'bad') throw new Error('refused')
      return s.toUpperCase()
    })
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'A' })
    expect(results[1]!.status).toBe('rejected')
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('refused'))
    expect(results[2]).toEqual({ status: 'fulfilled', value: 'C' })
  })

  it('answers nothing for no items, and takes a limit below one as one', async () => {
    expect(await settleLimited([], 4, async () => 1)).toEqual([])
    let inFlight = 0
    let most = 0
    await settleLimited([1, 2, 3], 0, async () => {
      inFlight++
      most = Math.max(most, inFlight)
      await new Promise((r) => setTimeout(r, 0))
      inFlight--
    })
    expect(most).toBe(1)
  })
})

const jobs: Job[] = [
  { id: 5, name: 'nightly', jobDesc: 'Nightly' },
  { id: 7, name: 'job-7', jobDesc: 'Seven' },
  { id: 9, jobDesc: 'Unnamed' },
]

describe('bulk summary', () => {
  it('counts what was done and names each failure with its reason', () => {
    const outcome = bulkOutcome(
      'start',
      jobs,
      [
        { status: 'fulfilled', value: {} },
        { status: 'rejected', reason: new Error('schedule has no next time') },
        { status: 'fulfilled', value: {} },
      ],
      reason,
    )
    expect(outcome).toEqual({ action: 'start', done: 2, failed: [{ name: 'job-7', reason: 'schedule has no next time' }] })
    expect(bulkSummary(outcome, t)).toBe('2 started, 1 failed: job-7: schedule has no next time')
  })

  it('says only what was done when nothing failed, and only the failures when nothing was', () => {
    expect(bulkSummary({ action: 'stop', done: 3, failed: [] }, t)).toBe('3 stopped')
    expect(bulkSummary({ action: 'delete', done: 0, failed: [{ name: '#9', reason: 'not found' }] }, t)).toBe(
      '1 failed: #9: not found',
    )
  })

  it('names a job without a name by its id', () => {
    const outcome = bulkOutcome('delete', jobs, [
      { status: 'fulfilled', value: undefined },
      { status: 'fulfilled', value: undefined },
      { status: 'rejected', reason: new Error('gone') },
    ], reason)
    expect(outcome.failed).toEqual([{ name: '#9', reason: 'gone' }])
  })

  it('names the first failures and counts the rest', () => {
    const failed = Array.from({ length: NAMED_FAILURES + 2 }, (_, i) => ({ name: `job-${i}`, reason: 'refused' }))
    const text = bulkSummary({ action: 'start', done: 0, failed }, t)
    expect(text).toContain(`${NAMED_FAILURES + 2} failed: job-0: refused; job-1: refused`)
    expect(text).toContain(`job-${NAMED_FAILURES - 1}: refused; 2 more`)
    expect(text).not.toContain(`job-${NAMED_FAILURES}:`)
  })
})
