// How an executor's clock stands against the admin's, from its registration
// (GET groups/{id}/executors): clockOffsetMs is the admin's clock minus the executor's, as the
// executor estimated it from its exchanges with the admin; clockDelayMs the round trip it was
// measured on, so the offset is known to within half of it. Both are null for XXL-JOB's
// executors and until a cronwheel executor's second registration.

// More than this off, the admin logs a warning (RegistryMonitor::kClockWarningMs) and the page
// marks the executor.
export const CLOCK_WARNING_MS = 1000

export type ClockOffsetView =
  | { kind: 'unknown' }
  | { kind: 'inStep' | 'behind' | 'ahead'; ms: number; withinMs: number; far: boolean }

export function clockOffsetView(offsetMs: number | null | undefined, delayMs: number | null | undefined): ClockOffsetView {
  if (offsetMs == null || delayMs == null) return { kind: 'unknown' }
  const ms = Math.abs(offsetMs)
  // A positive offset: the admin's clock is ahead, so the executor's is behind it.
  const kind = offsetMs === 0 ? 'inStep' : offsetMs > 0 ? 'behind' : 'ahead'
  return { kind, ms, withinMs: Math.ceil(Math.max(delayMs, 0) / 2), far: ms > CLOCK_WARNING_MS }
}
