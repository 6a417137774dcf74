// Quartz (XXL-JOB) cron expressions, field by field: the builder's model.
//
//   seconds minutes hours day-of-month month day-of-week [year]
//
// Each field is one of: every value (`*`), no specific value (`?`, day-of-month or day-of-week
// only), every N starting at M (`M/N`), specific values (`a,b,c`), a range (`a-b`), or anything
// else Quartz accepts that the builder cannot show as such (`L`, `15W`, `6#3`, `1-5,10`, …),
// kept verbatim as `raw`. Month and weekday names (JAN, MON) are read as their numbers
// (weekdays: 1 = Sunday … 7 = Saturday, as Quartz counts them).
//
// The server has the last word on validity (GET cron/next): the builder only refuses what it
// can tell for sure is wrong (field count, characters, values out of range, a zero step, `?`
// outside the day fields).

export type CronFieldName = 'second' | 'minute' | 'hour' | 'dayOfMonth' | 'month' | 'dayOfWeek' | 'year'

export const CRON_FIELDS: readonly CronFieldName[] = ['second', 'minute', 'hour', 'dayOfMonth', 'month', 'dayOfWeek', 'year']

export const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
export const WEEKDAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']

export interface FieldBounds {
  min: number
  max: number
  /** Names of the values from `min` on (month and day-of-week). */
  names?: string[]
}

export const FIELD_BOUNDS: Record<CronFieldName, FieldBounds> = {
  second: { min: 0, max: 59 },
  minute: { min: 0, max: 59 },
  hour: { min: 0, max: 23 },
  dayOfMonth: { min: 1, max: 31 },
  month: { min: 1, max: 12, names: MONTH_NAMES },
  dayOfWeek: { min: 1, max: 7, names: WEEKDAY_NAMES },
  year: { min: 1970, max: 2099 },
}

export type FieldSpec =
  | { kind: 'every' }
  | { kind: 'any' }
  | { kind: 'step'; start: number; step: number }
  | { kind: 'list'; values: number[] }
  | { kind: 'range'; from: number; to: number }
  | { kind: 'raw'; text: string }

export interface CronFields {
  second: FieldSpec
  minute: FieldSpec
  hour: FieldSpec
  dayOfMonth: FieldSpec
  month: FieldSpec
  dayOfWeek: FieldSpec
  /** null: the optional year field is left out. */
  year: FieldSpec | null
}

export type CronParseErrorReason = 'empty' | 'fieldCount' | 'syntax' | 'range' | 'step' | 'questionMark'

export interface CronParseError {
  reason: CronParseErrorReason
  field?: CronFieldName
  /** The offending field's text. */
  text?: string
}

export type CronParseResult = { ok: true; fields: CronFields } | { ok: false; error: CronParseError }

export function isDayField(name: CronFieldName): boolean {
  return name === 'dayOfMonth' || name === 'dayOfWeek'
}

/** Every minute at second 0, any day: the builder's starting point. */
export function defaultCronFields(): CronFields {
  return {
    second: { kind: 'list', values: [0] },
    minute: { kind: 'every' },
    hour: { kind: 'every' },
    dayOfMonth: { kind: 'every' },
    month: { kind: 'every' },
    dayOfWeek: { kind: 'any' },
    year: null,
  }
}

/** Replaces month/weekday names with their numbers: "MON-FRI" → "2-6". */
function namesToNumbers(text: string, bounds: FieldBounds): string {
  if (!bounds.names) return text
  return text.replace(/[A-Z]{3}/g, (name) => {
    const i = bounds.names!.indexOf(name)
    return i < 0 ? name : String(bounds.min + i)
  })
}

type FieldResult = { ok: true; spec: FieldSpec } | { ok: false; error: CronParseError }

function fail(reason: CronParseErrorReason, field: CronFieldName, text: string): FieldResult {
  return { ok: false, error: { reason, field, text } }
}

