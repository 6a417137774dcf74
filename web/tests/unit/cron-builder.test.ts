import { describe, expect, it } from 'vitest'
import {
  buildCron,
  defaultCronFields,
  fieldText,
  parseCron,
  parseField,
  setField,
  type CronFields,
  type FieldSpec,
} from '@/components/schedule/cron-builder'

function fieldsOf(expr: string): CronFields {
  const r = parseCron(expr)
  if (!r.ok) throw new Error(`${expr}: ${JSON.stringify(r.error)}`)
  return r.fields
}

describe('parseCron', () => {
  it('reads every kind of field', () => {
    expect(fieldsOf('0 0/5 * * * ?')).toEqual({
      second: { kind: 'list', values: [0] },
      minute: { kind: 'step', start: 0, step: 5 },
      hour: { kind: 'every' },
      dayOfMonth: { kind: 'every' },
      month: { kind: 'every' },
      dayOfWeek: { kind: 'any' },
      year: null,
    })
    expect(fieldsOf('30 15 9-17 ? * 2-6 2025')).toMatchObject({
      second: { kind: 'list', values: [30] },
      hour: { kind: 'range', from: 9, to: 17 },
      dayOfMonth: { kind: 'any' },
      dayOfWeek: { kind: 'range', from: 2, to: 6 },
      year: { kind: 'list', values: [2025] },
    })
  })

  it('reads month and weekday names as numbers, in any case', () => {
    const f = fieldsOf('0 15 10 ? jan,Jul,DEC MON-FRI')
    expect(f.month).toEqual({ kind: 'list', values: [1, 7, 12] })
    expect(f.dayOfWeek).toEqual({ kind: 'range', from: 2, to: 6 })
    expect(fieldsOf('0 0 0 ? * SUN,SAT').dayOfWeek).toEqual({ kind: 'list', values: [1, 7] })
  })

  it('sorts and de-duplicates specific values', () => {
    expect(fieldsOf('0 30,0,15,30 * * * ?').minute).toEqual({ kind: 'list', values: [0, 15, 30] })
  })

  it('reads */N as starting at the first value of the field', () => {
    expect(fieldsOf('*/10 * * * * ?').second).toEqual({ kind: 'step', start: 0, step: 10 })
    expect(fieldsOf('0 0 0 */2 * ?').dayOfMonth).toEqual({ kind: 'step', start: 1, step: 2 })
  })

  it('keeps special Quartz syntax verbatim', () => {
    expect(fieldsOf('0 15 10 ? * 6L').dayOfWeek).toEqual({ kind: 'raw', text: '6L' })
    expect(fieldsOf('0 0 0 L * ?').dayOfMonth).toEqual({ kind: 'raw', text: 'L' })
    expect(fieldsOf('0 0 0 15W * ?').dayOfMonth).toEqual({ kind: 'raw', text: '15W' })
    expect(fieldsOf('0 0 0 LW * ?').dayOfMonth).toEqual({ kind: 'raw', text: 'LW' })
    expect(fieldsOf('0 0 0 L-3 * ?').dayOfMonth).toEqual({ kind: 'raw', text: 'L-3' })
    expect(fieldsOf('0 0 0 ? * 6#3').dayOfWeek).toEqual({ kind: 'raw', text: '6#3' })
    expect(fieldsOf('0 0 0 ? * fri#3').dayOfWeek).toEqual({ kind: 'raw', text: 'FRI#3' })
    expect(fieldsOf('0 1-5,10 * * * ?').minute).toEqual({ kind: 'raw', text: '1-5,10' })
    expect(fieldsOf('0 0 22-2 * * ?').hour).toEqual({ kind: 'raw', text: '22-2' })
    expect(fieldsOf('0 5/15,50 * * * ?').minute).toEqual({ kind: 'raw', text: '5/15,50' })
  })

  it('refuses the wrong number of fields', () => {
    expect(parseCron('* * * * *')).toEqual({ ok: false, error: { reason: 'fieldCount' } })
    expect(parseCron('0 0 0 * * ? 2025 1')).toEqual({ ok: false, error: { reason: 'fieldCount' } })
    expect(parseCron('   ')).toEqual({ ok: false, error: { reason: 'empty' } })
  })

  it('refuses values out of range, naming the field', () => {
    expect(parseCron('0 60 * * * ?')).toEqual({ ok: false, error: { reason: 'range', field: 'minute', text: '60' } })
    expect(parseCron('0 0 24 * * ?')).toMatchObject({ ok: false, error: { reason: 'range', field: 'hour' } })
    expect(parseCron('0 0 0 0 * ?')).toMatchObject({ ok: false, error: { reason: 'range', field: 'dayOfMonth' } })
    expect(parseCron('0 0 0 * 13 ?')).toMatchObject({ ok: false, error: { reason: 'range', field: 'month' } })
    expect(parseCron('0 0 0 ? * 8')).toMatchObject({ ok: false, error: { reason: 'range', field: 'dayOfWeek' } })
    expect(parseCron('0 0 0 * * ? 1969')).toMatchObject({ ok: false, error: { reason: 'range', field: 'year' } })
    expect(parseCron('0 0 1-32 * * ?')).toMatchObject({ ok: false, error: { reason: 'range', field: 'hour' } })
  })

  it('refuses bad syntax, zero steps and ? outside the day fields', () => {
    expect(parseCron('a * * * * ?')).toMatchObject({ ok: false, error: { reason: 'syntax', field: 'second' } })
    expect(parseCron('0 * * * FOO ?')).toMatchObject({ ok: false, error: { reason: 'syntax', field: 'month' } })
    expect(parseCron('0 1,,2 * * * ?')).toMatchObject({ ok: false, error: { reason: 'syntax', field: 'minute' } })
    expect(parseCron('0 0/0 * * * ?')).toMatchObject({ ok: false, error: { reason: 'step', field: 'minute' } })
    expect(parseCron('0 0/60 * * * ?')).toMatchObject({ ok: false, error: { reason: 'step', field: 'minute' } })
    expect(parseCron('? * * * * ?')).toMatchObject({ ok: false, error: { reason: 'questionMark', field: 'second' } })
    expect(parseCron('0 * * * ? *')).toMatchObject({ ok: false, error: { reason: 'questionMark', field: 'month' } })
  })
})

