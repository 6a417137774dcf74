// Business calendars in the console (docs/scheduling.md, "Calendars"): an admin creates one,
// excludes a day by clicking it in the year view (saved at once, as the API then reads it),
// imports an .ics file whose holidays appear in the year view (yearly ones marked as such),
// imports it again to replace them, and makes a Saturday a working day; a job given the
// calendar previews the excluded day's fire as skipped, with the reason. A click made after
// someone else saved the calendar is refused with the reason and can be made again. A normal
// user sees calendars read-only, and exports one.
import type { Page } from '@playwright/test'
import { docsImage, expect, logIn, test, unique, type Api } from './support'

const DAY_MS = 86_400_000

async function deleteQuietly(api: Api, path: string) {
  try {
    await api.del(path)
  } catch {
    /* already gone */
  }
}

/** YYYY-MM-DD of an instant in UTC (the test's calendars are in UTC). */
function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** Midnight UTC of the first Monday-to-Friday day at least `days` days after today. */
function weekdayAfter(days: number): number {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())
  let t = today + days * DAY_MS
  while ([0, 6].includes(new Date(t).getUTCDay())) t += DAY_MS
  return t
}

/** The year view's button for `date` (its accessible name starts with the date). */
function dayButton(page: Page, date: string) {
  return page.getByRole('button', { name: new RegExp(`^${date}: `) })
}

/** Shows `year` in the year view with its previous and next buttons. */
async function showYear(page: Page, year: number) {
  const heading = page.getByRole('heading', { name: /^Year \d{4}$/, level: 2 })
  await expect(heading).toBeVisible()
  const shown = Number((await heading.textContent())!.trim().slice(5))
  for (let y = shown; y !== year; y += y < year ? 1 : -1) {
    await page.getByRole('button', { name: y < year ? 'Next year' : 'Previous year' }).click()
    await expect(page.getByRole('heading', { name: `Year ${y < year ? y + 1 : y - 1}`, level: 2 })).toBeVisible()
  }
}

/** An all-day VEVENT from `first` for `days` days (YYYY-MM-DD), repeating every year with `yearly`. */
function allDayEvent(uid: string, summary: string, first: string, days = 1, yearly = false): string[] {
  const compact = (ms: number) => isoDay(ms).replace(/-/g, '')
  const start = Date.parse(`${first}T00:00:00Z`)
  return [
    'BEGIN:VEVENT',
    `UID:${uid}@browser.test`,
    'DTSTAMP:20260101T000000Z',
    `DTSTART;VALUE=DATE:${compact(start)}`,
    `DTEND;VALUE=DATE:${compact(start + days * DAY_MS)}`,
    ...(yearly ? ['RRULE:FREQ=YEARLY'] : []),
    `SUMMARY:${summary}`,
    'END:VEVENT',
  ]
}

/** A company's holidays as an .ics file: three of every year, and next year's (`year`) own. */
function holidaysFile(year: number): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//cronwheel//browser tests//EN',
    ...allDayEvent('new-year', "New Year's Day", '2000-01-01', 1, true),
    ...allDayEvent('labour-day', 'Labour Day', '2000-05-01', 1, true),
    ...allDayEvent('christmas', 'Christmas Day', '2000-12-25', 1, true),
    ...allDayEvent('founders', "Founders' Day", `${year}-03-10`),
    ...allDayEvent('retreat', 'Company retreat', `${year}-08-12`, 3),
    'END:VCALENDAR',
    '',
  ].join('\r\n')
}

/** Picks `text` as the file `name` through the calendar page's Import button. */
async function importIcs(page: Page, name: string, text: string) {
  const chooser = page.waitForEvent('filechooser')
  await page.getByRole('button', { name: 'Import .ics' }).click()
  await (await chooser).setFiles({ name, mimeType: 'text/calendar', buffer: Buffer.from(text) })
}

