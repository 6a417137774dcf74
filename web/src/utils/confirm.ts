// Asking before what cannot be undone (delete, revoke, kill, clear): a warning box whose confirm
// button is red and names the action. The box is loaded on first use (confirm-box.ts).
import { i18n } from '@/i18n'

/** Answers whether the user confirmed; cancelling or closing the box answers false. */
export async function confirmDanger(message: string, title: string, confirmText: string, cancelText?: string): Promise<boolean> {
  const { confirmDangerBox } = await import('./confirm-box')
  return confirmDangerBox(message, title, confirmText, cancelText)
}

/** Asks before a delete; `message` names what goes. */
export function confirmDelete(message: string): Promise<boolean> {
  const t = i18n.global.t
  return confirmDanger(message, t('common.confirmDeleteTitle'), t('common.delete'))
}