export function parseField(input: string, name: CronFieldName): FieldResult {
  const bounds = FIELD_BOUNDS[name]
  const text = namesToNumbers(input.trim().toUpperCase(), bounds)
  if (text === '') return fail('syntax', name, input)
  if (text === '*') return { ok: true, spec: { kind: 'every' } }
  if (text === '?') return isDayField(name) ? { ok: true, spec: { kind: 'any' } } : fail('questionMark', name, input)
  if (!/^[0-9,\-/*#LW?]+$/.test(text)) return fail('syntax', name, input)
  if (text.includes('?')) return fail(isDayField(name) ? 'syntax' : 'questionMark', name, input)

  // Every number anywhere in the field must be a value of the field, except after / (a step)
  // and # (the nth weekday of the month).
  const inRange = (n: number) => n >= bounds.min && n <= bounds.max
  for (const m of text.matchAll(/([/#L-]?)(\d+)/g)) {
    const n = Number(m[2])
    if (m[1] === '/' || m[1] === '#') continue
    if (m[1] === 'L' || (m[1] === '-' && /L-\d+$/.test(text.slice(0, (m.index ?? 0) + m[0].length)))) continue
    if (!inRange(n)) return fail('range', name, input)
  }

  let m: RegExpMatchArray | null
  if ((m = text.match(/^(\*|\d+)\/(\d+)$/))) {
    const start = m[1] === '*' ? bounds.min : Number(m[1])
    const step = Number(m[2])
    if (step < 1 || step > bounds.max) return fail('step', name, input)
    return { ok: true, spec: { kind: 'step', start, step } }
  }
  if ((m = text.match(/^(\d+)-(\d+)$/))) {
    const from = Number(m[1])
    const to = Number(m[2])
    // A range that wraps (FRI-MON, 22-2) is Quartz's business: kept as written.
    if (from > to) return { ok: true, spec: { kind: 'raw', text: input.trim().toUpperCase() } }
    return { ok: true, spec: { kind: 'range', from, to } }
  }
  if (/^\d+(,\d+)*$/.test(text)) {
    const values = [...new Set(text.split(',').map(Number))].sort((a, b) => a - b)
    return { ok: true, spec: { kind: 'list', values } }
  }
  if (/\/0+$|\/0+,|\/$/.test(text)) return fail('step', name, input)
  if (/^[,\-/]|[,\-/]$|[,\-/]{2}/.test(text)) return fail('syntax', name, input)
  return { ok: true, spec: { kind: 'raw', text: input.trim().toUpperCase() } }
}

export function parseCron(expr: string): CronParseResult {
  const trimmed = expr.trim()
  if (trimmed === '') return { ok: false, error: { reason: 'empty' } }
  const parts = trimmed.split(/\s+/)
  if (parts.length < 6 || parts.length > 7) return { ok: false, error: { reason: 'fieldCount' } }
  const specs: FieldSpec[] = []
  for (let i = 0; i < parts.length; i++) {
    const r = parseField(parts[i]!, CRON_FIELDS[i]!)
    if (!r.ok) return r
    specs.push(r.spec)
  }
  return {
    ok: true,
    fields: {
      second: specs[0]!,
      minute: specs[1]!,
      hour: specs[2]!,
      dayOfMonth: specs[3]!,
      month: specs[4]!,
      dayOfWeek: specs[5]!,
      year: specs[6] ?? null,
    },
  }
}

/** The text of one field. An empty list of values means every value. */
export function fieldText(spec: FieldSpec): string {
  switch (spec.kind) {
    case 'every':
      return '*'
    case 'any':
      return '?'
    case 'step':
      return `${spec.start}/${spec.step}`
    case 'range':
      return `${spec.from}-${spec.to}`
    case 'list':
      return spec.values.length === 0 ? '*' : [...new Set(spec.values)].sort((a, b) => a - b).join(',')
    case 'raw':
      return spec.text
  }
}

export function buildCron(fields: CronFields): string {
  const parts = [fields.second, fields.minute, fields.hour, fields.dayOfMonth, fields.month, fields.dayOfWeek].map(fieldText)
  if (fields.year) parts.push(fieldText(fields.year))
  return parts.join(' ')
}

/**
 * Sets one field. Quartz wants exactly one of day-of-month and day-of-week to be `?`: giving
 * one of them a value makes the other `?`; making one `?` while the other is too makes the
 * other `*`.
 */
export function setField(fields: CronFields, name: CronFieldName, spec: FieldSpec | null): CronFields {
  const next: CronFields = { ...fields, [name]: spec }
  if (name === 'year') return next
  if (spec === null) return fields
  if (name === 'dayOfMonth' || name === 'dayOfWeek') {
    const other: 'dayOfMonth' | 'dayOfWeek' = name === 'dayOfMonth' ? 'dayOfWeek' : 'dayOfMonth'
    if (spec.kind !== 'any') next[other] = { kind: 'any' }
    else if (next[other].kind === 'any') next[other] = { kind: 'every' }
  }
  return next
}
