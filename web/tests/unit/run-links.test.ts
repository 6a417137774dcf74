import { describe, expect, it } from 'vitest'
import type { JobLog } from '@/api/types'
import { mayHaveRetries, retriesAmong, retryWindow } from '@/pages/runs/run-links'

describe('a run’s retries', () => {
  it('are looked for only after a failed or lost run with retries left', () => {
    expect(mayHaveRetries({ state: 'failed', executorFailRetryCount: 2 })).toBe(true)
    expect(mayHaveRetries({ state: 'lost', executorFailRetryCount: 1 })).toBe(true)
    expect(mayHaveRetries({ state: 'failed', executorFailRetryCount: 0 })).toBe(false)
    expect(mayHaveRetries({ state: 'succeeded', executorFailRetryCount: 3 })).toBe(false)
    expect(mayHaveRetries({ state: 'triggered', executorFailRetryCount: 3 })).toBe(false)
  })

  it('are looked for from the run’s schedule to its end plus the retry interval and five minutes', () => {
    expect(retryWindow({ scheduledTime: 1_000_000, triggerTime: 1_000_050, handleTime: 1_004_000 }, 30)).toEqual({
      from: 1_000_000,
      to: 1_004_000 + 30_000 + 300_000,
    })
    // A run that never reached an executor ends at its trigger.
    expect(retryWindow({ scheduledTime: 1_000_000, triggerTime: 1_000_050, handleTime: null }, undefined)).toEqual({
      from: 1_000_000,
      to: 1_000_050 + 300_000,
    })
  })

  it('are the RETRY runs naming the run, oldest first; child-job runs naming it are not', () => {
    const runs: JobLog[] = [
      { id: 9, parentLogId: 5, triggerType: 'RETRY' },
      { id: 7, parentLogId: 5, triggerType: 'RETRY' },
      { id: 8, parentLogId: 5, triggerType: 'PARENT' },
      { id: 6, parentLogId: 4, triggerType: 'RETRY' },
      { id: 10, triggerType: 'SCHEDULE' },
    ]
    expect(retriesAmong({ id: 5 }, runs).map((r) => r.id)).toEqual([7, 9])
  })
})