describe('buildCron', () => {
  it('writes each kind of field', () => {
    expect(fieldText({ kind: 'every' })).toBe('*')
    expect(fieldText({ kind: 'any' })).toBe('?')
    expect(fieldText({ kind: 'step', start: 5, step: 15 })).toBe('5/15')
    expect(fieldText({ kind: 'range', from: 9, to: 17 })).toBe('9-17')
    expect(fieldText({ kind: 'list', values: [30, 0, 15, 0] })).toBe('0,15,30')
    expect(fieldText({ kind: 'list', values: [] })).toBe('*')
    expect(fieldText({ kind: 'raw', text: '6L' })).toBe('6L')
  })

  it('writes six fields, or seven with a year', () => {
    expect(buildCron(defaultCronFields())).toBe('0 * * * * ?')
    expect(buildCron({ ...defaultCronFields(), year: { kind: 'range', from: 2025, to: 2030 } })).toBe('0 * * * * ? 2025-2030')
  })

  it('round-trips expressions in their normal form', () => {
    for (const expr of [
      '0 * * * * ?',
      '0 0/5 * * * ?',
      '0 15 10 ? * 2-6',
      '0 0 12 1,15 * ?',
      '30 0 0 1 1 ? 2030',
      '0 0 9-17 ? * 2,3,4,5,6',
      '0 15 10 ? * 6L',
      '0 0 0 L-3 * ?',
      '0 0 0 ? * 6#3 2025-2027',
      '*/1 * * * * ?'.replace('*/1', '0/1'),
    ]) {
      expect(buildCron(fieldsOf(expr)), expr).toBe(expr)
    }
  })

  it('normalizes what it reads: names, order, */N and spacing', () => {
    expect(buildCron(fieldsOf('  0   15 10 ? JAN,MAR  mon-fri '))).toBe('0 15 10 ? 1,3 2-6')
    expect(buildCron(fieldsOf('*/10 * * * * ?'))).toBe('0/10 * * * * ?')
    expect(buildCron(fieldsOf('0 30,0 * * * ?'))).toBe('0 0,30 * * * ?')
  })

  it('round-trips field models through the expression', () => {
    const samples: FieldSpec[] = [
      { kind: 'every' },
      { kind: 'step', start: 3, step: 7 },
      { kind: 'list', values: [1, 2, 12] },
      { kind: 'range', from: 2, to: 11 },
    ]
    for (const minute of samples) {
      for (const month of samples) {
        for (const year of [null, { kind: 'list', values: [2030] } as FieldSpec]) {
          const fields: CronFields = { ...defaultCronFields(), minute, month, year }
          expect(fieldsOf(buildCron(fields)), buildCron(fields)).toEqual(fields)
        }
      }
    }
  })
})

describe('setField', () => {
  it('keeps exactly one of day-of-month and day-of-week as ?', () => {
    let f = defaultCronFields() // dom *, dow ?
    f = setField(f, 'dayOfWeek', { kind: 'range', from: 2, to: 6 })
    expect(f.dayOfMonth).toEqual({ kind: 'any' })
    expect(buildCron(f)).toBe('0 * * ? * 2-6')
    f = setField(f, 'dayOfMonth', { kind: 'list', values: [1] })
    expect(f.dayOfWeek).toEqual({ kind: 'any' })
    expect(buildCron(f)).toBe('0 * * 1 * ?')
    f = setField(f, 'dayOfMonth', { kind: 'any' })
    expect(f.dayOfWeek).toEqual({ kind: 'every' })
    expect(buildCron(f)).toBe('0 * * ? * *')
  })

  it('leaves other fields alone and can drop the year', () => {
    const f = setField({ ...defaultCronFields(), year: { kind: 'list', values: [2030] } }, 'year', null)
    expect(f.year).toBeNull()
    expect(setField(defaultCronFields(), 'hour', { kind: 'list', values: [8] }).dayOfWeek).toEqual({ kind: 'any' })
  })

  it('parses single fields', () => {
    expect(parseField('5', 'hour')).toEqual({ ok: true, spec: { kind: 'list', values: [5] } })
    expect(parseField('', 'hour')).toMatchObject({ ok: false })
  })
})
