import { describe, expect, it } from 'vitest'
import { firstStampAsUtc, inferLogOffsetMinutes } from '@/pages/runs/log-zone'

// 2026-11-28 15:00:00.000 UTC
const TRIGGER = Date.UTC(2026, 10, 28, 15, 0, 0)

describe('the zone of a run log', () => {
  it('reads the first stamped line, milliseconds included', () => {
    expect(firstStampAsUtc('2026-11-28 16:00:01.250 started\n2026-11-28 16:00:02.000 done')).toBe(Date.UTC(2026, 10, 28, 16, 0, 1, 250))
    expect(firstStampAsUtc('no stamp here\n2026-11-28 16:00:01 later line')).toBe(Date.UTC(2026, 10, 28, 16, 0, 1))
    expect(firstStampAsUtc('plain output')).toBeNull()
  })

  it('finds the executor one hour ahead of UTC from a line written just after the trigger', () => {
    expect(inferLogOffsetMinutes('2026-11-28 16:00:00.040 run 1 started', TRIGGER)).toBe(60)
  })

  it('finds zones behind UTC and quarter-hour zones', () => {
    expect(inferLogOffsetMinutes('2026-11-28 10:00:00.500 go', TRIGGER)).toBe(-300)
    expect(inferLogOffsetMinutes('2026-11-28 20:45:01.000 go', TRIGGER)).toBe(345)
    expect(inferLogOffsetMinutes('2026-11-28 15:00:00.010 go', TRIGGER)).toBe(0)
  })

  it('allows an executor clock a little behind the admin’s', () => {
    expect(inferLogOffsetMinutes('2026-11-28 15:59:57.000 go', TRIGGER)).toBe(60)
    expect(inferLogOffsetMinutes('2026-11-28 15:59:10.000 go', TRIGGER)).toBe(60)
  })

  it('cannot tell when the first line came long after the trigger', () => {
    // Seven minutes later: queued behind another run, or a zone seven minutes off; either way unknown.
    expect(inferLogOffsetMinutes('2026-11-28 16:07:00.000 go', TRIGGER)).toBeNull()
  })

  it('cannot tell without a trigger, a stamp, or with an offset no zone has', () => {
    expect(inferLogOffsetMinutes('2026-11-28 16:00:00.000 go', null)).toBeNull()
    expect(inferLogOffsetMinutes('output without stamps', TRIGGER)).toBeNull()
    expect(inferLogOffsetMinutes('2026-11-29 06:00:00.000 go', TRIGGER)).toBeNull()
  })
})
