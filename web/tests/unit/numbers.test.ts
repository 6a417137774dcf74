import { afterEach, describe, expect, it, vi } from 'vitest'
import { formatCount } from '@/utils/numbers'

const SAMPLES = [0, -0, 1, 7, 12, 999, 1000, 1001, 9999, 10000, 12345, 100000, 999999, 1000000, 1234567, 10000000, -5, -1234, -9876543, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]

describe('formatCount', () => {
  afterEach(() => vi.restoreAllMocks())

  it.each(['en', 'zh-CN'])('writes every integer as Intl.NumberFormat does for %s', (locale) => {
    const intl = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 })
    for (const n of SAMPLES) expect(formatCount(n, locale), String(n)).toBe(intl.format(n))
    for (let n = 1; n < 1e15; n = n * 7 + 3) expect(formatCount(n, locale), String(n)).toBe(intl.format(n))
  })

  it('creates no Intl.NumberFormat for the console’s own languages', () => {
    const spy = vi.spyOn(Intl, 'NumberFormat')
    expect(formatCount(208, 'en')).toBe('208')
    expect(formatCount(10000, 'zh-CN')).toBe('10,000')
    expect(spy).not.toHaveBeenCalled()
  })

  it('leaves other languages and non-integers to Intl.NumberFormat', () => {
    expect(formatCount(1234567, 'de-DE')).toBe(new Intl.NumberFormat('de-DE').format(1234567))
    expect(formatCount(1234.6, 'en')).toBe('1,235')
    expect(formatCount(2 ** 60, 'en')).toBe(new Intl.NumberFormat('en').format(2 ** 60))
  })
})
