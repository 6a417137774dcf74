// The logged-in user (global). The CSRF token lives with the API client (sessionStorage).
import { computed, reactive } from 'vue'
import { api, call, setCsrfToken, isApiError } from '@/api/client'
import type { User } from '@/api/types'

export const session = reactive({
  user: null as User | null,
  /** GET /auth/me has answered (with a user or a 401) since the page loaded. */
  checked: false,
})

export const isAdmin = computed(() => session.user?.role === 'admin')

let restoring: Promise<User | null> | null = null

/** Who is logged in, asked once per page load (again after a logout or an expired session). */
export function restoreSession(): Promise<User | null> {
  if (session.checked) return Promise.resolve(session.user)
  if (!restoring) {
    restoring = call(api.GET('/auth/me'))
      .then((me) => {
        session.user = me.user
        if (me.csrfToken) setCsrfToken(me.csrfToken)
        return me.user
      })
      .catch((e: unknown) => {
        if (isApiError(e) && e.status === 401) {
          session.user = null
          setCsrfToken(null)
          return null
        }
        throw e
      })
      .finally(() => {
        restoring = null
      })
      .then((u) => {
        session.checked = true
        return u
      })
  }
  return restoring
}

export async function login(username: string, password: string): Promise<User> {
  const res = await call(api.POST('/auth/login', { body: { username, password } }))
  setCsrfToken(res.csrfToken)
  session.user = res.user
  session.checked = true
  return res.user
}

/** Forgets the session locally (after a logout, or when the API says it ended). */
export function clearSession(): void {
  session.user = null
  session.checked = true
  setCsrfToken(null)
}

export async function logout(): Promise<void> {
  try {
    await call(api.POST('/auth/logout'))
  } finally {
    clearSession()
  }
}
