// The API answers every failure as {"error":{"code","message","field"?}} with a 4xx/5xx status.
// ApiError carries those parts; `status` 0 with code "network" means no answer arrived at all.

export type ApiErrorCode =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'bad_gateway'
  | 'unavailable'
  | 'internal'
  | 'bad_request'
  | 'network'

export class ApiError extends Error {
  readonly status: number
  readonly code: ApiErrorCode | string
  readonly field?: string
  /** Seconds from a 429's Retry-After header, when present. */
  readonly retryAfter?: number

  constructor(status: number, code: ApiErrorCode | string, message: string, field?: string, retryAfter?: number) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.code = code
    if (field) this.field = field
    if (retryAfter !== undefined) this.retryAfter = retryAfter
  }
}

const CODE_BY_STATUS: Record<number, ApiErrorCode> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  429: 'rate_limited',
  502: 'bad_gateway',
  503: 'unavailable',
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * The ApiError for a failed answer: its status, and the body's error object when it has the
 * API's shape (a body that is text, empty or of another shape still gives a usable error).
 */
export function apiErrorFrom(status: number, body: unknown, statusText = '', retryAfter?: string | null): ApiError {
  const fallbackCode: ApiErrorCode = CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal' : 'bad_request')
  let code: string = fallbackCode
  let message = statusText ? `${status} ${statusText}` : `HTTP ${status}`
  let field: string | undefined
  if (isRecord(body) && isRecord(body.error)) {
    const e = body.error
    if (typeof e.code === 'string' && e.code) code = e.code
    if (typeof e.message === 'string' && e.message) message = e.message
    if (typeof e.field === 'string' && e.field) field = e.field
  } else if (typeof body === 'string' && body.trim() && body.length < 300 && !body.trimStart().startsWith('<')) {
    message = body.trim()
  }
  let retry: number | undefined
  if (retryAfter) {
    const n = Number(retryAfter)
    if (Number.isFinite(n) && n >= 0) retry = n
  }
  return new ApiError(status, code, message, field, retry)
}

export function networkError(cause: unknown): ApiError {
  const msg = cause instanceof Error && cause.message ? cause.message : 'network error'
  return new ApiError(0, 'network', msg)
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}
