// A CRON job's daylight-saving policy in the job editor: what it does when the clocks go forward
// over one of its times (skip that day's time, or fire right after the gap) and when they go back
// over one (fire once, or at both times). The cron preview goes by the form's policy and lists
// the days among the shown times when New York's clocks change, with what the policy does, as
// the server words it (in English, whatever the console's language). The policy is saved and
// read back, and a schedule without wall times sends the defaults.
import type { Locator, Page } from '@playwright/test'
import { APP_NAME, expect, logIn, openSelect, test, unique } from './support'

/** The cron preview's rows, the cells of the job's zone first. */
function previewRows(page: Page): Locator {
  return page.getByRole('region', { name: 'Next 5 fire times' }).getByRole('row', { name: /UTC/ })
}
function dstNotes(page: Page): Locator {
  return page.getByRole('region', { name: 'Next 5 fire times' }).getByRole('list', { name: 'Daylight saving' }).getByRole('listitem')
}
/** The date of the first row in the job's zone. */
async function firstDate(page: Page): Promise<string> {
  const text = await previewRows(page).first().getByRole('cell').first().textContent()
  return text!.trim().slice(0, 10)
}
/** A select's chosen option as the select shows it (its list is not in the page while closed). */
function selected(page: Page, option: string): Locator {
  return page.getByText(option, { exact: true })
}
async function choose(page: Page, field: string, option: string) {
  await openSelect(page.getByRole('combobox', { name: field }))
  await page.getByRole('option', { name: option }).click()
}
async function newCronJob(page: Page, description: string, expression: string) {
  await page.goto('/jobs/new')
  await expect(page.getByRole('heading', { name: 'New job' })).toBeVisible()
  await page.getByRole('combobox', { name: 'Executor group' }).click()
  await page.getByRole('option', { name: `(${APP_NAME})` }).click()
  await page.getByLabel('Description').fill(description)
  await page.getByLabel('JobHandler').fill('echo')
  await page.getByRole('textbox', { name: 'Cron expression' }).fill(expression)
  await page.getByRole('combobox', { name: 'Time zone' }).click()
  await page.keyboard.type('New_York')
  await page.getByRole('option', { name: /^America\/New_York/ }).click()
}

const FORWARD = (day: string, what: string) =>
  `${day}: the clocks in America/New_York go forward from 02:00 to 03:00, so 02:30 does not happen: ${what}`
const BACK = (day: string) => `${day}: the clocks in America/New_York go back from 02:00 to 01:00, so 01:30 happens twice`

