// Job names for lists that only hold job ids (runs, failures): asked once per job and kept for
// the page's life. A job that cannot be read (deleted, another group's) is remembered as such.
import { reactive } from 'vue'
import { api, call } from '@/api/client'
import type { Job } from '@/api/types'

const names = reactive(new Map<number, string | null>())
const pending = new Map<number, Promise<void>>()

export function rememberJobs(jobs: Job[]): void {
  for (const j of jobs) if (j.id !== undefined) names.set(j.id, j.jobDesc ?? '')
}

/** Loads the names not known yet (errors leave the id without a name). */
export async function loadJobNames(ids: Iterable<number | undefined>): Promise<void> {
  const waits: Promise<void>[] = []
  for (const id of new Set(ids)) {
    if (id === undefined || names.has(id)) continue
    let p = pending.get(id)
    if (!p) {
      p = call(api.GET('/jobs/{id}', { params: { path: { id } } }))
        .then((j) => void names.set(id, j.jobDesc ?? ''))
        .catch(() => void names.set(id, null))
        .finally(() => pending.delete(id))
      pending.set(id, p)
    }
    waits.push(p)
  }
  await Promise.all(waits)
}

/** "#12 Nightly backup", or "#12" while (or when) the name is unknown. */
export function jobLabel(id: number | undefined): string {
  if (id === undefined) return ''
  const name = names.get(id)
  return name ? `#${id} ${name}` : `#${id}`
}

export function jobName(id: number | undefined): string | undefined {
  return id === undefined ? undefined : (names.get(id) ?? undefined)
}
