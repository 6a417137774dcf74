// Start, stop or delete the jobs selected in the list: each by its own call (the API has no bulk
// endpoint, and each call is checked and audited as a single edit is), a few at a time, then one
// message that sums up what happened. Pure (unit tested): the calls are job-actions.ts's runBulk.
import type { Job } from '@/api/types'

export type BulkAction = 'start' | 'stop' | 'delete'

/** Calls in flight at once: quick for a page of jobs, gentle with the admin's pools. */
export const BULK_CONCURRENCY = 4

/** How many failures the summary names; the rest are counted. */
export const NAMED_FAILURES = 5

/**
 * Runs `op` on every item, at most `limit` at a time, and answers each item's outcome in the
 * items' order. One item's failure does not stop the others.
 */
export async function settleLimited<T, R>(
  items: readonly T[],
  limit: number,
  op: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length)
  let next = 0
  async function worker(): Promise<void> {
    while (next < items.length) {
      const i = next++
      try {
        results[i] = { status: 'fulfilled', value: await op(items[i]!) }
      } catch (reason) {
        results[i] = { status: 'rejected', reason }
      }
    }
  }
  const workers = Math.max(1, Math.min(limit, items.length))
  await Promise.all(Array.from({ length: workers }, worker))
  return results
}

export interface BulkFailure {
  /** The job's name (its identity in its group), or `#id` when it has none. */
  name: string
  reason: string
}

export interface BulkOutcome {
  action: BulkAction
  done: number
  failed: BulkFailure[]
}

function jobName(job: Job): string {
  return job.name || `#${job.id}`
}

/** The outcome of `action` on `jobs` from their settled calls (same order). */
export function bulkOutcome(
  action: BulkAction,
  jobs: readonly Job[],
  results: readonly PromiseSettledResult<unknown>[],
  reasonOf: (e: unknown) => string,
): BulkOutcome {
  const failed: BulkFailure[] = []
  let done = 0
  results.forEach((r, i) => {
    if (r.status === 'fulfilled') done++
    else failed.push({ name: jobName(jobs[i]!), reason: reasonOf(r.reason) })
  })
  return { action, done, failed }
}

type Translate = (key: string, named: Record<string, unknown>) => string

/** "3 started, 1 failed: job-7: <reason>", in the user's language. */
export function bulkSummary(outcome: BulkOutcome, t: Translate): string {
  const parts: string[] = []
  if (outcome.done > 0 || outcome.failed.length === 0) parts.push(t(`jobs.bulk.done.${outcome.action}`, { n: outcome.done }))
  if (outcome.failed.length > 0) {
    const named = outcome.failed.slice(0, NAMED_FAILURES).map((f) => t('jobs.bulk.failure', { name: f.name, reason: f.reason }))
    const rest = outcome.failed.length - named.length
    if (rest > 0) named.push(t('jobs.bulk.moreFailures', { n: rest }))
    parts.push(t('jobs.bulk.failed', { n: outcome.failed.length, details: named.join('; ') }))
  }
  return parts.join(t('jobs.bulk.separator', {}))
}
