import { describe, expect, it } from 'vitest'
import { messages } from '@/i18n'
import type { ScheduleType } from '@/api/types'
import { DEFAULT_DST, DST_GAPS, DST_REPEATS, dstFor, dstOf, type DstPolicy } from '@/components/schedule/dst-policy'

const CHOSEN: DstPolicy = { dstGap: 'FIRE_AFTER', dstRepeat: 'BOTH' }

describe('dstFor', () => {
  it('sends the form’s policy for a CRON schedule', () => {
    expect(dstFor('CRON', CHOSEN)).toEqual({ dstGap: 'FIRE_AFTER', dstRepeat: 'BOTH' })
    expect(dstFor('CRON', { dstGap: 'FIRE_AFTER', dstRepeat: 'ONCE' })).toEqual({ dstGap: 'FIRE_AFTER', dstRepeat: 'ONCE' })
  })

  it('sends the defaults for every schedule without wall times, which the API refuses other values on', () => {
    for (const type of ['FIX_RATE', 'FIX_DELAY', 'NONE'] satisfies ScheduleType[]) {
      expect(dstFor(type, CHOSEN), type).toEqual({ dstGap: 'SKIP', dstRepeat: 'ONCE' })
    }
  })

  it('answers the two fields only, however much of the form it is given', () => {
    const form = { ...CHOSEN, scheduleType: 'CRON', jobDesc: 'Nightly', glueSource: 'echo' }
    expect(Object.keys(dstFor('CRON', form)).sort()).toEqual(['dstGap', 'dstRepeat'])
    expect(Object.keys(dstFor('NONE', form)).sort()).toEqual(['dstGap', 'dstRepeat'])
  })

  it('leaves the form’s policy and the defaults as they were, for a switch back to CRON', () => {
    const form = { ...CHOSEN }
    dstFor('CRON', form).dstRepeat = 'ONCE'
    dstFor('FIX_RATE', form).dstGap = 'FIRE_AFTER'
    expect(form).toEqual(CHOSEN)
    expect(DEFAULT_DST).toEqual({ dstGap: 'SKIP', dstRepeat: 'ONCE' })
    expect(dstFor('NONE', form)).toEqual({ dstGap: 'SKIP', dstRepeat: 'ONCE' })
  })
})

describe('dstOf', () => {
  it('reads a job’s policy', () => {
    expect(dstOf({ dstGap: 'FIRE_AFTER', dstRepeat: 'BOTH' })).toEqual(CHOSEN)
    expect(dstOf({ dstGap: 'SKIP', dstRepeat: 'BOTH' })).toEqual({ dstGap: 'SKIP', dstRepeat: 'BOTH' })
  })

  it('reads a job without the fields as having Quartz’s rules', () => {
    expect(dstOf({})).toEqual({ dstGap: 'SKIP', dstRepeat: 'ONCE' })
    expect(dstOf({ dstRepeat: 'BOTH' })).toEqual({ dstGap: 'SKIP', dstRepeat: 'BOTH' })
  })
})

describe('the editor’s options', () => {
  it('offers every value of the API, the default first', () => {
    expect(DST_GAPS).toEqual(['SKIP', 'FIRE_AFTER'])
    expect(DST_REPEATS).toEqual(['ONCE', 'BOTH'])
  })

  it('names and explains every option in every language', () => {
    for (const [language, tree] of Object.entries(messages)) {
      const dst = (tree as { schedule: { dst: Record<string, Record<string, string>> } }).schedule.dst
      for (const g of DST_GAPS) {
        expect(dst.gaps?.[g], `${language} gaps.${g}`).toBeTruthy()
        expect(dst.gapHelp?.[g], `${language} gapHelp.${g}`).toBeTruthy()
      }
      for (const r of DST_REPEATS) {
        expect(dst.repeats?.[r], `${language} repeats.${r}`).toBeTruthy()
        expect(dst.repeatHelp?.[r], `${language} repeatHelp.${r}`).toBeTruthy()
      }
    }
  })
})
