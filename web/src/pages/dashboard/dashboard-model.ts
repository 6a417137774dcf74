// The dashboard's date range (whole days in a zone, as YYYY-MM-DD) and the runs-per-day chart's
// data. Pure: unit tested.
import type { Dashboard } from '@/api/types'
import { zonedParts } from '@/utils/time'

export const DEFAULT_DAYS = 7
/** The API answers at most 366 days from `from`. */
export const MAX_DAYS = 367

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/

export function isIsoDate(s: string): boolean {
  const m = DATE_RE.exec(s)
  if (!m) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
}

/** Today's date in a zone. */
export function todayIn(zone: string, now: number): string {
  const p = zonedParts(now, zone)
  return `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`
}

/** The date `days` after (or before, when negative) a date. */
export function addDays(date: string, days: number): string {
  const m = DATE_RE.exec(date)!
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days))
  return d.toISOString().slice(0, 10)
}

/** Days from `from` to `to`, both included. */
export function daysInRange(from: string, to: string): number {
  const ms = Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)
  return Math.round(ms / 86_400_000) + 1
}

/**
 * The range to show: `from`/`to` from the URL when both are valid dates in order and not longer
 * than the API allows, else the last DEFAULT_DAYS days ending today.
 */
export function resolveRange(from: string, to: string, today: string): { from: string; to: string; isDefault: boolean } {
  if (isIsoDate(from) && isIsoDate(to) && from <= to && daysInRange(from, to) <= MAX_DAYS) {
    return { from, to, isDefault: false }
  }
  return { from: addDays(today, -(DEFAULT_DAYS - 1)), to: today, isDefault: true }
}

export interface DaySeries {
  days: string[]
  succeeded: number[]
  failed: number[]
}

/** The chart's columns, one per day in order (the API already includes the days without runs). */
export function daySeries(runsPerDay: Dashboard['runsPerDay']): DaySeries {
  const sorted = [...runsPerDay].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))
  return {
    days: sorted.map((d) => d.day),
    succeeded: sorted.map((d) => d.succeeded),
    failed: sorted.map((d) => d.failed),
  }
}

export function seriesTotals(s: DaySeries): { succeeded: number; failed: number } {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  return { succeeded: sum(s.succeeded), failed: sum(s.failed) }
}

/** "11-24" for a short axis label when the range stays within one year, else the whole date. */
export function axisLabels(days: string[]): string[] {
  const years = new Set(days.map((d) => d.slice(0, 4)))
  return years.size <= 1 ? days.map((d) => d.slice(5)) : days
}
