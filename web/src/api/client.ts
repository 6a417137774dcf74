// The console's one way to the admin's REST API (/api/v1). Typed by the paths generated from
// ../openapi.yaml (src/api/schema.d.ts, `npm run gen:api`), through openapi-fetch:
//
//   const job = await call(api.GET('/jobs/{id}', { params: { path: { id } } }))
//
// `call` answers the body or throws an ApiError. Cookies go with every request; requests that
// change state carry X-CSRF-Token (from login, or restored by GET /auth/me). A 401 on anything
// but the session calls themselves hands over to the unauthorized handler (the router sends the
// user to /login?redirect=…&expired=1).
import createClient, { type Middleware } from 'openapi-fetch'
import type { components, paths } from './schema'
import { ApiError, apiErrorFrom, networkError } from './errors'

export { ApiError, apiErrorFrom, isApiError } from './errors'
export type Schemas = components['schemas']

export const API_BASE = '/api/v1'
const CSRF_KEY = 'cronwheel.csrf'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
/** Paths whose 401 means "not logged in / wrong password", not "your session ended". */
const SESSION_PATHS = ['/auth/login', '/auth/me']

function storage(): Storage | undefined {
  try {
    return typeof sessionStorage === 'undefined' ? undefined : sessionStorage
  } catch {
    return undefined
  }
}

// The token, or undefined until sessionStorage was read. The first touch of sessionStorage in a
// page is a synchronous trip to the browser (~10 ms on a busy machine), and a page's first load
// does not need it: GET /auth/me answers the token before any request that changes state. So it
// is read only when asked for before that, and written after the task that learnt it.
let csrfToken: string | null | undefined

export function setCsrfToken(token: string | null | undefined): void {
  const value = token ?? null
  csrfToken = value
  setTimeout(() => {
    if (csrfToken !== value) return // a later call writes its own
    const s = storage()
    if (!s) return
    if (value) s.setItem(CSRF_KEY, value)
    else s.removeItem(CSRF_KEY)
  })
}

export function getCsrfToken(): string | null {
  if (csrfToken === undefined) csrfToken = storage()?.getItem(CSRF_KEY) ?? null
  return csrfToken
}

let unauthorizedHandler: ((apiPath: string) => void) | null = null
export function setUnauthorizedHandler(fn: ((apiPath: string) => void) | null): void {
  unauthorizedHandler = fn
}

function apiPathOf(url: string): string {
  try {
    const u = new URL(url, 'http://console.invalid')
    const p = u.pathname
    return p.startsWith(API_BASE) ? p.slice(API_BASE.length) : p
  } catch {
    return url
  }
}

function notifyUnauthorized(url: string): void {
  const path = apiPathOf(url)
  if (SESSION_PATHS.includes(path)) return
  unauthorizedHandler?.(path)
}

function withCsrf(method: string, headers: Headers): void {
  const token = SAFE_METHODS.has(method.toUpperCase()) ? null : getCsrfToken()
  if (token) headers.set('X-CSRF-Token', token)
}

const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    withCsrf(request.method, request.headers)
    return request
  },
}

// The fetch is looked up on each call (not captured once), so tests can replace it.
// Outside a browser (unit tests) a Request needs an absolute URL.
const baseUrl = typeof location === 'undefined' ? `http://localhost${API_BASE}` : API_BASE
export const api = createClient<paths>({
  baseUrl,
  credentials: 'same-origin',
  fetch: (input: Request) => globalThis.fetch(input),
})
api.use(csrfMiddleware)

type Result<T> = { data?: T; error?: unknown; response: Response }

async function failure(response: Response, body: unknown): Promise<ApiError> {
  const err = apiErrorFrom(response.status, body, response.statusText, response.headers.get('Retry-After'))
  if (err.status === 401) notifyUnauthorized(response.url)
  return err
}

/** The body of a successful answer; throws ApiError otherwise. */
export async function call<T>(pending: Promise<Result<T>>): Promise<T> {
  let result: Result<T>
  try {
    result = await pending
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e
    throw networkError(e)
  }
  if (result.response.ok) return result.data as T
  throw await failure(result.response, result.error)
}

export interface RawOptions {
  query?: Record<string, string | number | boolean | undefined | null>
  body?: unknown
  signal?: AbortSignal
}

/**
 * A request to an endpoint that is not (yet) in openapi.yaml, with the same cookies, CSRF
 * header and error mapping as `call`. Prefer `api` + `call` for documented endpoints.
 */
export async function rawRequest<T>(method: string, path: string, opts: RawOptions = {}): Promise<T> {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v))
  }
  const qs = params.toString()
  const headers = new Headers({ Accept: 'application/json' })
  if (opts.body !== undefined) headers.set('Content-Type', 'application/json')
  withCsrf(method, headers)
  let response: Response
  try {
    response = await globalThis.fetch(`${API_BASE}${path}${qs ? `?${qs}` : ''}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    })
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e
    throw networkError(e)
  }
  const text = await response.text()
  let body: unknown = undefined
  if (text) {
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
  }
  if (!response.ok) throw await failure(response, body)
  return body as T
}
