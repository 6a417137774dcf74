import { describe, expect, it } from 'vitest'
import {
  actionFor,
  calendarBody,
  datesAfter,
  datesFromSource,
  monthGrids,
  settingsOf,
  sourceFromFileName,
  weekdayIndex,
  weekdayRuns,
  yearOf,
  type Calendar,
  type CalendarDays,
  type DayState,
  type YearDay,
} from '@/pages/calendars/calendar-model'

function calendar(fields: Partial<Calendar> = {}): Calendar {
  return {
    id: 7,
    name: 'cn-holidays',
    description: 'China',
    timeZone: 'Asia/Shanghai',
    businessDays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
    excludedDates: [],
    includedDates: [],
    excludedTimes: [],
    version: 3,
    createdAt: 1,
    updatedAt: 2,
    ...fields,
  }
}

/** Every day of `year` as GET days answers it: business on weekdays, weekend otherwise, with overrides. */
function yearDays(year: number, overrides: Record<string, { state: DayState; name?: string }> = {}): CalendarDays['days'] {
  const days: CalendarDays['days'] = []
  for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += 86_400_000) {
    const date = new Date(t).toISOString().slice(0, 10)
    const o = overrides[date]
    const weekend = [0, 6].includes(new Date(t).getUTCDay())
    days.push({ date, state: o?.state ?? (weekend ? 'weekend' : 'business'), name: o?.name ?? '' })
  }
  return days
}

function day(fields: Partial<YearDay>): YearDay {
  return { date: '2026-10-01', day: 1, state: 'business', name: '', everyYear: false, source: '', ...fields }
}

describe('weekdayIndex', () => {
  it('counts from Monday, whatever zone the test runs in', () => {
    expect(weekdayIndex('2026-10-05')).toBe(0) // a Monday
    expect(weekdayIndex('2026-10-04')).toBe(6) // a Sunday
    expect(weekdayIndex('2024-02-29')).toBe(3) // a Thursday
  })
})

