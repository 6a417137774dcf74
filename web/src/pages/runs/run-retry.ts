// The retry a failed run led to, as GET logs/{id} answers it (JobLogDetail.retry: the RETRY run
// written with the failure, its due time and state): how far off it is while it waits (as for any
// pending run), and when the run's page reads the run again to follow it. Pure: unit tested.
import type { Schemas } from '@/api/client'

export type RunRetry = NonNullable<Schemas['JobLogDetail']['retry']>

/** How often a page follows a retry that is due or running. */
export const RETRY_POLL_MS = 3000
/** The longest a page waits between reads of a retry not due yet (its due time may move: a kill, a cancel). */
export const RETRY_IDLE_POLL_MS = 60_000

const FINAL = new Set(['succeeded', 'failed', 'lost', 'cancelled'])

/**
 * Where a pending run (a retry, or a fire not sent yet) stands against `now`: due in `ms` (whole
 * seconds, rounded up, so a countdown never says "in 0 s" before the time), or `late` by `ms`
 * once its time has passed and no admin has sent it yet. Null for a run that is no longer
 * pending. The page writes `ms` as the job editor's preview writes waits (formatWait: "12 s",
 * "9 min 59 s").
 */
export function pendingCountdown(
  run: { state?: string; scheduledTime?: number } | null | undefined,
  now: number,
): { late: boolean; ms: number } | null {
  if (!run || run.state !== 'pending' || run.scheduledTime === undefined) return null
  const left = run.scheduledTime - now
  if (left > 0) return { late: false, ms: Math.ceil(left / 1000) * 1000 }
  return { late: true, ms: Math.floor((now - run.scheduledTime) / 1000) * 1000 }
}

/**
 * In how many ms the page reads the run again for its retry's sake: every few seconds once the
 * retry is due or on its way, until its time otherwise (at most a minute apart); null when there
 * is no retry or it has ended.
 */
export function retryRefreshMs(retry: RunRetry | null | undefined, now: number): number | null {
  if (!retry || FINAL.has(retry.state)) return null
  if (retry.state !== 'pending') return RETRY_POLL_MS
  const left = retry.scheduledTime - now
  return Math.min(RETRY_IDLE_POLL_MS, Math.max(RETRY_POLL_MS, left))
}
