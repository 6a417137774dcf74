import { describe, expect, it } from 'vitest'
import {
  addDays,
  axisLabels,
  daysInRange,
  daySeries,
  isIsoDate,
  resolveRange,
  seriesTotals,
  todayIn,
} from '@/pages/dashboard/dashboard-model'

describe('dashboard range', () => {
  it('checks dates', () => {
    expect(isIsoDate('2026-11-24')).toBe(true)
    expect(isIsoDate('2026-02-30')).toBe(false)
    expect(isIsoDate('2026-1-4')).toBe(false)
    expect(isIsoDate('')).toBe(false)
  })

  it("today depends on the zone", () => {
    const t = Date.UTC(2026, 10, 24, 23, 30) // 23:30 UTC
    expect(todayIn('UTC', t)).toBe('2026-11-24')
    expect(todayIn('Asia/Shanghai', t)).toBe('2026-11-25')
    expect(todayIn('America/New_York', Date.UTC(2026, 10, 25, 3))).toBe('2026-11-24')
  })

  it('adds and counts days across months and leap years', () => {
    expect(addDays('2026-11-24', -6)).toBe('2026-11-18')
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29')
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01')
    expect(daysInRange('2026-11-18', '2026-11-24')).toBe(7)
    expect(daysInRange('2026-11-24', '2026-11-24')).toBe(1)
  })

  it('defaults to the last 7 days, keeps a valid range', () => {
    expect(resolveRange('', '', '2026-11-24')).toEqual({ from: '2026-11-18', to: '2026-11-24', isDefault: true })
    expect(resolveRange('2026-10-01', '2026-10-31', '2026-11-24')).toEqual({ from: '2026-10-01', to: '2026-10-31', isDefault: false })
    // Reversed, invalid or too long: the default.
    expect(resolveRange('2026-10-31', '2026-10-01', '2026-11-24').isDefault).toBe(true)
    expect(resolveRange('2026-13-01', '2026-10-01', '2026-11-24').isDefault).toBe(true)
    expect(resolveRange('2024-01-01', '2026-01-01', '2026-11-24').isDefault).toBe(true)
  })
})

describe('runs per day', () => {
  it('orders the days and splits the series', () => {
    const s = daySeries([
      { day: '2026-11-24', succeeded: 5, failed: 1 },
      { day: '2026-11-23', succeeded: 2, failed: 0 },
    ])
    expect(s).toEqual({ days: ['2026-11-23', '2026-11-24'], succeeded: [2, 5], failed: [0, 1] })
    expect(seriesTotals(s)).toEqual({ succeeded: 7, failed: 1 })
  })

  it('shortens axis labels within one year', () => {
    expect(axisLabels(['2026-11-23', '2026-11-24'])).toEqual(['11-23', '11-24'])
    expect(axisLabels(['2026-12-31', '2027-01-01'])).toEqual(['2026-12-31', '2027-01-01'])
  })
})