test.describe('daylight saving', () => {
  test('a job that fires after the gap previews 03:00 on the change day, says so, and is saved so', async ({ page, api }) => {
    await api.ensureGroup()
    await logIn(page)
    // 02:30 and 04:30 on the second Sunday of March: New York's clocks go from 02:00 to 03:00 then.
    await newCronJob(page, unique('Spring forward'), '0 30 2,4 ? 3 1#2')

    // By default (Quartz's rule) 02:30 does not happen that day: the first fire is 04:30 EDT.
    await expect(selected(page, 'Skip that day’s time (default)')).toBeVisible()
    await expect(page.getByText('does not fire that day, as in Quartz')).toBeVisible()
    await expect(previewRows(page)).toHaveCount(5)
    await expect(previewRows(page).first().getByRole('cell').first()).toHaveText(/^\d{4}-03-(0[89]|1[0-4]) 04:30:00 UTC-04:00$/)
    const day = await firstDate(page)
    await expect(dstNotes(page).first()).toHaveText(FORWARD(day, 'no fire for it that day'))

    await choose(page, 'When the clocks go forward', 'Fire right after the gap')
    await expect(page.getByText('fires at the first instant after the gap (03:00')).toBeVisible()
    await expect(previewRows(page).first().getByRole('cell').first()).toHaveText(`${day} 03:00:00 UTC-04:00`)
    await expect(previewRows(page).nth(1).getByRole('cell').first()).toHaveText(`${day} 04:30:00 UTC-04:00`)
    await expect(dstNotes(page).first()).toHaveText(FORWARD(day, 'it fires at 03:00, the first instant after the gap'))

    await page.getByRole('button', { name: 'Create' }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    await expect(page).toHaveURL(/\/jobs\/\d+$/)
    const id = Number(new URL(page.url()).pathname.split('/').pop())
    const saved = await api.get(`jobs/${id}`)
    expect(saved.dstGap).toBe('FIRE_AFTER')
    expect(saved.dstRepeat).toBe('ONCE')

    // Loaded from the job: the form and its preview as they were saved.
    await page.reload()
    await expect(selected(page, 'Fire right after the gap')).toBeVisible()
    await expect(page.getByText('fires at the first instant after the gap (03:00')).toBeVisible()
    await expect(previewRows(page).first().getByRole('cell').first()).toHaveText(`${day} 03:00:00 UTC-04:00`)

    // A fixed rate has no wall times: the fields go, and the job is saved with the defaults.
    // (Element Plus draws its radios over hidden inputs: the label is what a user clicks.)
    await page.getByText('Fixed rate', { exact: true }).click()
    await expect(page.getByRole('radio', { name: 'Fixed rate' })).toBeChecked()
    await expect(page.getByRole('combobox', { name: 'When the clocks go forward' })).toHaveCount(0)
    await expect(page.getByRole('combobox', { name: 'When the clocks go back' })).toHaveCount(0)
    await page.getByRole('button', { name: 'Save' }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    const fixed = await api.get(`jobs/${id}`)
    expect(fixed.scheduleType).toBe('FIX_RATE')
    expect(fixed.dstGap).toBe('SKIP')
  })

  test('a job that fires at both times previews a repeated 01:30 twice, an hour apart', async ({ page, api }) => {
    await api.ensureGroup()
    await logIn(page)
    // 01:30 on the first Sunday of November: New York's clocks go from 02:00 back to 01:00 then.
    await newCronJob(page, unique('Fall back'), '0 30 1 ? 11 1#1')
    await expect(selected(page, 'Fire once (default)')).toBeVisible()
    await expect(page.getByText('fires once, at its second occurrence, as in Quartz')).toBeVisible()
    await expect(previewRows(page)).toHaveCount(5)
    // Once, at the second 01:30 (EST).
    await expect(previewRows(page).first().getByRole('cell').first()).toHaveText(/^\d{4}-11-0[1-7] 01:30:00 UTC-05:00$/)
    const day = await firstDate(page)
    await expect(dstNotes(page).first()).toHaveText(`${BACK(day)}: it fires once, at the second (-05:00)`)

    await choose(page, 'When the clocks go back', 'Fire at both times')
    await expect(page.getByText('A time that happens twice fires at each')).toBeVisible()
    await expect(previewRows(page).first().getByRole('cell').first()).toHaveText(`${day} 01:30:00 UTC-04:00`)
    await expect(previewRows(page).nth(1).getByRole('cell').first()).toHaveText(`${day} 01:30:00 UTC-05:00`)
    await expect(dstNotes(page).first()).toHaveText(`${BACK(day)}: it fires at both (-04:00 and -05:00)`)

    await page.getByRole('button', { name: 'Create' }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    await expect(page).toHaveURL(/\/jobs\/\d+$/)
    const saved = await api.get(`jobs/${new URL(page.url()).pathname.split('/').pop()}`)
    expect(saved.dstGap).toBe('SKIP')
    expect(saved.dstRepeat).toBe('BOTH')

    // In 中文 the fields are translated; the server's notes are shown as it writes them.
    await page.getByRole('button', { name: 'Language: English' }).click()
    await page.getByRole('menuitem', { name: '简体中文' }).click()
    await expect(page.getByRole('combobox', { name: '时钟拨回时' })).toBeVisible()
    await expect(selected(page, '两次都触发')).toBeVisible()
    await expect(page.getByText('出现两次的时间每次都触发')).toBeVisible()
    const notes = page.getByRole('region', { name: '最近 5 次触发时间' }).getByRole('list', { name: '夏令时' })
    await expect(notes.getByRole('listitem').first()).toHaveText(`${BACK(day)}: it fires at both (-04:00 and -05:00)`)
    await notes.scrollIntoViewIfNeeded()
  })
})
