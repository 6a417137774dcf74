// The business-calendar page's model (docs/scheduling.md, "Calendars"): the year view's months
// laid out in weeks from GET calendars/{id}/days, what a click on a day changes in the calendar's
// dates, the body PUT calendars/{id} takes, and the small rules the form checks before sending
// (the same as openapi.yaml's patterns). Pure: unit tested (tests/unit/calendar-model.test.ts).
import type { Schemas } from '@/api/client'

export type Calendar = Schemas['Calendar']
export type CalendarInput = Schemas['CalendarInput']
export type CalendarDate = Schemas['CalendarDate']
export type CalendarTimeRange = Schemas['CalendarTimeRange']
export type CalendarDays = Schemas['CalendarDays']
export type CalendarImport = Schemas['CalendarImport']
export type CalendarMode = Schemas['CalendarMode']
export type Weekday = Schemas['Weekday']
export type DayState = CalendarDays['days'][number]['state']

/** Monday first, as ISO 8601 and the API's weekly rule count them. */
export const WEEKDAYS: readonly Weekday[] = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY']
export const CALENDAR_MODES: readonly CalendarMode[] = ['SKIP', 'ONLY']
/** A calendar's name, and an import's source name (openapi.yaml CalendarInput.name). */
export const CALENDAR_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/
/** An excluded range's end, HH:MM or HH:MM:SS (openapi.yaml CalendarTimeRange). */
export const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/
export const MAX_DESCRIPTION = 255
export const MAX_DATE_NAME = 200
export const MAX_EXCLUDED_TIMES = 24
/** What POST calendars/{id}/import takes (4 MiB) and its horizon's bounds and default. */
export const MAX_ICS_BYTES = 4 * 1024 * 1024
export const MIN_HORIZON_DAYS = 1
export const MAX_HORIZON_DAYS = 7305
export const DEFAULT_HORIZON_DAYS = 1096
/** The years GET calendars/{id}/days answers. */
export const MIN_YEAR = 1970
export const MAX_YEAR = 2999

/** A day as the year view shows it. */
export interface YearDay {
  /** YYYY-MM-DD */
  date: string
  day: number
  state: DayState
  /** The date's name (a holiday's, a make-up day's); empty for business and weekend days. */
  name: string
  /** An excluded date of every year (`--MM-DD`) rather than of this year only. */
  everyYear: boolean
  /** The import that brought the date; empty for one entered by hand or no date at all. */
  source: string
}

/** A month of the year view: its weeks, Monday first, with null outside the month. */
export interface MonthGrid {
  /** 1-12 */
  month: number
  weeks: (YearDay | null)[][]
}

/** "--MM-DD" of "YYYY-MM-DD". */
export function monthDayOf(date: string): string {
  return `--${date.slice(5)}`
}

/** 0 = Monday … 6 = Sunday, of a "YYYY-MM-DD" (a proleptic Gregorian day, no zone involved). */
export function weekdayIndex(date: string): number {
  const [y, m, d] = date.split('-').map(Number)
  return (new Date(Date.UTC(y!, m! - 1, d!)).getUTCDay() + 6) % 7
}

/**
 * The year's days (GET days, 1 January to 31 December in order) as twelve months of weeks, each
 * day with what the calendar's own dates add: whether an excluded day is a date of every year,
 * and the import a date came from. A date of that year comes before a date of every year on the
 * same day, as the server decides a day's state.
 */
export function monthGrids(days: CalendarDays['days'], calendar: Pick<Calendar, 'excludedDates' | 'includedDates'>): MonthGrid[] {
  const dated = new Map<string, CalendarDate>()
  const yearly = new Map<string, CalendarDate>()
  for (const d of calendar.excludedDates) (d.date.startsWith('--') ? yearly : dated).set(d.date, d)
  for (const d of calendar.includedDates) dated.set(d.date, d)
  const months: MonthGrid[] = []
  for (const d of days) {
    const month = Number(d.date.slice(5, 7))
    let grid = months[months.length - 1]
    if (!grid || grid.month !== month) {
      grid = { month, weeks: [] }
      months.push(grid)
    }
    const own = d.state === 'excluded' || d.state === 'included' ? dated.get(d.date) : undefined
    const recurring = d.state === 'excluded' && !own ? yearly.get(monthDayOf(d.date)) : undefined
    const day: YearDay = {
      date: d.date,
      day: Number(d.date.slice(8, 10)),
      state: d.state,
      name: d.name,
      everyYear: recurring !== undefined,
      source: (own ?? recurring)?.source ?? '',
    }
    const column = weekdayIndex(d.date)
    let week = grid.weeks[grid.weeks.length - 1]
    if (!week || column === 0) {
      week = Array<YearDay | null>(7).fill(null)
      grid.weeks.push(week)
    }
    week[column] = day
  }
  return months
}

/** What a click on a day of the year view does (the page asks for a name where one is given). */
export type DayAction =
  /** A business day becomes an excluded date (a holiday), of that year or of every year. */
  | { kind: 'exclude'; date: string }
  /** A weekday the weekly rule leaves out becomes an included date (a make-up working day). */
  | { kind: 'include'; date: string }
  /** An excluded date goes: the day's own, or the date of every year it falls on. */
  | { kind: 'removeExcluded'; date: string; everyYear: boolean }
  /** An included date goes. */
  | { kind: 'removeIncluded'; date: string }

