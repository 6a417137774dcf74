import { describe, expect, it } from 'vitest'
import { effectiveLimit, limitKind } from '@/pages/jobs/concurrency'

describe('a job’s concurrency limits', () => {
  it('names which limits hold its fires back', () => {
    expect(limitKind(0, 0)).toBe('none')
    expect(limitKind(undefined, undefined)).toBe('none')
    expect(limitKind(0, 2)).toBe('job')
    expect(limitKind(5, 0)).toBe('group')
    expect(limitKind(5, undefined)).toBe('group')
    expect(limitKind(5, 2)).toBe('both')
  })

  it('runs at most the smaller of its own and its group’s limit, 0 when neither limits it', () => {
    expect(effectiveLimit(0, 0)).toBe(0)
    expect(effectiveLimit(5, 0)).toBe(5)
    expect(effectiveLimit(0, 3)).toBe(3)
    expect(effectiveLimit(5, 3)).toBe(3)
    expect(effectiveLimit(2, 3)).toBe(2)
    expect(effectiveLimit(undefined, 7)).toBe(7)
  })
})
