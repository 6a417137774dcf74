// A job's retry back-off (openapi.yaml's RetryBackoff; the server's rule is
// admin/model/retry_backoff.h): how long a failed run waits before each of its retries, and the
// preview the job editor writes under the fields. Pure: unit tested.
import type { Schemas } from '@/api/client'

export type RetryBackoff = Schemas['RetryBackoff']

// Keyed by the generated union: a value added to openapi.yaml and not here fails to compile. In
// the order the editor offers them, the default first.
const BACKOFFS: Record<RetryBackoff, true> = { FIXED: true, EXPONENTIAL: true }
export const RETRY_BACKOFFS = Object.keys(BACKOFFS) as RetryBackoff[]

/** The API's bounds (Job, JobCreate, JobUpdate). No wait is ever longer than 30 days. */
export const MAX_RETRY_DELAY_SECONDS = 30 * 24 * 3600
export const MIN_RETRY_MULTIPLIER = 1
export const MAX_RETRY_MULTIPLIER = 10
export const MAX_RETRY_COUNT = 100

/** A job's retry policy beyond its retry count and interval. */
export interface RetryPolicy {
  retryBackoff: RetryBackoff
  /** EXPONENTIAL: each retry waits this many times longer than the one before (1-10). */
  retryMultiplier: number
  /** EXPONENTIAL: the longest wait in seconds; 0 for no ceiling but 30 days. */
  retryMaxInterval: number
  /** 0-100: each wait shortened by up to this percentage (both back-offs). */
  retryJitter: number
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  retryBackoff: 'FIXED',
  retryMultiplier: 2,
  retryMaxInterval: 0,
  retryJitter: 0,
})

/** A loaded job's policy; a job read without the fields (an older server) has the defaults. */
export function retryPolicyOf(job: Partial<RetryPolicy>): RetryPolicy {
  return {
    retryBackoff: job.retryBackoff ?? DEFAULT_RETRY_POLICY.retryBackoff,
    retryMultiplier: job.retryMultiplier ?? DEFAULT_RETRY_POLICY.retryMultiplier,
    retryMaxInterval: job.retryMaxInterval ?? DEFAULT_RETRY_POLICY.retryMaxInterval,
    retryJitter: job.retryJitter ?? DEFAULT_RETRY_POLICY.retryJitter,
  }
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Number.isFinite(v) ? v : lo))

/**
 * The wait before retry number `attempt` (1 for the first) in ms, before jitter, as the server
 * computes it: FIXED waits the interval; EXPONENTIAL waits interval × multiplier^(attempt-1), at
 * most the ceiling when it is set; then at most 30 days, rounded to the millisecond. Attempts
 * below 1 count as 1. With jitter the server waits up to `retryJitter` percent less.
 */
export function retryDelayMs(policy: RetryPolicy, intervalSeconds: number, attempt: number): number {
  let seconds = clamp(intervalSeconds, 0, MAX_RETRY_DELAY_SECONDS)
  if (policy.retryBackoff === 'EXPONENTIAL' && attempt > 1) {
    const multiplier = clamp(policy.retryMultiplier, MIN_RETRY_MULTIPLIER, MAX_RETRY_MULTIPLIER)
    // Grows to Infinity for absurd attempts; the bound below holds either way.
    seconds *= multiplier ** (Math.floor(attempt) - 1)
    if (policy.retryMaxInterval > 0) seconds = Math.min(seconds, policy.retryMaxInterval)
  }
  seconds = Math.min(seconds, MAX_RETRY_DELAY_SECONDS)
  return Math.round(seconds * 1000)
}

/** The waits of a job's `count` retries (at most the API's 100), in ms, first to last. */
export function retryWaits(policy: RetryPolicy, intervalSeconds: number, count: number): number[] {
  const n = Math.floor(clamp(count, 0, MAX_RETRY_COUNT))
  return Array.from({ length: n }, (_, i) => retryDelayMs(policy, intervalSeconds, i + 1))
}

/**
 * What the preview says about a list of waits, so a hundred of them read in one line:
 *  - none: no retries;
 *  - same: every retry waits `ms` (`count` of them);
 *  - list: each wait, when there are at most `maxShown`;
 *  - plateau: the waits until they stop changing, then `ms` for the `times` others (a ceiling,
 *    or 30 days, reached within `maxShown` retries);
 *  - growing: the first `maxShown - 1` waits, then the last one, `last`, of retry `count`.
 */
export type WaitsSummary =
  | { kind: 'none' }
  | { kind: 'same'; ms: number; count: number }
  | { kind: 'list'; shown: number[] }
  | { kind: 'plateau'; shown: number[]; ms: number; times: number }
  | { kind: 'growing'; shown: number[]; last: number; count: number }

export function summarizeWaits(waits: number[], maxShown = 6): WaitsSummary {
  const n = waits.length
  if (n === 0) return { kind: 'none' }
  const last = waits[n - 1]!
  let plateau = n - 1
  while (plateau > 0 && waits[plateau - 1] === last) plateau--
  if (plateau === 0) return { kind: 'same', ms: last, count: n }
  if (n <= maxShown) return { kind: 'list', shown: [...waits] }
  if (plateau <= maxShown - 1) return { kind: 'plateau', shown: waits.slice(0, plateau), ms: last, times: n - plateau }
  return { kind: 'growing', shown: waits.slice(0, Math.max(1, maxShown - 1)), last, count: n }
}

const trim = (n: number, digits: number) => String(Number(n.toFixed(digits)))

/**
 * A wait as the preview writes it, in at most two units: "0 s", "1.5 s", "33.75 s", "2 min 40 s",
 * "1 h 30 min", "2 d 3 h", "30 d". Under a minute to the millisecond (multipliers like 1.5 make
 * fractions); from a minute on, the smaller unit rounded down.
 */
export function formatWait(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return ''
  if (ms < 60_000) return `${trim(ms / 1000, 3)} s`
  const s = Math.round(ms / 1000)
  const units: [number, string][] = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ]
  const i = units.findIndex(([size]) => s >= size)
  const [big, bigName] = units[i]!
  const [small, smallName] = units[i + 1] ?? [1, 's']
  const head = Math.floor(s / big)
  const rest = Math.floor((s % big) / small)
  return rest > 0 && i + 1 < units.length ? `${head} ${bigName} ${rest} ${smallName}` : `${head} ${bigName}`
}
