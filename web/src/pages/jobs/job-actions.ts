// Job actions shared by the list and the editor: start/stop, copy, delete (with confirmation),
// and the list's bulk start, stop and delete of the selected jobs.
import { api, call } from '@/api/client'
import type { Job } from '@/api/types'
import { i18n } from '@/i18n'
import { errorText, showError } from '@/utils/errors'
import { confirmDelete } from '@/utils/confirm'
import { BULK_CONCURRENCY, bulkOutcome, settleLimited, type BulkAction, type BulkOutcome } from './job-bulk'

const t = i18n.global.t

/** Starts or stops scheduling; answers the updated job, or null when refused (message shown). */
export async function setScheduled(job: Job, on: boolean): Promise<Job | null> {
  try {
    const id = job.id!
    const updated = on
      ? await call(api.POST('/jobs/{id}/start', { params: { path: { id } } }))
      : await call(api.POST('/jobs/{id}/stop', { params: { path: { id } } }))
    ElMessage({ type: 'success', message: t(on ? 'jobs.started' : 'jobs.stopped', { name: job.jobDesc ?? '' }) })
    return updated
  } catch (e) {
    showError(e)
    return null
  }
}

export async function copyJob(job: Job): Promise<Job | null> {
  try {
    const copy = await call(api.POST('/jobs/{id}/copy', { params: { path: { id: job.id! } } }))
    ElMessage({ type: 'success', message: t('jobs.copied', { name: copy.jobDesc ?? '' }) })
    return copy
  } catch (e) {
    showError(e)
    return null
  }
}

/** Asks, then deletes; answers whether the job is gone. */
export async function deleteJob(job: Job): Promise<boolean> {
  if (!(await confirmDelete(t('jobs.deleteConfirm', { name: job.jobDesc ?? '' })))) return false
  try {
    await call(api.DELETE('/jobs/{id}', { params: { path: { id: job.id! } } }))
    ElMessage({ type: 'success', message: t('common.deleted') })
    return true
  } catch (e) {
    showError(e)
    return false
  }
}

function callFor(action: BulkAction, job: Job): Promise<unknown> {
  const params = { params: { path: { id: job.id! } } }
  switch (action) {
    case 'start':
      return call(api.POST('/jobs/{id}/start', params))
    case 'stop':
      return call(api.POST('/jobs/{id}/stop', params))
    case 'delete':
      return call(api.DELETE('/jobs/{id}', params))
  }
}

/** Runs `action` on every job (BULK_CONCURRENCY at a time) and answers what happened. */
export async function runBulk(action: BulkAction, jobs: readonly Job[]): Promise<BulkOutcome> {
  const results = await settleLimited(jobs, BULK_CONCURRENCY, (job) => callFor(action, job))
  return bulkOutcome(action, jobs, results, errorText)
}
