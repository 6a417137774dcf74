import { describe, expect, it } from 'vitest'
import { expiryDays, tokenStatus } from '@/pages/tokens/token-status'

describe('API token status', () => {
  it('revoked wins, then expiry', () => {
    expect(tokenStatus({ revokedAt: 5, expiresAt: 1 }, 10)).toBe('revoked')
    expect(tokenStatus({ revokedAt: null, expiresAt: 10 }, 10)).toBe('expired')
    expect(tokenStatus({ revokedAt: null, expiresAt: 11 }, 10)).toBe('active')
    expect(tokenStatus({ revokedAt: null, expiresAt: null }, 10)).toBe('active')
    expect(tokenStatus({}, 10)).toBe('active')
  })

  it('expiry in days within the API range', () => {
    expect(expiryDays('never', 30)).toBeNull()
    expect(expiryDays('days', 30)).toBe(30)
    expect(expiryDays('days', 0)).toBe(1)
    expect(expiryDays('days', 999)).toBe(365)
    expect(expiryDays('days', 2.6)).toBe(3)
    expect(expiryDays('days', null)).toBeNull()
  })
})