describe('monthGrids', () => {
  it('lays each month out in weeks from Monday, with empty cells outside it', () => {
    const months = monthGrids(yearDays(2026), calendar())
    expect(months.map((m) => m.month)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    // 1 January 2026 is a Thursday: three empty cells before it.
    const jan = months[0]!
    expect(jan.weeks[0]!.slice(0, 3)).toEqual([null, null, null])
    expect(jan.weeks[0]![3]!.date).toBe('2026-01-01')
    expect(jan.weeks[0]![5]!.state).toBe('weekend')
    // February 2026 starts on a Sunday and ends on a Saturday: 5 weeks, the last one full but its Sunday.
    const feb = months[1]!
    expect(feb.weeks).toHaveLength(5)
    expect(feb.weeks[0]!.filter(Boolean)).toHaveLength(1)
    expect(feb.weeks[4]![5]!.date).toBe('2026-02-28')
    expect(feb.weeks[4]![6]).toBeNull()
    expect(months.flatMap((m) => m.weeks.flat()).filter(Boolean)).toHaveLength(365)
  })

  it('tells a date of every year and an imported date from one of that year entered by hand', () => {
    const c = calendar({
      excludedDates: [
        { date: '--01-01', name: 'New Year', source: 'cn', sourceUid: 'a' },
        { date: '--10-01', name: 'National Day (every year)' },
        { date: '2026-10-01', name: 'National Day', source: '', sourceUid: '' },
        { date: '2026-10-02', name: 'Golden week', source: 'cn', sourceUid: 'b' },
      ],
      includedDates: [{ date: '2026-10-10', name: 'Make-up day' }],
    })
    const grid = monthGrids(
      yearDays(2026, {
        '2026-01-01': { state: 'excluded', name: 'New Year' },
        '2026-10-01': { state: 'excluded', name: 'National Day' },
        '2026-10-02': { state: 'excluded', name: 'Golden week' },
        '2026-10-10': { state: 'included', name: 'Make-up day' },
      }),
      c,
    )
    const byDate = new Map(grid.flatMap((m) => m.weeks.flat()).filter((d): d is YearDay => d !== null).map((d) => [d.date, d]))
    expect(byDate.get('2026-01-01')).toMatchObject({ state: 'excluded', everyYear: true, source: 'cn' })
    expect(byDate.get('2026-10-01')).toMatchObject({ state: 'excluded', everyYear: false, source: '', name: 'National Day' })
    expect(byDate.get('2026-10-02')).toMatchObject({ everyYear: false, source: 'cn' })
    expect(byDate.get('2026-10-10')).toMatchObject({ state: 'included', everyYear: false, name: 'Make-up day' })
    expect(byDate.get('2026-10-05')).toMatchObject({ state: 'business', everyYear: false, source: '' })
  })
})

describe('a click on a day', () => {
  it('excludes a business day, includes a weekend day and removes a date', () => {
    expect(actionFor(day({ state: 'business' }))).toEqual({ kind: 'exclude', date: '2026-10-01' })
    expect(actionFor(day({ state: 'weekend' }))).toEqual({ kind: 'include', date: '2026-10-01' })
    expect(actionFor(day({ state: 'excluded', everyYear: true }))).toEqual({ kind: 'removeExcluded', date: '2026-10-01', everyYear: true })
    expect(actionFor(day({ state: 'included' }))).toEqual({ kind: 'removeIncluded', date: '2026-10-01' })
  })

  it('adds an excluded date with its name, of that year or of every year', () => {
    const c = calendar({ excludedDates: [{ date: '2026-05-01', name: 'Labour Day' }] })
    expect(datesAfter(c, { kind: 'exclude', date: '2026-10-01' }, { name: ' National Day ' }).excludedDates).toEqual([
      { date: '2026-05-01', name: 'Labour Day' },
      { date: '2026-10-01', name: 'National Day' },
    ])
    expect(datesAfter(c, { kind: 'exclude', date: '2026-10-01' }, { everyYear: true }).excludedDates).toEqual([
      { date: '2026-05-01', name: 'Labour Day' },
      { date: '--10-01' },
    ])
    // The calendar read is left as it was.
    expect(c.excludedDates).toHaveLength(1)
  })

  it('removes the day’s own excluded date, or the date of every year it falls on', () => {
    const c = calendar({ excludedDates: [{ date: '--10-01', name: 'every year' }, { date: '2027-10-01', name: 'that year' }] })
    expect(datesAfter(c, { kind: 'removeExcluded', date: '2027-10-01', everyYear: false }).excludedDates).toEqual([
      { date: '--10-01', name: 'every year' },
    ])
    expect(datesAfter(c, { kind: 'removeExcluded', date: '2026-10-01', everyYear: true }).excludedDates).toEqual([
      { date: '2027-10-01', name: 'that year' },
    ])
  })

  it('adds and removes an included date', () => {
    const c = calendar({ includedDates: [{ date: '2026-09-27', name: 'Make-up' }] })
    const added = datesAfter(c, { kind: 'include', date: '2026-10-10' }, { name: 'Make-up 2' })
    expect(added.includedDates).toEqual([
      { date: '2026-09-27', name: 'Make-up' },
      { date: '2026-10-10', name: 'Make-up 2' },
    ])
    expect(added.excludedDates).toEqual([])
    expect(datesAfter(c, { kind: 'removeIncluded', date: '2026-09-27' }).includedDates).toEqual([])
  })
})

describe('calendarBody', () => {
  it('sends every weekday ticked as null, and dates without their import’s source', () => {
    const c = calendar({
      businessDays: null,
      excludedDates: [{ date: '2026-10-01', name: 'National Day', source: 'cn', sourceUid: 'x' }, { date: '--01-01' }],
      excludedTimes: [{ start: '12:00:00', end: '13:00:00' }],
    })
    const settings = settingsOf(c)
    expect(settings.businessDays).toHaveLength(7)
    expect(calendarBody(settings, c)).toEqual({
      name: 'cn-holidays',
      description: 'China',
      timeZone: 'Asia/Shanghai',
      businessDays: null,
      excludedDates: [{ date: '2026-10-01', name: 'National Day' }, { date: '--01-01' }],
      includedDates: [],
      excludedTimes: [{ start: '12:00:00', end: '13:00:00' }],
    })
  })

  it('keeps the weekly rule in the week’s order, and an empty one empty', () => {
    const settings = settingsOf(calendar())
    settings.businessDays = ['FRIDAY', 'MONDAY']
    expect(calendarBody(settings, calendar()).businessDays).toEqual(['MONDAY', 'FRIDAY'])
    settings.businessDays = []
    expect(calendarBody(settings, calendar()).businessDays).toEqual([])
  })
})

describe('weekdayRuns', () => {
  it('groups consecutive business weekdays', () => {
    expect(weekdayRuns(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'])).toEqual([[0, 4]])
    expect(weekdayRuns(['MONDAY', 'WEDNESDAY', 'THURSDAY', 'SUNDAY'])).toEqual([
      [0, 0],
      [2, 3],
      [6, 6],
    ])
    expect(weekdayRuns(null)).toEqual([[0, 6]])
    expect(weekdayRuns([])).toEqual([])
  })
})

describe('sourceFromFileName', () => {
  it('makes a source name the import takes', () => {
    expect(sourceFromFileName('cn-holidays.ics')).toBe('cn-holidays')
    expect(sourceFromFileName('Public Holidays (DE) 2026.ICS')).toBe('public-holidays-de-2026')
    expect(sourceFromFileName('__über.ics')).toBe('ber')
    expect(sourceFromFileName('日历.ics')).toBe('ics')
    expect(sourceFromFileName(`${'a'.repeat(70)}.ics`)).toBe('a'.repeat(64))
  })
})

describe('datesFromSource', () => {
  it('counts the dates an import brought', () => {
    const c = calendar({
      excludedDates: [
        { date: '2026-10-01', source: 'cn' },
        { date: '2026-10-02', source: 'cn' },
        { date: '2026-10-03', source: '' },
      ],
      includedDates: [{ date: '2026-10-10', source: 'other' }],
    })
    expect(datesFromSource(c, 'cn')).toBe(2)
    expect(datesFromSource(c, 'other')).toBe(1)
    expect(datesFromSource(c, 'none')).toBe(0)
  })
})

describe('yearOf', () => {
  it('reads a year GET days takes, and nothing else', () => {
    expect(yearOf('2026')).toBe(2026)
    expect(yearOf('1969')).toBeUndefined()
    expect(yearOf('3000')).toBeUndefined()
    expect(yearOf('20x6')).toBeUndefined()
    expect(yearOf(undefined)).toBeUndefined()
  })
})
