import { describe, expect, it } from 'vitest'
import { RETRY_IDLE_POLL_MS, RETRY_POLL_MS, pendingCountdown, retryRefreshMs } from '@/pages/runs/run-retry'

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0)

describe('a failed run’s retry', () => {
  it('counts down to its due time in whole seconds, rounded up, while it waits', () => {
    expect(pendingCountdown({ id: 7, scheduledTime: NOW + 12_000, state: 'pending' }, NOW)).toEqual({ late: false, ms: 12_000 })
    expect(pendingCountdown({ id: 7, scheduledTime: NOW + 11_200, state: 'pending' }, NOW)).toEqual({ late: false, ms: 12_000 })
    expect(pendingCountdown({ id: 7, scheduledTime: NOW + 1, state: 'pending' }, NOW)).toEqual({ late: false, ms: 1000 })
  })

  it('says how late it is once its time has passed and it still waits', () => {
    expect(pendingCountdown({ id: 7, scheduledTime: NOW, state: 'pending' }, NOW)).toEqual({ late: true, ms: 0 })
    expect(pendingCountdown({ id: 7, scheduledTime: NOW - 3_900, state: 'pending' }, NOW)).toEqual({ late: true, ms: 3000 })
  })

  it('has no countdown once sent, ended, or when there is none', () => {
    for (const state of ['sending', 'triggered', 'succeeded', 'failed', 'cancelled']) {
      expect(pendingCountdown({ id: 7, scheduledTime: NOW + 60_000, state }, NOW), state).toBeNull()
    }
    expect(pendingCountdown(null, NOW)).toBeNull()
    expect(pendingCountdown(undefined, NOW)).toBeNull()
    expect(pendingCountdown({ state: 'pending' }, NOW), 'no due time').toBeNull()
  })

  it('is read again at its due time, at most a minute apart, then every few seconds until it ends', () => {
    expect(retryRefreshMs({ id: 7, scheduledTime: NOW + 20_000, state: 'pending' }, NOW)).toBe(20_000)
    expect(retryRefreshMs({ id: 7, scheduledTime: NOW + 600_000, state: 'pending' }, NOW)).toBe(RETRY_IDLE_POLL_MS)
    // Thirty days off: never a timer longer than a minute (setTimeout's limit is under 25 days).
    expect(retryRefreshMs({ id: 7, scheduledTime: NOW + 30 * 86_400_000, state: 'pending' }, NOW)).toBe(RETRY_IDLE_POLL_MS)
    expect(retryRefreshMs({ id: 7, scheduledTime: NOW + 500, state: 'pending' }, NOW)).toBe(RETRY_POLL_MS)
    expect(retryRefreshMs({ id: 7, scheduledTime: NOW - 10_000, state: 'pending' }, NOW)).toBe(RETRY_POLL_MS)
    expect(retryRefreshMs({ id: 7, scheduledTime: NOW - 10_000, state: 'triggered' }, NOW)).toBe(RETRY_POLL_MS)
    expect(retryRefreshMs({ id: 7, scheduledTime: NOW - 10_000, state: 'sending' }, NOW)).toBe(RETRY_POLL_MS)
    for (const state of ['succeeded', 'failed', 'lost', 'cancelled']) {
      expect(retryRefreshMs({ id: 7, scheduledTime: NOW - 10_000, state }, NOW), state).toBeNull()
    }
    expect(retryRefreshMs(null, NOW)).toBeNull()
  })
})
