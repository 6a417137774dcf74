// The job editor's JobHandler suggestions: the BEAN handlers the chosen group's live executors
// registered (GET /groups/{id}/handlers; empty for XXL-JOB's executors, which do not say). They
// only suggest: a name that is not among them stays a valid entry (its executor may not be
// online yet).
import { ref, watch, type Ref } from 'vue'
import { api, call } from '@/api/client'

/** At most this many suggestions are listed; typing narrows them down. */
export const MAX_SUGGESTIONS = 50
/** At most this many names are kept from an answer (a group takes at most 512 executors). */
export const MAX_HANDLER_NAMES = 10_000
/** The longest JobHandler a job takes (the field's maxlength). */
export const MAX_HANDLER_LENGTH = 255

/**
 * The names to suggest for what is typed, case-insensitively: those that start with it first,
 * then those that contain it elsewhere, each group in the answer's (sorted) order. Nothing typed
 * suggests every name. At most `limit`.
 */
export function matchHandlers(names: readonly string[], typed: string, limit = MAX_SUGGESTIONS): string[] {
  const q = typed.trim().toLowerCase()
  if (!q) return names.slice(0, limit)
  const starting: string[] = []
  const containing: string[] = []
  for (const name of names) {
    const at = name.toLowerCase().indexOf(q)
    if (at === 0) {
      starting.push(name)
      if (starting.length >= limit) break
    } else if (at > 0 && containing.length < limit) {
      containing.push(name)
    }
  }
  return [...starting, ...containing].slice(0, limit)
}

/**
 * The names of an answer fit to suggest: strings a job could take, each once, sorted (the API
 * sends them so; an answer that does not is not trusted to), at most MAX_HANDLER_NAMES.
 */
export function handlerNames(answer: unknown): string[] {
  if (!Array.isArray(answer)) return []
  const names = new Set<string>()
  for (const v of answer.slice(0, MAX_HANDLER_NAMES)) {
    if (typeof v === 'string' && v.trim() !== '' && v.length <= MAX_HANDLER_LENGTH) names.add(v)
  }
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * The handlers of the group `group()` names, asked again whenever it changes. Empty while none
 * is chosen, while the answer is on its way, and when it fails: the suggestions are a help, and
 * the field works without them. An answer for a group no longer chosen is dropped.
 */
export function useGroupHandlers(group: () => number | undefined): Ref<string[]> {
  const handlers = ref<string[]>([])
  let asked = 0
  watch(
    group,
    async (id) => {
      const mine = ++asked
      handlers.value = []
      if (id === undefined) return
      try {
        const res = await call(api.GET('/groups/{id}/handlers', { params: { path: { id } } }))
        if (mine === asked) handlers.value = handlerNames(res.handlers)
      } catch {
        // No suggestions: the field stays as it is without them.
      }
    },
    { immediate: true },
  )
  return handlers
}
