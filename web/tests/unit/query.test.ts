import { describe, expect, it } from 'vitest'
import { compactQuery, queryInt, queryString } from '@/utils/query'

describe('URL query helpers', () => {
  it('reads strings and whole numbers', () => {
    const q = { page: '3', group: ['7', '8'], text: 'backup', bad: '3x', neg: '-2' }
    expect(queryString(q, 'text')).toBe('backup')
    expect(queryString(q, 'group')).toBe('7')
    expect(queryString(q, 'missing')).toBe('')
    expect(queryInt(q, 'page', 1)).toBe(3)
    expect(queryInt(q, 'bad', 1)).toBe(1)
    expect(queryInt(q, 'neg', 0)).toBe(-2)
    expect(queryInt(q, 'missing', undefined)).toBeUndefined()
  })

  it('drops empty values and defaults', () => {
    expect(compactQuery({ page: 1, size: 20, text: '', group: 4, status: undefined }, { page: 1, size: 20 })).toEqual({
      group: '4',
    })
    expect(compactQuery({ page: 2, status: 0 }, { page: 1 })).toEqual({ page: '2', status: '0' })
  })
})
