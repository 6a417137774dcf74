// The runs that retried a run. A retry names the run it retries (parentLogId, triggerType RETRY)
// but a run does not name its retries, and GET logs cannot filter by parentLogId, so they are
// looked for where they must be: runs of the same job scheduled from the run's end to one retry
// interval (the job's current one) and five minutes after it. A retry is recorded as the run
// ends, so a run that failed with retries left has one there unless its job's interval changed
// by more than that since.
import { api, call } from '@/api/client'
import type { JobLog } from '@/api/types'

const SLACK_MS = 5 * 60_000
/** More runs than a job fires in the window only when it fires more than once a second. */
const WINDOW_LIMIT = 1000

/** Whether a run can have been retried: it ended badly with retries left. */
export function mayHaveRetries(run: Pick<JobLog, 'state' | 'executorFailRetryCount'>): boolean {
  return (run.state === 'failed' || run.state === 'lost') && (run.executorFailRetryCount ?? 0) > 0
}

/** The window GET logs is asked for: [from, to) in epoch ms. */
export function retryWindow(
  run: Pick<JobLog, 'scheduledTime' | 'triggerTime' | 'handleTime'>,
  retryIntervalSeconds: number | undefined,
): { from: number; to: number } {
  const from = run.scheduledTime ?? 0
  const end = Math.max(from, run.handleTime ?? 0, run.triggerTime ?? 0)
  return { from, to: end + Math.max(0, retryIntervalSeconds ?? 0) * 1000 + SLACK_MS }
}

/** The retries of `run` among `candidates`, oldest first. */
export function retriesAmong(run: Pick<JobLog, 'id'>, candidates: JobLog[]): JobLog[] {
  return candidates.filter((l) => l.parentLogId === run.id && l.triggerType === 'RETRY').sort((a, b) => (a.id ?? 0) - (b.id ?? 0))
}

/** The runs that retried `run` (none when it cannot have any, or they cannot be read). */
export async function findRetries(run: JobLog, retryIntervalSeconds: number | undefined): Promise<JobLog[]> {
  if (!mayHaveRetries(run) || run.jobId === undefined) return []
  const { from, to } = retryWindow(run, retryIntervalSeconds)
  try {
    const page = await call(api.GET('/logs', { params: { query: { jobId: run.jobId, from, to, limit: WINDOW_LIMIT } } }))
    return retriesAmong(run, page.items ?? [])
  } catch {
    return []
  }
}
