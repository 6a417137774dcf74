import { describe, expect, it } from 'vitest'
import { auditChanges, cellText, changedKeys, fieldText, isInstant, jsonEqual, prettyJson } from '@/pages/audit/audit-diff'

describe('audit changes', () => {
  it('compares JSON values deeply, ignoring key order', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true)
    expect(jsonEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false)
    expect(jsonEqual([1, 2], [2, 1])).toBe(false)
    expect(jsonEqual(null, {})).toBe(false)
  })

  it('marks the fields an update changed', () => {
    const before = { id: 3, jobDesc: 'a', childJobId: [1], updatedAt: 1 }
    const after = { id: 3, jobDesc: 'b', childJobId: [1], updatedAt: 2, glueRemark: 'x' }
    expect(changedKeys(before, after)).toEqual(['glueRemark', 'jobDesc', 'updatedAt'])
    const rows = auditChanges(before, after)
    expect(rows.map((r) => r.key)).toEqual(['childJobId', 'glueRemark', 'id', 'jobDesc', 'updatedAt'])
    expect(rows.find((r) => r.key === 'glueRemark')).toEqual({ key: 'glueRemark', before: undefined, after: 'x', changed: true })
  })

  it('a create or a delete changes every field', () => {
    expect(changedKeys(null, { a: 1, b: 2 })).toEqual(['a', 'b'])
    expect(changedKeys({ a: 1 }, null)).toEqual(['a'])
    expect(changedKeys(null, null)).toEqual([])
  })

  it('formats values', () => {
    expect(cellText('x')).toBe('x')
    expect(cellText([1, 2])).toBe('[1,2]')
    expect(cellText(undefined)).toBe('')
    expect(cellText(null)).toBe('null')
    expect(prettyJson({ b: 1, a: { d: 1, c: 2 } })).toBe('{\n  "a": {\n    "c": 2,\n    "d": 1\n  },\n  "b": 1\n}')
    expect(prettyJson(null)).toBe('')
  })

  it('shows epoch-millisecond fields as times, and leaves other numbers and unset times alone', () => {
    const fmt = (ms: number) => `time ${ms}`
    expect(isInstant('triggerNextTime', 1795780860000)).toBe(true)
    expect(isInstant('createdAt', 1795780860000)).toBe(true)
    expect(isInstant('leaseUntil', 1795780860000)).toBe(true)
    expect(fieldText('updatedAt', 1795780860000, fmt)).toBe('time 1795780860000')
    expect(fieldText('triggerNextTime', 0, fmt)).toBe('0')
    expect(fieldText('executorTimeout', 1795780860000, fmt)).toBe('1795780860000')
    expect(fieldText('expiresAt', null, fmt)).toBe('null')
    expect(fieldText('jobDesc', 'report', fmt)).toBe('report')
  })
})
