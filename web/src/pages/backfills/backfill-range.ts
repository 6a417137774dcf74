// A backfill's range as its dialog edits it: two wall-clock times read in a zone the user picks
// (the job's or the browser's), each the instant POST jobs/{id}/backfill takes as `from` and `to`
// ([from, to), epoch ms); and what a dry run's answer (BackfillPlan) shows. Pure: unit tested.
import type { Schemas } from '@/api/client'
import { instantFromZoned, zonedParts } from '@/utils/time'

export type BackfillPlan = Schemas['BackfillPlan']

/** The date pickers' value format (Day.js tokens): a wall-clock time without a zone. */
export const WALL_FORMAT = 'YYYY-MM-DD HH:mm:ss'
const WALL = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/

const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** "2024-07-01 09:30:00": the instant's wall-clock time in the zone. */
export function instantToWall(ms: number, zone: string): string {
  const p = zonedParts(ms, zone)
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`
}

/**
 * The instant a wall-clock time ("YYYY-MM-DD HH:mm:ss") names in the zone; null for anything
 * else, a date that does not exist (February 30th) included. A time that the zone skips (the hour
 * clocks go forward) names the instant after the gap.
 */
export function wallToInstant(wall: string | null | undefined, zone: string): number | null {
  const m = WALL.exec(wall ?? '')
  if (!m) return null
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null
  // A day past the month's end would roll over into the next month.
  if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null
  return instantFromZoned(zone, year, month, day, hour, minute, second)
}

/** The same instant's wall-clock time read in another zone (when the user switches zones). */
export function rezone(wall: string, from: string, to: string): string {
  const ms = wallToInstant(wall, from)
  return ms === null ? wall : instantToWall(ms, to)
}

/** The range the dialog starts with: the last whole hour up to the current minute. */
export function lastHour(now: number): { from: number; to: number } {
  const to = Math.floor(now / 60_000) * 60_000
  return { from: to - 3_600_000, to }
}

export interface PlanPreview {
  total: number
  existing: number
  toRun: number
  /** The first instants, oldest first, each with whether it already has a run. */
  shown: { at: number; existing: boolean }[]
  /** Instants not shown. */
  more: number
}

/** What a dry run shows: its counts, and its first `max` instants. */
export function planPreview(plan: BackfillPlan, max = 10): PlanPreview {
  const instants = plan.instants ?? []
  const existing = new Set(plan.existing ?? [])
  const total = plan.total ?? instants.length
  return {
    total,
    existing: existing.size,
    toRun: plan.toRun ?? total,
    shown: instants.slice(0, max).map((at) => ({ at, existing: existing.has(at) })),
    more: Math.max(0, instants.length - max),
  }
}
