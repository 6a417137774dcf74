// Concurrency limits and backfills: a group's "runs at once" and a job's limit and priority set
// in their editors and read back through the API (a refusal under its field); a backfill of a
// fixed-rate job over the last hour previewed in the job's zone or the browser's, started, run
// to the end and listed with its runs, then previewed again to show the instants that already
// ran; a running backfill cancelled after asking; and a fire held by its group's limit shown as
// "Waiting for a slot" in the run list and on its page until a slot frees.
import type { Page } from '@playwright/test'
import { APP_NAME, expect, logIn, test, unique, type Api } from './support'

/** Sets an Element Plus number input as a user does: types, then leaves the field. */
async function setNumber(page: Page, label: string, value: number) {
  const input = page.getByLabel(label, { exact: true })
  await input.fill(String(value))
  await input.press('Tab')
  await expect(input).toHaveValue(String(value))
}

/** Clicks Save and waits for the server's answer to the save. */
async function save(page: Page) {
  const answered = page.waitForResponse((r) => r.request().method() === 'PUT' && /\/api\/v1\/(groups|jobs)\/\d+$/.test(new URL(r.url()).pathname))
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  expect((await answered).status()).toBe(200)
  await expect(page.getByText('Saved', { exact: true })).toBeVisible()
}

interface Run {
  id: number
  state: string
  triggerType: string
  scheduledTime: number
  waitingForSlot?: boolean
  backfillId?: number | null
}

async function runsOf(api: Api, query: string, done: (runs: Run[]) => boolean, timeout = 20_000): Promise<Run[]> {
  let runs: Run[] = []
  await expect
    .poll(
      async () => {
        runs = (await api.get<{ items: Run[] }>(`logs?${query}&limit=100`)).items
        return done(runs)
      },
      { timeout },
    )
    .toBe(true)
  return runs
}

