import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError, apiErrorFrom } from '@/api/errors'
import { api, call, rawRequest, setCsrfToken, setUnauthorizedHandler } from '@/api/client'

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  })
}

describe('apiErrorFrom', () => {
  it('takes code, message and field from the API error shape', () => {
    const e = apiErrorFrom(400, {
      error: { code: 'invalid', message: 'scheduleConf: minutes: 60 is out of range 0-59', field: 'scheduleConf' },
    })
    expect(e).toBeInstanceOf(ApiError)
    expect(e).toBeInstanceOf(Error)
    expect(e.status).toBe(400)
    expect(e.code).toBe('invalid')
    expect(e.message).toBe('scheduleConf: minutes: 60 is out of range 0-59')
    expect(e.field).toBe('scheduleConf')
  })

  it('leaves field undefined when the error names none', () => {
    const e = apiErrorFrom(409, { error: { code: 'conflict', message: 'the group has jobs' } })
    expect(e.code).toBe('conflict')
    expect(e.field).toBeUndefined()
  })

  it('derives the code from the status when the body is not the API shape', () => {
    expect(apiErrorFrom(404, null, 'Not Found').code).toBe('not_found')
    expect(apiErrorFrom(404, null, 'Not Found').message).toBe('404 Not Found')
    expect(apiErrorFrom(403, { message: 'x' }).code).toBe('forbidden')
    expect(apiErrorFrom(502, '').code).toBe('bad_gateway')
    expect(apiErrorFrom(500, undefined).code).toBe('internal')
    expect(apiErrorFrom(504, undefined).code).toBe('internal')
    expect(apiErrorFrom(418, undefined).code).toBe('bad_request')
    expect(apiErrorFrom(500, undefined).message).toBe('HTTP 500')
  })

  it('uses a short text body as the message, but not an HTML page', () => {
    expect(apiErrorFrom(503, 'database unavailable').message).toBe('database unavailable')
    expect(apiErrorFrom(502, '<html><body>Bad gateway</body></html>', 'Bad Gateway').message).toBe('502 Bad Gateway')
  })

  it('reads Retry-After seconds', () => {
    const e = apiErrorFrom(429, { error: { code: 'rate_limited', message: 'wait' } }, '', '30')
    expect(e.retryAfter).toBe(30)
    expect(apiErrorFrom(429, null, '', 'soon').retryAfter).toBeUndefined()
  })
})

describe('API client', () => {
  const fetchMock = vi.fn<(input: RequestInfo | URL, init?: RequestInit) => Promise<Response>>()
  const unauthorized = vi.fn<(path: string) => void>()

  beforeEach(() => {
    fetchMock.mockReset()
    unauthorized.mockReset()
    vi.stubGlobal('fetch', fetchMock)
    setUnauthorizedHandler(unauthorized)
    setCsrfToken('csrf-123')
  })
  afterEach(() => {
    vi.unstubAllGlobals()
    setUnauthorizedHandler(null)
    setCsrfToken(null)
  })

  function requestOf(callIndex = 0): Request {
    const [input, init] = fetchMock.mock.calls[callIndex]!
    return input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init)
  }

  it('answers the body of a successful call', async () => {
    fetchMock.mockResolvedValue(jsonResponse(200, { id: 7, appName: 'demo-app' }))
    const group = await call(api.GET('/groups/{id}', { params: { path: { id: 7 } } }))
    expect(group.appName).toBe('demo-app')
    const req = requestOf()
    expect(new URL(req.url).pathname).toBe('/api/v1/groups/7')
    expect(req.headers.get('X-CSRF-Token')).toBeNull()
  })

  it('sends the CSRF token on requests that change state, and cookies', async () => {
    fetchMock.mockResolvedValue(jsonResponse(200, { id: 3 }))
    await call(api.POST('/jobs/{id}/start', { params: { path: { id: 3 } } }))
    const req = requestOf()
    expect(req.method).toBe('POST')
    expect(req.headers.get('X-CSRF-Token')).toBe('csrf-123')
    expect(req.credentials).toBe('same-origin')
  })

  it('throws a typed ApiError with the field of a 400', async () => {
    fetchMock.mockResolvedValue(
      jsonResponse(400, { error: { code: 'invalid', message: 'jobDesc: is required', field: 'jobDesc' } }),
    )
    const err = await call(api.POST('/jobs', { body: { jobGroup: 1, jobDesc: '' } })).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ status: 400, code: 'invalid', field: 'jobDesc', message: 'jobDesc: is required' })
    expect(unauthorized).not.toHaveBeenCalled()
  })

  it('hands a 401 to the unauthorized handler, and still throws', async () => {
    const res = jsonResponse(401, { error: { code: 'unauthorized', message: 'log in' } })
    Object.defineProperty(res, 'url', { value: 'http://localhost/api/v1/jobs' })
    fetchMock.mockResolvedValue(res)
    const err = await call(api.GET('/jobs')).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 401, code: 'unauthorized' })
    expect(unauthorized).toHaveBeenCalledWith('/jobs')
  })

  it('does not treat a failed login or the session check as an expired session', async () => {
    for (const path of ['/auth/login', '/auth/me']) {
      const res = jsonResponse(401, { error: { code: 'unauthorized', message: 'no' } })
      Object.defineProperty(res, 'url', { value: `http://localhost/api/v1${path}` })
      fetchMock.mockResolvedValueOnce(res)
    }
    await expect(call(api.POST('/auth/login', { body: { username: 'a', password: 'b' } }))).rejects.toMatchObject({
      status: 401,
    })
    await expect(call(api.GET('/auth/me'))).rejects.toMatchObject({ status: 401 })
    expect(unauthorized).not.toHaveBeenCalled()
  })

  it('maps a network failure to status 0, code network', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'))
    await expect(call(api.GET('/jobs'))).rejects.toMatchObject({ status: 0, code: 'network' })
    await expect(rawRequest('GET', '/nodes')).rejects.toMatchObject({ status: 0, code: 'network' })
  })

  it('rawRequest builds the query, sends JSON with the CSRF token and maps errors', async () => {
    fetchMock.mockResolvedValueOnce(jsonResponse(200, { items: [] }))
    await rawRequest('GET', '/groups/5/executors', { query: { a: 1, b: undefined, c: '' } })
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/v1/groups/5/executors?a=1')
    expect(new Headers(fetchMock.mock.calls[0]![1]!.headers).get('X-CSRF-Token')).toBeNull()

    fetchMock.mockResolvedValueOnce(jsonResponse(404, { error: { code: 'not_found', message: 'no such route' } }))
    await expect(rawRequest('POST', '/x', { body: { a: 1 } })).rejects.toMatchObject({ status: 404, code: 'not_found' })
    const init = fetchMock.mock.calls[1]![1]!
    expect(new Headers(init.headers).get('X-CSRF-Token')).toBe('csrf-123')
    expect(init.body).toBe('{"a":1}')
  })
})
