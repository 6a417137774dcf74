import { describe, expect, it } from 'vitest'
import { clockOffsetView } from '@/pages/groups/clock-offset'

describe('clockOffsetView', () => {
  it.each([
    ['not measured (an XXL-JOB executor, or before its second registration)', null, null, { kind: 'unknown' }],
    ['an offset without its delay', 12, null, { kind: 'unknown' }],
    ['in step', 0, 3, { kind: 'inStep', ms: 0, withinMs: 2, far: false }],
    ['the admin ahead: the executor behind', 12, 4, { kind: 'behind', ms: 12, withinMs: 2, far: false }],
    ['the admin behind: the executor ahead', -1500, 9, { kind: 'ahead', ms: 1500, withinMs: 5, far: true }],
    ['a second exactly is not far', 1000, 0, { kind: 'behind', ms: 1000, withinMs: 0, far: false }],
    ['just over a second is', 1001, 0, { kind: 'behind', ms: 1001, withinMs: 0, far: true }],
    ['a day, as far as the admin keeps', -86_400_000, 10_000, { kind: 'ahead', ms: 86_400_000, withinMs: 5000, far: true }],
  ] as const)('%s', (_what, offset, delay, expected) => {
    expect(clockOffsetView(offset, delay)).toEqual(expected)
  })
})
