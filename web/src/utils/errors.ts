// Where an API error appears: a 400 naming a field of the form under that field, anything
// else as a message. A 401 shows nothing: the router is already on its way to the login page.
import { reactive } from 'vue'
import { isApiError } from '@/api/client'
import { i18n } from '@/i18n'

/** The text to show for an error of any kind. */
export function errorText(e: unknown): string {
  const t = i18n.global.t
  if (isApiError(e)) {
    if (e.code === 'network') return t('common.networkError', { message: e.message })
    if (e.status === 429 && e.retryAfter !== undefined) return t('common.errors.rateLimited', { seconds: e.retryAfter })
    return e.message
  }
  if (e instanceof Error && e.message) return e.message
  return t('common.unknownError')
}

export function showError(e: unknown): void {
  if (isApiError(e) && e.status === 401) return
  if (!isApiError(e)) console.warn(e)
  ElMessage({ type: 'error', message: errorText(e), showClose: true, duration: 6000 })
}

/**
 * Per-field error messages for a form (bind `:error="fieldErrors.name"` on el-form-item).
 * `apply(e)` puts a 400 naming one of `fields` under it and answers true; any other error is
 * shown as a message (answers false). `statuses` widens what goes under a field, for forms whose
 * API also names the field of a 409 (a name taken, a group that no longer exists).
 */
export function useFieldErrors<F extends string>(fields: readonly F[], statuses: readonly number[] = [400]) {
  const fieldErrors = reactive<Partial<Record<string, string>>>({}) as Partial<Record<F, string>>
  function clear(): void {
    for (const f of fields) delete fieldErrors[f]
  }
  function apply(e: unknown): boolean {
    if (isApiError(e) && statuses.includes(e.status) && e.field && (fields as readonly string[]).includes(e.field)) {
      ;(fieldErrors as Record<string, string>)[e.field] = e.message
      return true
    }
    showError(e)
    return false
  }
  return { fieldErrors, clear, apply }
}
