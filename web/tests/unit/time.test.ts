import { describe, expect, it } from 'vitest'
import {
  formatDuration,
  formatInZone,
  formatOffset,
  instantFromZoned,
  isValidTimeZone,
  listTimeZones,
  zonedParts,
  zoneOffsetMinutes,
} from '@/utils/time'

// 2024-07-01T13:30:05Z: summer in the north.
const SUMMER = Date.UTC(2024, 6, 1, 13, 30, 5)
// 2024-01-15T00:00:00Z: winter in the north.
const WINTER = Date.UTC(2024, 0, 15, 0, 0, 0)

describe('time zones', () => {
  it('formats an instant in a zone with its offset', () => {
    expect(formatInZone(SUMMER, 'UTC')).toBe('2024-07-01 13:30:05 UTC+00:00')
    expect(formatInZone(SUMMER, 'America/New_York')).toBe('2024-07-01 09:30:05 UTC-04:00')
    expect(formatInZone(WINTER, 'America/New_York')).toBe('2024-01-14 19:00:00 UTC-05:00')
    expect(formatInZone(SUMMER, 'Asia/Shanghai')).toBe('2024-07-01 21:30:05 UTC+08:00')
    expect(formatInZone(SUMMER, 'Asia/Kolkata')).toBe('2024-07-01 19:00:05 UTC+05:30')
    expect(formatInZone(SUMMER, 'Asia/Kathmandu')).toBe('2024-07-01 19:15:05 UTC+05:45')
    expect(formatInZone(WINTER, 'Australia/Sydney')).toBe('2024-01-15 11:00:00 UTC+11:00')
  })

  it('can leave out the offset and seconds, or add the zone name', () => {
    expect(formatInZone(SUMMER, 'Europe/Berlin', { offset: false })).toBe('2024-07-01 15:30:05')
    expect(formatInZone(SUMMER, 'Europe/Berlin', { noSeconds: true })).toBe('2024-07-01 15:30 UTC+02:00')
    expect(formatInZone(SUMMER, 'Europe/Berlin', { zoneName: true })).toBe('2024-07-01 15:30:05 UTC+02:00 (Europe/Berlin)')
  })

  it('formats midnight as 00, not 24', () => {
    expect(formatInZone(Date.UTC(2024, 2, 1, 0, 0, 0), 'UTC')).toBe('2024-03-01 00:00:00 UTC+00:00')
  })

  it('follows daylight-saving changes', () => {
    // New York springs forward on 2024-03-10 at 02:00 local (07:00Z).
    expect(zoneOffsetMinutes(Date.UTC(2024, 2, 10, 6, 59, 59), 'America/New_York')).toBe(-300)
    expect(zoneOffsetMinutes(Date.UTC(2024, 2, 10, 7, 0, 0), 'America/New_York')).toBe(-240)
    expect(formatInZone(Date.UTC(2024, 2, 10, 7, 0, 0), 'America/New_York')).toBe('2024-03-10 03:00:00 UTC-04:00')
    // And falls back on 2024-11-03: 01:30 local happens twice.
    expect(formatInZone(Date.UTC(2024, 10, 3, 5, 30), 'America/New_York')).toBe('2024-11-03 01:30:00 UTC-04:00')
    expect(formatInZone(Date.UTC(2024, 10, 3, 6, 30), 'America/New_York')).toBe('2024-11-03 01:30:00 UTC-05:00')
  })

  it('gives the wall-clock parts and weekday', () => {
    expect(zonedParts(SUMMER, 'Asia/Tokyo')).toEqual({
      year: 2024,
      month: 7,
      day: 1,
      hour: 22,
      minute: 30,
      second: 5,
      weekday: 1,
    })
  })

  it('formats offsets', () => {
    expect(formatOffset(0)).toBe('UTC+00:00')
    expect(formatOffset(480)).toBe('UTC+08:00')
    expect(formatOffset(-210)).toBe('UTC-03:30')
    expect(formatOffset(345)).toBe('UTC+05:45')
  })

  it('turns a wall-clock time in a zone back into the instant', () => {
    expect(instantFromZoned('America/New_York', 2024, 7, 1, 9, 30, 5)).toBe(SUMMER)
    expect(instantFromZoned('Asia/Shanghai', 2024, 7, 1, 21, 30, 5)).toBe(SUMMER)
    expect(instantFromZoned('UTC', 2024, 1, 15)).toBe(WINTER)
  })

  it('reads a wall-clock time the clocks skip as the same time after the gap', () => {
    // New York springs forward at 02:00 EST on 2024-03-10: 02:30 does not exist; 03:30 EDT is 07:30Z.
    expect(instantFromZoned('America/New_York', 2024, 3, 10, 2, 30)).toBe(Date.UTC(2024, 2, 10, 7, 30))
    // Santiago springs forward at midnight on 2024-09-08: that day starts at 01:00 -03 (04:00Z).
    expect(instantFromZoned('America/Santiago', 2024, 9, 8)).toBe(Date.UTC(2024, 8, 8, 4, 0))
  })

  it('reads a wall-clock time the clocks repeat as its first instant', () => {
    // New York falls back at 02:00 EDT on 2024-11-03: 01:30 EDT (05:30Z) comes first, then 01:30 EST.
    expect(instantFromZoned('America/New_York', 2024, 11, 3, 1, 30)).toBe(Date.UTC(2024, 10, 3, 5, 30))
  })

  it('knows valid zones and lists them with UTC first', () => {
    expect(isValidTimeZone('America/New_York')).toBe(true)
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false)
    expect(isValidTimeZone('')).toBe(false)
    const zones = listTimeZones()
    expect(zones[0]).toBe('UTC')
    expect(zones).toContain('Asia/Shanghai')
    expect(zones).toContain('America/New_York')
    expect(new Set(zones).size).toBe(zones.length)
  })

  it('formats durations', () => {
    expect(formatDuration(850)).toBe('850 ms')
    expect(formatDuration(1234)).toBe('1.23 s')
    expect(formatDuration(12_345)).toBe('12.3 s')
    expect(formatDuration(245_000)).toBe('4 min 5 s')
    expect(formatDuration(7_380_000)).toBe('2 h 3 min')
    expect(formatDuration(-1)).toBe('')
  })
})
