import { describe, expect, it } from 'vitest'
import { instantToWall, lastHour, planPreview, rezone, wallToInstant } from '@/pages/backfills/backfill-range'

// 2024-07-01T13:30:05Z: 09:30:05 in New York (UTC-4), 21:30:05 in Shanghai (UTC+8).
const SUMMER = Date.UTC(2024, 6, 1, 13, 30, 5)

describe('a backfill range read in a zone', () => {
  it('reads a wall-clock time as the instant it names in the zone', () => {
    expect(wallToInstant('2024-07-01 09:30:05', 'America/New_York')).toBe(SUMMER)
    expect(wallToInstant('2024-07-01 21:30:05', 'Asia/Shanghai')).toBe(SUMMER)
    expect(wallToInstant('2024-07-01 13:30:05', 'UTC')).toBe(SUMMER)
  })

  it('writes an instant as its wall-clock time in the zone', () => {
    expect(instantToWall(SUMMER, 'America/New_York')).toBe('2024-07-01 09:30:05')
    expect(instantToWall(SUMMER, 'Asia/Shanghai')).toBe('2024-07-01 21:30:05')
    expect(instantToWall(Date.UTC(2024, 0, 2, 3, 4, 5), 'UTC')).toBe('2024-01-02 03:04:05')
  })

  it('refuses what is not a wall-clock time, or a day the month does not have', () => {
    for (const bad of ['', null, undefined, '2024-07-01', '2024-07-01T09:30:05', '2024-13-01 00:00:00', '2024-02-30 00:00:00', '2023-02-29 00:00:00', '2024-07-01 24:00:00', '2024-07-01 09:60:00']) {
      expect(wallToInstant(bad, 'UTC'), String(bad)).toBeNull()
    }
    expect(wallToInstant('2024-02-29 00:00:00', 'UTC')).toBe(Date.UTC(2024, 1, 29))
  })

  it('reads a time the clocks skip as the instant after the gap', () => {
    // New York springs forward at 02:00 on 2024-03-10: 02:30 does not exist; 03:30 EDT is 07:30Z.
    const gap = wallToInstant('2024-03-10 02:30:00', 'America/New_York')!
    expect(gap).toBe(Date.UTC(2024, 2, 10, 7, 30))
    expect(instantToWall(gap, 'America/New_York')).toBe('2024-03-10 03:30:00')
  })

  it('keeps the instant when the zone the times are read in changes', () => {
    expect(rezone('2024-07-01 09:30:05', 'America/New_York', 'Asia/Shanghai')).toBe('2024-07-01 21:30:05')
    expect(rezone('2024-07-01 21:30:05', 'Asia/Shanghai', 'America/New_York')).toBe('2024-07-01 09:30:05')
    expect(rezone('not a time', 'UTC', 'Asia/Shanghai')).toBe('not a time')
  })

  it('starts with the last hour up to the current minute', () => {
    const now = Date.UTC(2024, 6, 1, 13, 30, 5, 250)
    expect(lastHour(now)).toEqual({ from: Date.UTC(2024, 6, 1, 12, 30), to: Date.UTC(2024, 6, 1, 13, 30) })
  })
})

describe('a backfill dry run as the dialog shows it', () => {
  const minute = (m: number) => Date.UTC(2024, 6, 1, 12, m)

  it('counts the instants, those that already ran and those it would run, and shows the first', () => {
    const instants = Array.from({ length: 60 }, (_, i) => minute(i))
    const p = planPreview({ total: 60, toRun: 58, instants, existing: [minute(1), minute(30)], onExisting: 'SKIP' }, 10)
    expect(p.total).toBe(60)
    expect(p.existing).toBe(2)
    expect(p.toRun).toBe(58)
    expect(p.shown.map((s) => s.at)).toEqual(instants.slice(0, 10))
    expect(p.shown.filter((s) => s.existing).map((s) => s.at)).toEqual([minute(1)])
    expect(p.more).toBe(50)
  })

  it('shows every instant of a short range and none of an empty one', () => {
    expect(planPreview({ total: 2, toRun: 2, instants: [minute(0), minute(5)], existing: [] }).more).toBe(0)
    const empty = planPreview({ total: 0, toRun: 0, instants: [], existing: [] })
    expect(empty).toEqual({ total: 0, existing: 0, toRun: 0, shown: [], more: 0 })
  })
})