test.describe('calendars', () => {
  const jobsAfterwards: number[] = []
  const calendarsAfterwards: number[] = []
  const usersAfterwards: number[] = []
  test.afterEach(async ({ api }) => {
    for (const id of jobsAfterwards.splice(0)) await deleteQuietly(api, `jobs/${id}`)
    for (const id of calendarsAfterwards.splice(0)) await deleteQuietly(api, `calendars/${id}`)
    for (const id of usersAfterwards.splice(0)) await deleteQuietly(api, `users/${id}`)
  })

  test('an admin builds a calendar in the year view and from an .ics file; a job’s preview shows the excluded day skipped, with why', async ({
    page,
    api,
  }) => {
    const name = unique('holidays').toLowerCase()
    const holiday = isoDay(weekdayAfter(2))
    const year = Number(holiday.slice(0, 4))
    const foundersDay = `${year + 1}-03-10`
    // The Saturday before it, for a make-up working day.
    let saturday = Date.parse(`${foundersDay}T00:00:00Z`)
    while (new Date(saturday).getUTCDay() !== 6) saturday -= DAY_MS
    const makeUp = isoDay(saturday)

    await logIn(page)
    await page.goto('/')
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('menuitem', { name: 'Calendars' }).click()
    await expect(page.getByRole('heading', { name: 'Business calendars', level: 1 })).toBeVisible()
    await page.getByRole('button', { name: 'New calendar' }).click()
    await expect(page.getByRole('heading', { name: 'New calendar', level: 1 })).toBeVisible()
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name)
    await page.getByRole('textbox', { name: 'Description', exact: true }).fill('Company holidays')
    await page.getByRole('combobox', { name: 'Time zone' }).click()
    await page.keyboard.type('UTC')
    await page.getByRole('option', { name: /^UTC \(UTC\+00:00\)$/ }).click()
    // Monday to Friday are business days by default.
    await expect(page.getByRole('checkbox', { name: 'Fri' })).toBeChecked()
    await expect(page.getByRole('checkbox', { name: 'Sat' })).not.toBeChecked()
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await expect(page).toHaveURL(/\/calendars\/\d+$/)
    const id = Number(/\/calendars\/(\d+)$/.exec(page.url())![1])
    calendarsAfterwards.push(id)
    await expect(page.getByRole('heading', { name: `Calendar ${name}`, level: 1 })).toBeVisible()

    // A business day clicked becomes a holiday with the name given.
    await showYear(page, year)
    await dayButton(page, holiday).click()
    const exclude = page.getByRole('dialog', { name: `Exclude ${holiday}` })
    await exclude.getByRole('textbox', { name: 'Name (optional)' }).fill('Browser test holiday')
    await exclude.getByRole('button', { name: 'Exclude', exact: true }).click()
    await expect(dayButton(page, holiday)).toHaveAccessibleName(`${holiday}: Excluded — Browser test holiday`)
    // Saved as shown.
    let saved = await api.get(`calendars/${id}`)
    expect(saved.timeZone).toBe('UTC')
    expect(saved.businessDays).toEqual(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'])
    expect(saved.excludedDates).toEqual([{ date: holiday, name: 'Browser test holiday', source: '', sourceUid: '' }])
    expect(saved.version).toBe(2)

    // An .ics file: its holidays join the calendar under the source named after the file, three
    // of them every year, and 1 + 3 days of next year.
    const file = holidaysFile(year + 1)
    await importIcs(page, 'Company Holidays.ics', file)
    let importing = page.getByRole('dialog', { name: 'Import Company Holidays.ics' })
    await expect(importing.getByRole('textbox', { name: 'Source name' })).toHaveValue('company-holidays')
    await importing.getByRole('button', { name: 'Import', exact: true }).click()
    await expect(importing.getByText('The calendar now holds 7 dates from company-holidays.')).toBeVisible()
    await expect(importing.getByText('No dates came from this source before.')).toBeVisible()
    await importing.getByRole('button', { name: 'Close', exact: true }).click()
    await expect(dayButton(page, `${year}-01-01`)).toHaveAccessibleName(
      `${year}-01-01: Excluded — New Year's Day (every year on --01-01; imported from company-holidays)`,
    )
    await expect(dayButton(page, holiday)).toHaveAccessibleName(`${holiday}: Excluded — Browser test holiday`)

    // The same file again replaces what its first import brought (with the version read since).
    await importIcs(page, 'Company Holidays.ics', file)
    importing = page.getByRole('dialog', { name: 'Import Company Holidays.ics' })
    await importing.getByRole('button', { name: 'Import', exact: true }).click()
    await expect(importing.getByText('They replace the 7 dates its previous import brought.')).toBeVisible()
    await importing.getByRole('button', { name: 'Close', exact: true }).click()
    await showYear(page, year + 1)
    await expect(dayButton(page, foundersDay)).toHaveAccessibleName(`${foundersDay}: Excluded — Founders' Day (imported from company-holidays)`)
    await expect(dayButton(page, `${year + 1}-08-13`)).toHaveAccessibleName(
      `${year + 1}-08-13: Excluded — Company retreat (imported from company-holidays)`,
    )

    // A Saturday clicked becomes a make-up working day.
    await dayButton(page, makeUp).click()
    const include = page.getByRole('dialog', { name: `Make ${makeUp} a working day` })
    await include.getByRole('textbox', { name: 'Name (optional)' }).fill('Make-up Saturday')
    await include.getByRole('button', { name: 'Make it a working day' }).click()
    await expect(dayButton(page, makeUp)).toHaveAccessibleName(`${makeUp}: Make-up working day — Make-up Saturday`)
    saved = await api.get(`calendars/${id}`)
    expect(saved.excludedDates.map((d: { date: string; source: string }) => [d.date, d.source])).toEqual([
      ['--01-01', 'company-holidays'],
      ['--05-01', 'company-holidays'],
      ['--12-25', 'company-holidays'],
      [holiday, ''],
      [foundersDay, 'company-holidays'],
      [`${year + 1}-08-12`, 'company-holidays'],
      [`${year + 1}-08-13`, 'company-holidays'],
      [`${year + 1}-08-14`, 'company-holidays'],
    ])
    expect(saved.includedDates).toEqual([{ date: makeUp, name: 'Make-up Saturday', source: '', sourceUid: '' }])
    expect(saved.version).toBe(5)
    // The README's picture: next year, once the click's message has gone.
    await expect(page.getByRole('alert').filter({ hasText: 'is a make-up working day' })).toHaveCount(0)
    await page.mouse.move(0, 0) // off the day it was left hovering
    await page.getByRole('heading', { name: `Year ${year + 1}`, level: 2 }).evaluate((e) => e.scrollIntoView({ block: 'start' }))
    await docsImage(page, 'calendar-year')

    // A job at noon every day, given the calendar: its preview passes over the holiday, saying why.
    const job = await api.createJob({
      jobDesc: unique('Noon report'),
      executorHandler: 'echo',
      scheduleType: 'CRON',
      scheduleConf: '0 0 12 * * ?',
      timezone: 'UTC',
    })
    jobsAfterwards.push(job.id)
    await page.goto(`/jobs/${job.id}`)
    const fires = page.getByRole('region', { name: 'Next 5 fire times' })
    await expect(fires.getByRole('row', { name: /12:00:00 UTC\+00:00/ })).toHaveCount(5)
    await expect(page.getByText('Pick a calendar to choose how the fires go by it.')).toBeVisible()
    await page.getByRole('combobox', { name: 'Calendar', exact: true }).click()
    await page.keyboard.type(name)
    await page.getByRole('option', { name: new RegExp(`^${name}`) }).click()
    await expect(page.getByText(/^A fire on one of the calendar’s excluded dates/)).toBeVisible()
    const skippedRow = fires.getByRole('row', { name: new RegExp(`^${holiday} 12:00:00 UTC\\+00:00 .* Skipped: `) })
    await expect(skippedRow).toContainText(`Skipped: excluded by calendar ${name}: ${holiday} Browser test holiday`)
    // Still five fires, the holiday's passed over (New Year's Day too, near the end of a year).
    const firesNow = fires.getByRole('row', { name: /12:00:00 UTC\+00:00/ }).filter({ hasNotText: 'Skipped:' })
    await expect(firesNow).toHaveCount(5)
    await expect(firesNow.filter({ hasText: holiday })).toHaveCount(0)
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    const savedJob = await api.get(`jobs/${job.id}`)
    expect([savedJob.calendarId, savedJob.calendarMode]).toEqual([id, 'SKIP'])
  })

  test('a day clicked after someone else saved the calendar is not saved, says why, and can be clicked again', async ({
    page,
    api,
    expectedFailures,
  }) => {
    const name = unique('conflicts').toLowerCase()
    const calendar = await api.post<{ id: number }>('calendars', { name, timeZone: 'UTC' })
    calendarsAfterwards.push(calendar.id)
    const day = isoDay(weekdayAfter(1))
    await logIn(page)
    await page.goto(`/calendars/${calendar.id}?year=${day.slice(0, 4)}`)
    await expect(dayButton(page, day)).toHaveAccessibleName(new RegExp(`^${day}: Business day`))

    await api.put(`calendars/${calendar.id}`, { name, timeZone: 'UTC', description: 'Changed elsewhere', version: 1 })
    expectedFailures.add(409, new RegExp(`^/api/v1/calendars/${calendar.id}$`))
    await dayButton(page, day).click()
    await page.getByRole('dialog', { name: `Exclude ${day}` }).getByRole('button', { name: 'Exclude', exact: true }).click()
    const refused = page.getByRole('dialog', { name: 'Changed meanwhile' })
    await expect(refused).toContainText('so your click was not saved')
    await refused.getByRole('button', { name: 'Close', exact: true }).click()
    // The calendar as it is now, the day as it was.
    await expect(page.getByText('Changed elsewhere', { exact: true })).toBeVisible()
    await expect(dayButton(page, day)).toHaveAccessibleName(new RegExp(`^${day}: Business day`))

    await dayButton(page, day).click()
    await page.getByRole('dialog', { name: `Exclude ${day}` }).getByRole('button', { name: 'Exclude', exact: true }).click()
    await expect(dayButton(page, day)).toHaveAccessibleName(`${day}: Excluded`)
    const saved = await api.get(`calendars/${calendar.id}`)
    expect(saved.description).toBe('Changed elsewhere')
    expect(saved.excludedDates.map((d: { date: string }) => d.date)).toEqual([day])
    expect(saved.version).toBe(3)
  })

  test('a normal user sees a calendar read-only, with its days named, and exports it', async ({ page, api }) => {
    const name = unique('read-only').toLowerCase()
    const year = new Date().getUTCFullYear()
    let saturday = Date.UTC(year, 0, 1)
    while (new Date(saturday).getUTCDay() !== 6) saturday += DAY_MS
    const calendar = await api.post<{ id: number }>('calendars', {
      name,
      timeZone: 'UTC',
      businessDays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
      excludedDates: [{ date: `${year}-12-24`, name: 'Christmas Eve' }],
    })
    calendarsAfterwards.push(calendar.id)
    const username = unique('reader')
    const password = 'reader-password-1'
    const user = await api.post<{ id: number }>('users', { username, password, role: 'normal', groups: [await api.ensureGroup()] })
    usersAfterwards.push(user.id)

    await logIn(page, username, password)
    await page.goto('/calendars')
    await expect(page.getByRole('heading', { name: 'Business calendars', level: 1 })).toBeVisible()
    await expect(page.getByRole('button', { name: 'New calendar' })).toHaveCount(0)
    await expect(page.getByRole('button', { name: `Delete the calendar "${name}"` })).toHaveCount(0)
    await page.getByRole('link', { name: `Open the calendar "${name}"` }).click()

    await expect(page.getByRole('heading', { name: `Calendar ${name}`, level: 1 })).toBeVisible()
    await expect(page.getByText('Only administrators change calendars: you see this one as it is.')).toBeVisible()
    await expect(page.getByRole('cell', { name: new RegExp(`^${year}-12-24: Excluded — Christmas Eve`) })).toBeVisible()
    await expect(page.getByRole('cell', { name: new RegExp(`^${isoDay(saturday)}: Not a business day`) })).toBeVisible()
    // Nothing to click or change.
    await expect(page.getByRole('button', { name: /^\d{4}-\d\d-\d\d: / })).toHaveCount(0)
    for (const action of ['Import .ics', 'Delete', 'Save', 'Add a range']) {
      await expect(page.getByRole('button', { name: action, exact: true })).toHaveCount(0)
    }
    await expect(page.getByRole('textbox', { name: 'Name', exact: true })).toBeDisabled()
    await expect(page.getByRole('checkbox', { name: 'Mon' })).toBeDisabled()

    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export .ics' }).click()
    const file = await download
    expect(file.suggestedFilename()).toBe(`${name}.ics`)
    const { readFile } = await import('node:fs/promises')
    const text = await readFile((await file.path())!, 'utf8')
    expect(text).toContain('BEGIN:VCALENDAR')
    expect(text).toContain('SUMMARY:Christmas Eve')
    expect(text).toContain(`DTSTART;VALUE=DATE:${year}1224`)
  })
})
