// What an audit entry changed: the top-level fields whose values differ between the object
// before and after (all of them on a create or a delete). Pure: unit tested.

export interface FieldChange {
  key: string
  before: unknown
  after: unknown
  /** Absent on one side, or a different value. */
  changed: boolean
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Deep equality of JSON values (key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]))
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}

/** Every field of either side, sorted, changed ones marked. */
export function auditChanges(before: unknown, after: unknown): FieldChange[] {
  const b = isObject(before) ? before : {}
  const a = isObject(after) ? after : {}
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()
  return keys.map((key) => {
    const inB = Object.prototype.hasOwnProperty.call(b, key)
    const inA = Object.prototype.hasOwnProperty.call(a, key)
    return { key, before: b[key], after: a[key], changed: inB !== inA || !jsonEqual(b[key], a[key]) }
  })
}

/** The names of the changed fields. */
export function changedKeys(before: unknown, after: unknown): string[] {
  return auditChanges(before, after)
    .filter((c) => c.changed)
    .map((c) => c.key)
}

/** A JSON value for a table cell: strings as they are, the rest as compact JSON, "" when absent. */
export function cellText(v: unknown): string {
  if (v === undefined) return ''
  if (typeof v === 'string') return v
  return JSON.stringify(v)
}

/** The object as indented JSON, keys sorted (so both sides line up); "" for null. */
export function prettyJson(v: unknown): string {
  if (v === null || v === undefined) return ''
  const sort = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(sort) : isObject(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort(x[k])])) : x
  return JSON.stringify(sort(v), null, 2)
}

/** Fields that hold an instant as epoch milliseconds (createdAt, triggerNextTime, leaseUntil…). */
const INSTANT_FIELD = /(Time|At|Until)$/
/** 2001-09-09 onwards: smaller numbers in such a field are not instants (0 means unset). */
const MIN_INSTANT_MS = 1e12

/** Whether a field's value is an instant to show as a time rather than a number. */
export function isInstant(key: string, value: unknown): value is number {
  return INSTANT_FIELD.test(key) && typeof value === 'number' && Number.isInteger(value) && value >= MIN_INSTANT_MS
}

/** A field's value for a table cell: instants through `formatTime`, the rest as cellText does. */
export function fieldText(key: string, value: unknown, formatTime: (ms: number) => string): string {
  return isInstant(key, value) ? formatTime(value) : cellText(value)
}
