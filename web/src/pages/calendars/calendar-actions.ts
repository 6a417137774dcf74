// Calendar actions shared by the list and the calendar's page: export as .ics, delete (asked
// first; refused while jobs or workflows name the calendar, which the message names), and the
// weekly rule in words. Each shows its own outcome.
import { api, call, isApiError } from '@/api/client'
import { i18n } from '@/i18n'
import { showError } from '@/utils/errors'
import { confirmDelete } from '@/utils/confirm'
import { saveText } from '@/utils/download'
import { WEEKDAYS, weekdayRuns, type Calendar, type Weekday } from './calendar-model'

const t = i18n.global.t

/** The calendar's excluded dates as an iCalendar file the browser downloads (`<name>.ics`). */
export async function exportCalendar(c: Calendar): Promise<void> {
  try {
    const text = await call(
      api.GET('/calendars/{id}/export', {
        params: { path: { id: c.id } },
        headers: { Accept: 'text/calendar' },
        parseAs: 'text',
      }),
    )
    saveText(`${c.name}.ics`, text, 'text/calendar')
  } catch (e) {
    showError(e)
  }
}

/** Asks, then deletes; answers whether the calendar is gone. */
export async function deleteCalendar(c: Calendar): Promise<boolean> {
  if (!(await confirmDelete(t('calendars.deleteConfirm', { name: c.name })))) return false
  try {
    await call(api.DELETE('/calendars/{id}', { params: { path: { id: c.id } } }))
    ElMessage({ type: 'success', message: t('common.deleted') })
    return true
  } catch (e) {
    if (isApiError(e) && e.status === 409) {
      ElMessage({ type: 'error', message: t('calendars.deleteRefused', { message: e.message }), showClose: true, duration: 10000 })
    } else {
      showError(e)
    }
    return false
  }
}

/** "Mon–Fri", "Mon, Wed–Thu", "Every day", "Included dates only". */
export function weeklyRuleText(days: readonly Weekday[] | null | undefined): string {
  const runs = weekdayRuns(days)
  if (runs.length === 1 && runs[0]![0] === 0 && runs[0]![1] === 6) return t('calendars.everyDay')
  if (runs.length === 0) return t('calendars.noWeekday')
  const name = (i: number) => t(`calendars.weekdays.${WEEKDAYS[i]!}`)
  return runs.map(([a, b]) => (a === b ? name(a) : `${name(a)}–${name(b)}`)).join(', ')
}
