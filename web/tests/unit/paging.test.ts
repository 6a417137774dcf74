import { describe, expect, it } from 'vitest'
import { MAX_LIST_OFFSET, pagerTotal } from '@/utils/paging'

describe('pagerTotal', () => {
  it('uses an exact total as it is', () => {
    expect(pagerTotal(37, true, 20, MAX_LIST_OFFSET)).toBe(37)
    expect(pagerTotal(0, true, 20, MAX_LIST_OFFSET)).toBe(0)
  })

  it('offers pages up to the deepest offset the admin accepts when the count was capped', () => {
    // 10,000 counted of more: the last page offered starts at offset 10,000.
    expect(pagerTotal(10_000, false, 20, MAX_LIST_OFFSET)).toBe(10_020)
    expect(Math.ceil(pagerTotal(10_000, false, 20, MAX_LIST_OFFSET) / 20) - 1).toBe(500)
    // A size that does not divide 10,000: never a page starting beyond it.
    const total = pagerTotal(10_000, false, 30, MAX_LIST_OFFSET)
    expect((Math.ceil(total / 30) - 1) * 30).toBeLessThanOrEqual(MAX_LIST_OFFSET)
  })

  it('offers one page beyond a lower bound the admin gave up counting at', () => {
    expect(pagerTotal(41, false, 20, MAX_LIST_OFFSET)).toBe(61)
    expect(pagerTotal(0, false, 20, MAX_LIST_OFFSET)).toBe(21)
  })
})
