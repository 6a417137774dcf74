import { describe, expect, it } from 'vitest'
import {
  backfillProgress,
  backfillTagType,
  canCancelBackfill,
  isBackfillState,
  runCounts,
} from '@/pages/backfills/backfill-format'

describe('backfill formatting', () => {
  it('knows the states the API answers', () => {
    expect(['running', 'done', 'cancelled'].every(isBackfillState)).toBe(true)
    expect(isBackfillState('pending')).toBe(false)
    expect(isBackfillState('')).toBe(false)
    expect(backfillTagType('running')).toBe('primary')
    expect(backfillTagType('done')).toBe('success')
    expect(backfillTagType('cancelled')).toBe('info')
  })

  it('lets only a running backfill be cancelled', () => {
    expect(canCancelBackfill({ state: 'running' })).toBe(true)
    expect(canCancelBackfill({ state: 'done' })).toBe(false)
    expect(canCancelBackfill({ state: 'cancelled' })).toBe(false)
    expect(canCancelBackfill(null)).toBe(false)
  })

  it('counts instants written and skipped toward the range’s total', () => {
    expect(backfillProgress({ state: 'running', total: 60, written: 10, skipped: 5 })).toEqual({ handled: 15, total: 60, percent: 25 })
    expect(backfillProgress({ state: 'done', total: 3, written: 2, skipped: 1 })).toEqual({ handled: 3, total: 3, percent: 100 })
    // Rounded down: a backfill one instant short is not shown complete.
    expect(backfillProgress({ state: 'running', total: 1000, written: 999, skipped: 0 }).percent).toBe(99)
  })

  it('never shows more than the whole range, and an empty range as complete once it ended', () => {
    expect(backfillProgress({ state: 'done', total: 2, written: 3, skipped: 0 })).toEqual({ handled: 2, total: 2, percent: 100 })
    expect(backfillProgress({ state: 'done', total: 0, written: 0, skipped: 0 }).percent).toBe(100)
    expect(backfillProgress({ state: 'running', total: 0 }).percent).toBe(0)
    expect(backfillProgress({}).handled).toBe(0)
  })

  it('lists the run states it has runs in, in a fixed order', () => {
    expect(runCounts({ pending: 2, running: 1, succeeded: 5, failed: 0, cancelled: 0 })).toEqual([
      { state: 'pending', count: 2 },
      { state: 'running', count: 1 },
      { state: 'succeeded', count: 5 },
    ])
    expect(runCounts({ cancelled: 3, failed: 1 })).toEqual([
      { state: 'failed', count: 1 },
      { state: 'cancelled', count: 3 },
    ])
    expect(runCounts(undefined)).toEqual([])
  })
})
