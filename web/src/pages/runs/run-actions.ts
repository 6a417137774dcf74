// Kill a running run, cancel a pending fire: both ask first. Shared by the list and the detail.
import { api, call } from '@/api/client'
import type { JobLog } from '@/api/types'
import { i18n } from '@/i18n'
import { confirmDanger } from '@/utils/confirm'
import { showError } from '@/utils/errors'
import { jobName } from '@/components/job-names'
import { runStateLook, stateKey } from './run-format'

const t = i18n.global.t

/** A run state's name in the current language (the raw state when unknown). */
export function stateText(state: string | undefined): string {
  const key = stateKey(state)
  return key ? t(key) : (state ?? '')
}

/** A run's state as its badge says it: "Waiting for a slot" for a pending fire held by a limit. */
export function runStateText(log: Pick<JobLog, 'state' | 'waitingForSlot'>): string {
  const key = runStateLook(log).key
  return key ? t(key) : (log.state ?? '')
}

/** A pending fire that DELETE logs/{id} can cancel: one asked for through trigger. */
export function canCancel(log: JobLog): boolean {
  return log.state === 'pending' && (log.triggerType === 'MANUAL' || log.triggerType === 'API')
}

export function canKill(log: JobLog): boolean {
  return log.state === 'triggered'
}

// Cancelling the question keeps the run.
function confirm(message: string, title: string, confirmText: string): Promise<boolean> {
  return confirmDanger(message, title, confirmText, t('runs.keep'))
}

/** Asks, then asks the executor to kill the run; answers whether the kill was accepted. */
export async function killRun(log: JobLog): Promise<boolean> {
  const name = jobName(log.jobId) ?? `#${log.jobId}`
  if (!(await confirm(t('runs.killConfirm', { id: log.id!, name }), t('runs.killTitle'), t('runs.kill')))) return false
  try {
    await call(api.POST('/logs/{id}/kill', { params: { path: { id: log.id! } } }))
    ElMessage({ type: 'success', message: t('runs.killed', { id: log.id! }), duration: 5000 })
    return true
  } catch (e) {
    showError(e)
    return false
  }
}

/** Asks, then cancels the pending fire; answers whether it is cancelled. */
export async function cancelRun(log: JobLog): Promise<boolean> {
  const name = jobName(log.jobId) ?? `#${log.jobId}`
  if (!(await confirm(t('runs.cancelConfirm', { id: log.id!, name }), t('runs.cancelTitle'), t('runs.cancel')))) return false
  try {
    await call(api.DELETE('/logs/{id}', { params: { path: { id: log.id! } } }))
    ElMessage({ type: 'success', message: t('runs.cancelled', { id: log.id! }) })
    return true
  } catch (e) {
    showError(e)
    return false
  }
}