export function actionFor(day: YearDay): DayAction {
  switch (day.state) {
    case 'business':
      return { kind: 'exclude', date: day.date }
    case 'weekend':
      return { kind: 'include', date: day.date }
    case 'excluded':
      return { kind: 'removeExcluded', date: day.date, everyYear: day.everyYear }
    case 'included':
      return { kind: 'removeIncluded', date: day.date }
  }
}

/** The calendar's dates after `action`; `name` names a new date, `everyYear` makes an excluded one `--MM-DD`. */
export function datesAfter(
  calendar: Pick<Calendar, 'excludedDates' | 'includedDates'>,
  action: DayAction,
  options: { name?: string; everyYear?: boolean } = {},
): { excludedDates: CalendarDate[]; includedDates: CalendarDate[] } {
  let excludedDates = calendar.excludedDates.slice()
  let includedDates = calendar.includedDates.slice()
  const name = (options.name ?? '').trim()
  const named = (date: string): CalendarDate => (name ? { date, name } : { date })
  switch (action.kind) {
    case 'exclude': {
      const date = options.everyYear ? monthDayOf(action.date) : action.date
      excludedDates = excludedDates.filter((d) => d.date !== date)
      excludedDates.push(named(date))
      break
    }
    case 'include':
      includedDates = includedDates.filter((d) => d.date !== action.date)
      includedDates.push(named(action.date))
      break
    case 'removeExcluded': {
      const date = action.everyYear ? monthDayOf(action.date) : action.date
      excludedDates = excludedDates.filter((d) => d.date !== date)
      break
    }
    case 'removeIncluded':
      includedDates = includedDates.filter((d) => d.date !== action.date)
      break
  }
  return { excludedDates, includedDates }
}

/** A date as a body sends it: its day and name (the server keeps an import's source itself). */
function bodyDate(d: CalendarDate): CalendarDate {
  return d.name ? { date: d.date, name: d.name } : { date: d.date }
}

/** The settings the form edits. */
export interface CalendarSettings {
  name: string
  description: string
  timeZone: string
  /** Every weekday ticked saves as null: every day is a business day. */
  businessDays: Weekday[]
  excludedTimes: CalendarTimeRange[]
}

export function settingsOf(c: Calendar): CalendarSettings {
  return {
    name: c.name,
    description: c.description,
    timeZone: c.timeZone,
    businessDays: c.businessDays ? WEEKDAYS.filter((w) => c.businessDays!.includes(w)) : [...WEEKDAYS],
    excludedTimes: c.excludedTimes.map((r) => ({ start: r.start, end: r.end })),
  }
}

/** A create body (PUT adds the version read), with `dates` as they are to be saved. */
export function calendarBody(
  settings: CalendarSettings,
  dates: Pick<Calendar, 'excludedDates' | 'includedDates'>,
): CalendarInput {
  const every = WEEKDAYS.every((w) => settings.businessDays.includes(w))
  return {
    name: settings.name.trim(),
    description: settings.description.trim(),
    timeZone: settings.timeZone,
    businessDays: every ? null : WEEKDAYS.filter((w) => settings.businessDays.includes(w)),
    excludedDates: dates.excludedDates.map(bodyDate),
    includedDates: dates.includedDates.map(bodyDate),
    excludedTimes: settings.excludedTimes.map((r) => ({ start: r.start.trim(), end: r.end.trim() })),
  }
}

/** The weekly rule as runs of consecutive weekdays (indexes into WEEKDAYS): Mon-Fri is [[0, 4]]. */
export function weekdayRuns(days: readonly Weekday[] | null | undefined): [number, number][] {
  const on = WEEKDAYS.map((w) => (days ? days.includes(w) : true))
  const runs: [number, number][] = []
  for (let i = 0; i < 7; i++) {
    if (!on[i]) continue
    const last = runs[runs.length - 1]
    if (last && last[1] === i - 1) last[1] = i
    else runs.push([i, i])
  }
  return runs
}

/**
 * An import's source name from the file's name, as POST import's `source` takes it: lower case,
 * the extension left out, other characters as '-', at most 64; "ics" when nothing is left.
 */
export function sourceFromFileName(fileName: string): string {
  const base = fileName.replace(/\.(ics|ical|ifb|icalendar)$/i, '')
  const cleaned = base
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64)
    .replace(/[-.]+$/, '')
  return CALENDAR_NAME.test(cleaned) ? cleaned : 'ics'
}

/** How many of the calendar's dates came from `source`. */
export function datesFromSource(c: Pick<Calendar, 'excludedDates' | 'includedDates'>, source: string): number {
  return c.excludedDates.filter((d) => d.source === source).length + c.includedDates.filter((d) => d.source === source).length
}

/** A year as GET days takes it, or undefined. */
export function yearOf(value: string | undefined): number | undefined {
  if (!value || !/^\d{4}$/.test(value)) return undefined
  const y = Number(value)
  return y >= MIN_YEAR && y <= MAX_YEAR ? y : undefined
}
