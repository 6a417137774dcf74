// The warning box itself, loaded with its component the first time a page asks (confirm.ts): a
// list that may delete something does not download the box before anyone clicks Delete.
import { i18n } from '@/i18n'

export async function confirmDangerBox(message: string, title: string, confirmText: string, cancelText?: string): Promise<boolean> {
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
