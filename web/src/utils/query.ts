// Lists keep their filters and page in the URL query, so a link or a reload shows the same.
import type { LocationQuery, LocationQueryRaw } from 'vue-router'

export function queryString(q: LocationQuery, key: string): string {
  const v = q[key]
  const s = Array.isArray(v) ? v[0] : v
  return typeof s === 'string' ? s : ''
}

/** A whole number from the query, or `fallback` when absent or not one. */
export function queryInt(q: LocationQuery, key: string, fallback: number): number
export function queryInt(q: LocationQuery, key: string, fallback: undefined): number | undefined
export function queryInt(q: LocationQuery, key: string, fallback: number | undefined): number | undefined {
  const s = queryString(q, key)
  if (!/^-?\d+$/.test(s)) return fallback
  const n = Number(s)
  return Number.isSafeInteger(n) ? n : fallback
}

/** The query without empty values and values equal to their defaults. */
export function compactQuery(values: Record<string, string | number | undefined | null>, defaults: Record<string, string | number> = {}): LocationQueryRaw {
  const out: LocationQueryRaw = {}
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined || v === null || v === '') continue
    if (defaults[k] !== undefined && String(defaults[k]) === String(v)) continue
    out[k] = String(v)
  }
  return out
}

export const PAGE_SIZES = [10, 20, 50, 100]