test.describe('concurrency limits and backfills', () => {
  const jobs: number[] = []
  const groups: number[] = []
  test.afterAll(async ({ api }) => {
    for (const id of jobs.splice(0)) await api.del(`jobs/${id}`)
    for (const id of groups.splice(0)) await api.del(`groups/${id}`)
  })

  test('a group’s runs at once and a job’s limit and priority are saved, read back, and a refusal shows under its field', async ({
    page,
    api,
    expectedFailures,
  }) => {
    // The test changes one save's body to a priority the server refuses.
    expectedFailures.add(400, /^\/api\/v1\/jobs\/\d+$/)
    const appName = unique('limited')
    const group = await api.post<{ id: number; maxRunning: number }>('groups', { appName, title: 'Limited group', addressType: 0 })
    groups.push(group.id)
    expect(group.maxRunning).toBe(0)

    await logIn(page)
    await page.goto(`/groups/${group.id}`)
    await expect(page.getByRole('heading', { name: `Executor group: ${appName}` })).toBeVisible()
    await expect(page.getByText('At most this many of the group\'s runs at once, across all its executors.', { exact: false })).toBeVisible()
    const summary = page.getByRole('row').filter({ has: page.getByText('Runs at once', { exact: true }) })
    await expect(summary).toContainText('No limit')
    await setNumber(page, 'Runs at once', 3)
    await save(page)
    expect((await api.get(`groups/${group.id}`)).maxRunning).toBe(3)
    await expect(summary).toContainText('3')
    await page.reload()
    await expect(page.getByLabel('Runs at once', { exact: true })).toHaveValue('3')
    // The list says it too.
    await page.goto(`/groups?text=${appName}`)
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: appName }) })
    await expect(row.getByRole('cell').nth(3)).toHaveText('3')

    const job = await api.createJob({ jobGroup: group.id, jobDesc: unique('Limited job'), executorHandler: 'echo' })
    jobs.push(job.id)
    await page.goto(`/jobs/${job.id}`)
    await expect(page.getByRole('heading', { name: `Job #${job.id}: ${job.jobDesc}` })).toBeVisible()
    await expect(page.getByRole('heading', { name: 'Concurrency' })).toBeVisible()
    const note = page.getByRole('status', { name: 'Limits on this job' })
    await expect(note).toHaveText('Its group runs at most 3 runs at once across all its jobs; this job has no limit of its own.')
    await expect(page.getByText('higher priorities go out first', { exact: false })).toBeVisible()
    await setNumber(page, 'Runs at once', 2)
    await setNumber(page, 'Priority', 7)
    await expect(note).toHaveText('At most 2 of this job’s runs at once, and 3 of its group’s: at most 2 of this job at once.')
    await save(page)
    expect(await api.get(`jobs/${job.id}`)).toMatchObject({ maxConcurrent: 2, priority: 7 })
    await page.reload()
    await expect(page.getByLabel('Runs at once', { exact: true })).toHaveValue('2')
    await expect(page.getByLabel('Priority', { exact: true })).toHaveValue('7')

    // A priority the server refuses (the field itself stops at ±1000): its message under the field.
    await page.route(`**/api/v1/jobs/${job.id}`, async (route) => {
      const request = route.request()
      if (request.method() !== 'PUT') return route.continue()
      const body = { ...JSON.parse(request.postData() ?? '{}'), priority: 1001 }
      await route.continue({ postData: JSON.stringify(body) })
    })
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    const error = page.getByText(/^priority: 1001 is out of range/)
    await expect(error).toBeVisible()
    const field = page.getByLabel('Priority', { exact: true })
    const [fieldBox, errorBox] = [await field.boundingBox(), await error.boundingBox()]
    expect(errorBox!.y).toBeGreaterThan(fieldBox!.y + fieldBox!.height)
    expect(Math.abs(errorBox!.x - fieldBox!.x)).toBeLessThan(60)
    await page.unroute(`**/api/v1/jobs/${job.id}`)
    expect(await api.get(`jobs/${job.id}`)).toMatchObject({ maxConcurrent: 2, priority: 7 })
  })

  test('a backfill of the last hour is previewed, started, runs to the end and is listed with its runs', async ({ page, api }) => {
    // Every ten minutes from the range's start: six instants in an hour.
    const job = await api.createJob({
      jobDesc: unique('Backfilled'),
      executorHandler: 'echo',
      executorParam: 'backfilled',
      scheduleType: 'FIX_RATE',
      scheduleConf: '600',
      timezone: 'Asia/Shanghai',
    })
    jobs.push(job.id)

    await logIn(page)
    await page.goto(`/jobs/${job.id}`)
    await expect(page.getByRole('heading', { name: `Job #${job.id}: ${job.jobDesc}` })).toBeVisible()
    await page.getByRole('button', { name: 'Backfill…' }).click()
    const dialog = page.getByRole('dialog', { name: `Backfill "${job.jobDesc}"` })
    await expect(dialog).toBeVisible()
    // The times are read in the job's zone, unless the user picks the browser's.
    await expect(dialog.getByRole('radio', { name: 'The job’s zone, Asia/Shanghai' })).toBeChecked()
    const from = dialog.getByLabel('From', { exact: true })
    const to = dialog.getByLabel('To', { exact: true })
    const fromShanghai = await from.inputValue()
    expect(fromShanghai).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:00$/)
    const toShanghai = await to.inputValue()
    const [fromMs, toMs] = [Date.parse(`${fromShanghai.replace(' ', 'T')}+08:00`), Date.parse(`${toShanghai.replace(' ', 'T')}+08:00`)]
    expect(toMs - fromMs).toBe(3_600_000)
    expect(Math.abs(Date.now() - toMs)).toBeLessThan(120_000)

    // Berlin is six or seven hours behind Shanghai: the same instants, read there.
    await dialog.getByRole('radio', { name: 'Your browser’s zone, Europe/Berlin' }).check({ force: true })
    await expect(from).not.toHaveValue(fromShanghai)
    const berlinOffset = (Date.parse(`${(await from.inputValue()).replace(' ', 'T')}Z`) - fromMs) / 3_600_000
    expect([1, 2]).toContain(berlinOffset)
    await dialog.getByRole('radio', { name: 'The job’s zone, Asia/Shanghai' }).check({ force: true })
    await expect(from).toHaveValue(fromShanghai)

    await dialog.getByRole('radio', { name: 'Run them again' }).check({ force: true })
    await setNumber(page, 'At most at once', 2)
    await dialog.getByRole('button', { name: 'Preview' }).click()
    const preview = dialog.getByRole('region', { name: 'What the backfill would run' })
    await expect(preview).toContainText('6 instants in the range; 0 already ran; 6 would run.')
    const instants = preview.getByRole('listitem')
    await expect(instants).toHaveCount(6)
    await expect(instants.first()).toHaveText(`${fromShanghai} UTC+08:00`)

    await dialog.getByRole('button', { name: 'Start' }).click()
    const started = page.getByText(/^Backfill #\d+ is running: 6 instants\./)
    await expect(started).toBeVisible()
    const backfillId = Number(/#(\d+)/.exec((await started.textContent())!)![1])
    await page.getByRole('link', { name: 'Open the backfill' }).click()
    await expect(page.getByRole('heading', { name: `Backfill #${backfillId}: #${job.id} ${job.jobDesc}` })).toBeVisible()
    // Its pumps write two at a time; the page follows until every run ended.
    const state = page.locator('.page-header .el-tag')
    await expect(state).toHaveText('Done', { timeout: 40_000 })
    await expect(page.getByRole('row').filter({ has: page.getByText('Runs by state', { exact: true }) })).toContainText('Succeeded: 6')
    await expect(page.getByRole('row').filter({ has: page.getByText('Progress', { exact: true }) })).toContainText('6 of 6 instants')
    const runTable = page.getByRole('table', { name: `Runs of backfill ${backfillId}` })
    await expect(runTable.getByRole('link', { name: /^Details of run \d+$/ })).toHaveCount(6)

    const runs = await runsOf(api, `backfillId=${backfillId}`, (r) => r.length === 6)
    expect(runs.every((r) => r.triggerType === 'BACKFILL' && r.backfillId === backfillId && r.state === 'succeeded')).toBe(true)
    expect(runs.map((r) => r.scheduledTime).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => fromMs + i * 600_000))

    // The list: its job, state and how far it got.
    await page.goto(`/backfills?jobId=${job.id}`)
    const listRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of backfill ${backfillId}` }) })
    await expect(listRow).toContainText('Done')
    await expect(listRow).toContainText(job.jobDesc)
    await expect(listRow).toContainText('6 of 6 instants')
    await expect(listRow).toContainText('by admin')

    // One of its runs says it is a backfill's, and links back to it.
    await page.goto(`/runs/${runs[0]!.id}`)
    const trigger = page.getByRole('row').filter({ has: page.getByText('Trigger type', { exact: true }) })
    await expect(trigger).toContainText(`Backfill · Backfill #${backfillId}`)
    await trigger.getByRole('link', { name: `Details of backfill ${backfillId}` }).click()
    await expect(page.getByRole('heading', { name: `Backfill #${backfillId}: #${job.id} ${job.jobDesc}` })).toBeVisible()

    // Again over the same hour, skipping what ran: every instant has run already.
    await page.goto(`/jobs/${job.id}`)
    await page.getByRole('button', { name: 'Backfill…' }).click()
    for (const [field, value] of [
      [from, fromShanghai],
      [to, toShanghai],
    ] as const) {
      await field.fill(value)
      await field.press('Enter')
      await expect(field).toHaveValue(value)
    }
    await expect(dialog.getByRole('radio', { name: 'Skip them' })).toBeChecked()
    await dialog.getByRole('button', { name: 'Preview' }).click()
    await expect(preview).toContainText('6 instants in the range; 6 already ran; 0 would run.')
    await expect(instants.first()).toContainText('already ran · skipped')
  })

  test('a running backfill is cancelled after asking', async ({ page, api }) => {
    // Each run sleeps a minute, one at a time: the backfill runs for several minutes.
    const job = await api.createJob({
      jobDesc: unique('Long backfill'),
      executorHandler: 'sleep',
      executorParam: '60',
      scheduleType: 'FIX_RATE',
      scheduleConf: '600',
    })
    jobs.push(job.id)
    const to = Math.floor(Date.now() / 60_000) * 60_000
    const created = await api.post<{ id: number; state: string }>(`jobs/${job.id}/backfill`, { from: to - 3_600_000, to, maxConcurrent: 1 })
    expect(created.state).toBe('running')
    await runsOf(api, `backfillId=${created.id}`, (r) => r.some((l) => l.state === 'triggered'))

    await logIn(page)
    await page.goto(`/backfills/${created.id}`)
    await expect(page.getByRole('heading', { name: `Backfill #${created.id}: #${job.id} ${job.jobDesc}` })).toBeVisible()
    await expect(page.locator('.page-header .el-tag')).toHaveText('Running')
    await page.getByRole('button', { name: 'Cancel backfill' }).click()
    const confirm = page.getByRole('dialog', { name: 'Cancel the backfill?' })
    await expect(confirm).toContainText(`Cancel backfill #${created.id} of "${job.jobDesc}"?`)
    // Keeping it changes nothing.
    await confirm.getByRole('button', { name: 'Keep it' }).click()
    await expect(confirm).toBeHidden()
    expect((await api.get(`backfills/${created.id}`)).state).toBe('running')
    await page.getByRole('button', { name: 'Cancel backfill' }).click()
    await confirm.getByRole('button', { name: 'Cancel backfill' }).click()
    await expect(page.getByText(`Backfill #${created.id} is cancelled.`)).toBeVisible()
    await expect(page.locator('.page-header .el-tag')).toHaveText('Cancelled')
    await expect(page.getByRole('button', { name: 'Cancel backfill' })).toHaveCount(0)
    expect((await api.get(`backfills/${created.id}`)).state).toBe('cancelled')
    // The run already sent goes on: kill it rather than wait for it.
    const [running] = await runsOf(api, `backfillId=${created.id}&status=running`, (r) => r.length === 1)
    await api.post(`logs/${running!.id}/kill`)
  })

  test('a fire held back by its group’s limit shows "Waiting for a slot" until a slot frees', async ({ page, api }) => {
    const groupId = await api.ensureGroup()
    const before = (await api.get<{ maxRunning: number }>(`groups/${groupId}`)).maxRunning
    await api.put(`groups/${groupId}`, { maxRunning: 1 })
    try {
      const job = await api.createJob({ jobDesc: unique('Held back'), executorHandler: 'sleep', executorParam: '60' })
      jobs.push(job.id)
      await api.post(`jobs/${job.id}/trigger`, {})
      await runsOf(api, `jobId=${job.id}`, (r) => r[0]?.state === 'triggered')
      await api.post(`jobs/${job.id}/trigger`, {})
      const runs = await runsOf(api, `jobId=${job.id}`, (r) => r.length === 2 && r.some((l) => l.waitingForSlot === true))
      const waiting = runs.find((r) => r.waitingForSlot)!
      const running = runs.find((r) => !r.waitingForSlot)!
      expect(waiting.state).toBe('pending')

      await logIn(page)
      await page.goto(`/runs?jobId=${job.id}`)
      const waitingRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of run ${waiting.id}` }) })
      const runningRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of run ${running.id}` }) })
      await expect(waitingRow).toContainText('Waiting for a slot')
      await expect(runningRow).toContainText('Running')
      await expect(runningRow).not.toContainText('Waiting for a slot')

      await waitingRow.getByRole('link', { name: `Details of run ${waiting.id}` }).click()
      await expect(page.getByRole('heading', { name: new RegExp(`^Run #${waiting.id}:`) })).toBeVisible()
      await expect(page.locator('.page-header .el-tag')).toHaveText('Waiting for a slot')
      await expect(page.getByText('This run waits for a slot: its job or its group runs at most so many runs at once.', { exact: false })).toBeVisible()
      await expect(page.getByRole('row').filter({ has: page.getByText('Scheduled', { exact: true }) })).toContainText(/waiting for \d+ s/)

      // The run holding the slot ends: the waiting one goes out, and its page follows.
      await api.post(`logs/${running.id}/kill`)
      await expect(page.locator('.page-header .el-tag')).toHaveText('Running', { timeout: 15_000 })
      await expect(page.getByText('This run waits for a slot', { exact: false })).toHaveCount(0)
      await api.post(`logs/${waiting.id}/kill`)
    } finally {
      await api.put(`groups/${groupId}`, { maxRunning: before })
    }
  })
})
