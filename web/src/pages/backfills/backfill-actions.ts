// Cancelling a backfill asks first (a job's pending runs are cancelled with it; a workflow's runs
// go on). Shared by the list and the backfill's page.
import { api, call } from '@/api/client'
import { i18n } from '@/i18n'
import { confirmDanger } from '@/utils/confirm'
import { showError } from '@/utils/errors'
import { jobName } from '@/components/job-names'
import type { Backfill, BackfillDetail } from './backfill-format'
import { isWorkflowBackfill } from './backfill-target'

const t = i18n.global.t

/** Asks, then cancels the backfill; answers it as cancelled, or null when kept or refused. */
export async function cancelBackfill(b: Backfill): Promise<BackfillDetail | null> {
  if (b.id === undefined) return null
  const ofWorkflow = isWorkflowBackfill(b)
  const name = ofWorkflow ? b.workflowName || `#${b.workflowId}` : (jobName(b.jobId ?? undefined) ?? `#${b.jobId}`)
  const ok = await confirmDanger(
    t(ofWorkflow ? 'backfills.cancelConfirmWorkflow' : 'backfills.cancelConfirm', { id: b.id, name }),
    t('backfills.cancelTitle'),
    t('backfills.cancel'),
    t('backfills.keep'),
  )
  if (!ok) return null
  try {
    const cancelled = await call(api.POST('/backfills/{id}/cancel', { params: { path: { id: b.id } } }))
    ElMessage({ type: 'success', message: t('backfills.cancelled', { id: b.id }) })
    return cancelled
  } catch (e) {
    showError(e)
    return null
  }
}
