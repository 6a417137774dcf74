// Asking before what cannot be undone (delete, revoke, kill, clear): a warning box whose confirm
// button is red and names the action.
import { i18n } from '@/i18n'

/** Answers whether the user confirmed; cancelling or closing the box answers false. */
export async function confirmDanger(message: string, title: string, confirmText: string, cancelText?: string): Promise<boolean> {
  try {
    await ElMessageBox.confirm(message, title, {
      type: 'warning',
      confirmButtonText: confirmText,
      cancelButtonText: cancelText ?? i18n.global.t('common.cancel'),
      confirmButtonClass: 'el-button--danger',
    })
    return true
  } catch {
    return false
  }
}

/** Asks before a delete; `message` names what goes. */
export function confirmDelete(message: string): Promise<boolean> {
  const t = i18n.global.t
  return confirmDanger(message, t('common.confirmDeleteTitle'), t('common.delete'))
}
