import { describe, expect, it } from 'vitest'
import {
  DEFAULT_RETRY_POLICY,
  formatWait,
  retryDelayMs,
  retryPolicyOf,
  retryWaits,
  summarizeWaits,
  type RetryPolicy,
} from '@/pages/jobs/retry-backoff'

const fixed: RetryPolicy = { ...DEFAULT_RETRY_POLICY }
function exponential(retryMultiplier = 2, retryMaxInterval = 0): RetryPolicy {
  return { retryBackoff: 'EXPONENTIAL', retryMultiplier, retryMaxInterval, retryJitter: 0 }
}
const MONTH_MS = 30 * 24 * 3600 * 1000

// The cases of tests/unit/admin/model/retry_backoff_test.cpp, so the preview and the server
// cannot part silently.
describe('a retry’s wait, as the server computes it', () => {
  it('is the interval every time with a fixed back-off, whatever the multiplier says', () => {
    for (const attempt of [0, 1, 2, 7]) expect(retryDelayMs(fixed, 30, attempt), String(attempt)).toBe(30_000)
    expect(retryDelayMs({ ...fixed, retryMultiplier: 5, retryMaxInterval: 1 }, 30, 3)).toBe(30_000)
    expect(retryDelayMs(fixed, 0, 3)).toBe(0)
  })

  it('multiplies the interval for each retry after the first with an exponential back-off', () => {
    expect(retryDelayMs(exponential(), 10, 1)).toBe(10_000)
    expect(retryDelayMs(exponential(), 10, 2)).toBe(20_000)
    expect(retryDelayMs(exponential(), 10, 3)).toBe(40_000)
    expect(retryDelayMs(exponential(), 10, 0)).toBe(10_000)
    expect(retryDelayMs(exponential(1.5), 10, 3)).toBe(22_500)
    expect(retryDelayMs(exponential(1), 10, 9)).toBe(10_000)
  })

  it('holds the ceiling, and never waits more than 30 days', () => {
    expect(retryDelayMs(exponential(2, 60), 10, 3)).toBe(40_000)
    expect(retryDelayMs(exponential(2, 60), 10, 4)).toBe(60_000)
    expect(retryDelayMs(exponential(2, 60), 10, 100)).toBe(60_000)
    expect(retryDelayMs(exponential(10), 3600, 5000)).toBe(MONTH_MS)
    expect(retryDelayMs(fixed, 2_000_000_000, 1)).toBe(MONTH_MS)
    // A multiplier outside 1-10 (which the API refuses) is held to it.
    expect(retryDelayMs(exponential(0.1), 10, 3)).toBe(10_000)
    expect(retryDelayMs(exponential(1e9), 10, 2)).toBe(100_000)
  })

  it('rounds to the millisecond', () => {
    expect(retryDelayMs(exponential(1.001), 1, 3)).toBe(1002)
    expect(retryDelayMs(exponential(1.5), 1, 4)).toBe(3375)
  })
})

describe('the waits of a job’s retries', () => {
  it('list one wait per retry, first to last', () => {
    expect(retryWaits(exponential(), 10, 5)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000])
    expect(retryWaits(exponential(3, 100), 10, 5)).toEqual([10_000, 30_000, 90_000, 100_000, 100_000])
    expect(retryWaits(fixed, 15, 3)).toEqual([15_000, 15_000, 15_000])
  })

  it('are none without retries, and at most the API’s hundred', () => {
    expect(retryWaits(exponential(), 10, 0)).toEqual([])
    expect(retryWaits(exponential(), 10, -3)).toEqual([])
    expect(retryWaits(exponential(), 10, Number.NaN)).toEqual([])
    expect(retryWaits(fixed, 10, 1000)).toHaveLength(100)
  })
})

describe('the preview of the waits', () => {
  it('says there are none, or one wait for all when they are the same', () => {
    expect(summarizeWaits([])).toEqual({ kind: 'none' })
    expect(summarizeWaits([10_000, 10_000, 10_000])).toEqual({ kind: 'same', ms: 10_000, count: 3 })
    expect(summarizeWaits([0])).toEqual({ kind: 'same', ms: 0, count: 1 })
  })

  it('lists every wait when there are few', () => {
    expect(summarizeWaits([1, 2, 4, 8, 16, 16])).toEqual({ kind: 'list', shown: [1, 2, 4, 8, 16, 16] })
  })

  it('lists the waits until a ceiling, then the ceiling once for the others', () => {
    const waits = retryWaits(exponential(2, 60), 10, 100)
    expect(summarizeWaits(waits)).toEqual({ kind: 'plateau', shown: [10_000, 20_000, 40_000], ms: 60_000, times: 97 })
  })

  it('shows the first waits and the last when they grow past what a line holds', () => {
    const waits = retryWaits(exponential(1.1), 10, 20)
    const summary = summarizeWaits(waits)
    expect(summary).toEqual({ kind: 'growing', shown: waits.slice(0, 5), last: waits[19], count: 20 })
    // With a 30-day bound reached late, the growth is shown, not the plateau.
    const long = retryWaits(exponential(2), 10, 30)
    expect(summarizeWaits(long).kind).toBe('growing')
  })
})

describe('a wait as the preview writes it', () => {
  it('uses seconds, to the millisecond, under a minute', () => {
    expect(formatWait(0)).toBe('0 s')
    expect(formatWait(10_000)).toBe('10 s')
    expect(formatWait(1_500)).toBe('1.5 s')
    expect(formatWait(33_750)).toBe('33.75 s')
    expect(formatWait(1_002)).toBe('1.002 s')
    expect(formatWait(59_999)).toBe('59.999 s')
  })

  it('uses its two largest units from a minute on', () => {
    expect(formatWait(60_000)).toBe('1 min')
    expect(formatWait(160_000)).toBe('2 min 40 s')
    expect(formatWait(5_400_000)).toBe('1 h 30 min')
    expect(formatWait(3_600_000)).toBe('1 h')
    expect(formatWait(183_600_000)).toBe('2 d 3 h')
    expect(formatWait(MONTH_MS)).toBe('30 d')
  })

  it('writes nothing for what is not a wait', () => {
    expect(formatWait(-1)).toBe('')
    expect(formatWait(Number.POSITIVE_INFINITY)).toBe('')
  })
})

describe('a loaded job’s retry policy', () => {
  it('is what the job says, and the defaults for what it does not', () => {
    expect(retryPolicyOf({})).toEqual({ retryBackoff: 'FIXED', retryMultiplier: 2, retryMaxInterval: 0, retryJitter: 0 })
    expect(retryPolicyOf({ retryBackoff: 'EXPONENTIAL', retryMultiplier: 3, retryMaxInterval: 600, retryJitter: 20 })).toEqual({
      retryBackoff: 'EXPONENTIAL',
      retryMultiplier: 3,
      retryMaxInterval: 600,
      retryJitter: 20,
    })
  })
})
