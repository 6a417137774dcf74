// Workflow actions shared by the list and the editor: start/stop scheduling, delete (asked
// first). Each shows its own outcome.
import { api, call } from '@/api/client'
import { i18n } from '@/i18n'
import { showError } from '@/utils/errors'
import { confirmDelete } from '@/utils/confirm'
import type { Workflow } from './workflow-list-query'

const t = i18n.global.t

/** Starts or stops scheduling; answers the updated workflow, or null when refused (message shown). */
export async function setWorkflowScheduled(wf: Workflow, on: boolean): Promise<Workflow | null> {
  try {
    const id = wf.id!
    const updated = on
      ? await call(api.POST('/workflows/{id}/start', { params: { path: { id } } }))
      : await call(api.POST('/workflows/{id}/stop', { params: { path: { id } } }))
    ElMessage({ type: 'success', message: t(on ? 'workflows.started' : 'workflows.stopped', { name: wf.name }) })
    return updated
  } catch (e) {
    showError(e)
    return null
  }
}

/** Asks, then deletes; answers whether the workflow is gone. */
export async function deleteWorkflow(wf: Workflow): Promise<boolean> {
  if (!(await confirmDelete(t('workflows.deleteConfirm', { name: wf.name })))) return false
  try {
    await call(api.DELETE('/workflows/{id}', { params: { path: { id: wf.id! } } }))
    ElMessage({ type: 'success', message: t('common.deleted') })
    return true
  } catch (e) {
    showError(e)
    return false
  }
}
