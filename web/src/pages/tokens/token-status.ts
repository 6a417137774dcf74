// Whether an API token still authenticates. Pure: unit tested.
import type { ApiToken } from '@/api/types'

export type TokenStatus = 'active' | 'expired' | 'revoked'

export function tokenStatus(token: Pick<ApiToken, 'revokedAt' | 'expiresAt'>, now: number): TokenStatus {
  if (token.revokedAt) return 'revoked'
  if (token.expiresAt && token.expiresAt <= now) return 'expired'
  return 'active'
}

/** expiresInDays for POST tokens: a whole number of days from 1 to 365, or null (never). */
export function expiryDays(mode: 'never' | 'days', days: number | null | undefined): number | null {
  if (mode === 'never' || days === null || days === undefined || !Number.isFinite(days)) return null
  return Math.min(365, Math.max(1, Math.round(days)))
}
