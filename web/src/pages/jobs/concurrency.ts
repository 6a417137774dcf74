// Concurrency limits and priorities (docs/scheduling.md, "Concurrency limits and priorities"): a
// group runs at most maxRunning of its runs at once across its executors, a job at most
// maxConcurrent (0: no limit); fires beyond a limit wait and go out as runs end, the highest
// priority first, then the earliest due. The bounds are openapi.yaml's MaxRunning, MaxConcurrent
// and Priority. Pure: unit tested.

export const MAX_GROUP_RUNNING = 10000
export const MAX_JOB_CONCURRENT = 1000
export const MIN_PRIORITY = -1000
export const MAX_PRIORITY = 1000

/**
 * Which limits hold a job's fires back, as the job editor says it in one line: none (every fire
 * goes out at once), the job's own, its group's, or both (a fire waits until both have room).
 * An unknown group limit (the group not read yet) counts as none.
 */
export type LimitKind = 'none' | 'job' | 'group' | 'both'

export function limitKind(groupMaxRunning: number | undefined, jobMaxConcurrent: number | undefined): LimitKind {
  const group = (groupMaxRunning ?? 0) > 0
  const job = (jobMaxConcurrent ?? 0) > 0
  if (group && job) return 'both'
  if (group) return 'group'
  if (job) return 'job'
  return 'none'
}

/**
 * The most of a job's runs that can go at once: the smaller of its own and its group's limit, 0
 * when neither limits it.
 */
export function effectiveLimit(groupMaxRunning: number | undefined, jobMaxConcurrent: number | undefined): number {
  const limits = [groupMaxRunning ?? 0, jobMaxConcurrent ?? 0].filter((n) => n > 0)
  return limits.length ? Math.min(...limits) : 0
}
