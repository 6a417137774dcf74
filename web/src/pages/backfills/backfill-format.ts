// What a backfill's row and page show (openapi.yaml Backfill, BackfillDetail): its state as a
// tag, how far it got through its range, and its runs by state. Pure: unit tested.
import type { Schemas } from '@/api/client'

export type Backfill = Schemas['Backfill']
export type BackfillDetail = Schemas['BackfillDetail']
export type BackfillState = NonNullable<Backfill['state']>
export type BackfillRuns = Schemas['BackfillRuns']

export const BACKFILL_STATES: BackfillState[] = ['running', 'done', 'cancelled']

export function isBackfillState(v: string): v is BackfillState {
  return (BACKFILL_STATES as string[]).includes(v)
}

/** Element Plus tag type of a state. */
export function backfillTagType(state: Backfill['state']): 'primary' | 'success' | 'info' {
  if (state === 'running') return 'primary'
  if (state === 'done') return 'success'
  return 'info'
}

/** Only a running backfill can be cancelled (POST backfills/{id}/cancel). */
export function canCancelBackfill(b: Pick<Backfill, 'state'> | null | undefined): boolean {
  return b?.state === 'running'
}

/**
 * How far the backfill went through its range: the instants written as runs or skipped, of the
 * range's total, and that as a whole percentage (never over 100; a range without instants is
 * complete once the backfill is no longer running).
 */
export function backfillProgress(b: Pick<Backfill, 'state' | 'total' | 'written' | 'skipped'>): {
  handled: number
  total: number
  percent: number
} {
  const total = Math.max(0, b.total ?? 0)
  const handled = Math.min(total, Math.max(0, (b.written ?? 0) + (b.skipped ?? 0)))
  if (total === 0) return { handled, total, percent: b.state === 'running' ? 0 : 100 }
  return { handled, total, percent: Math.floor((handled * 100) / total) }
}

export const BACKFILL_RUN_STATES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const
export type BackfillRunState = (typeof BACKFILL_RUN_STATES)[number]

/** The run states the backfill has runs in, in BACKFILL_RUN_STATES order, with their counts. */
export function runCounts(runs: BackfillRuns | null | undefined): { state: BackfillRunState; count: number }[] {
  return BACKFILL_RUN_STATES.map((state) => ({ state, count: runs?.[state] ?? 0 })).filter((c) => c.count > 0)
}
