// Retries with back-off: the job editor's back-off (a fixed interval, or exponential by a
// multiplier up to a longest wait) and jitter, with the preview of the waits as the server
// computes them, saved and read back through the API, and a refusal of the server under the field
// it names; and a failed run's page saying when its retry is due, counting down while it waits.
import type { Page } from '@playwright/test'
import { APP_NAME, expect, logIn, openSelect, test, unique } from './support'

/** Sets an Element Plus number input as a user does: types, then leaves the field. */
async function setNumber(page: Page, label: string, value: number) {
  const input = page.getByLabel(label, { exact: true })
  await input.fill(String(value))
  await input.press('Tab')
  await expect(input).toHaveValue(String(value))
}
async function choose(page: Page, field: string, option: string) {
  await openSelect(page.getByRole('combobox', { name: field }))
  await page.getByRole('option', { name: option }).click()
}

interface Run {
  id: number
  state: string
  triggerType: string
  parentLogId?: number | null
  handleTime?: number | null
}

test.describe('retries', () => {
  const jobs: number[] = []
  test.afterAll(async ({ api }) => {
    for (const id of jobs.splice(0)) await api.del(`jobs/${id}`)
  })

  test('an exponential back-off previews its waits, is saved and read back, and a refusal shows under its field', async ({
    page,
    api,
    expectedFailures,
  }) => {
    // The test changes one save's body to a multiplier the server refuses.
    expectedFailures.add(400, /^\/api\/v1\/jobs\/\d+$/)
    await api.ensureGroup()
    const name = unique('Backed off')
    await logIn(page)
    await page.goto('/jobs/new')
    await expect(page.getByRole('heading', { name: 'New job' })).toBeVisible()
    await page.getByRole('combobox', { name: 'Executor group' }).click()
    await page.getByRole('option', { name: `(${APP_NAME})` }).click()
    await page.getByLabel('Description').fill(name)
    await page.getByLabel('JobHandler').fill('echo')

    const preview = page.getByRole('status', { name: 'Retry waits' })
    await expect(preview).toHaveText('A failed run is not retried.')
    await setNumber(page, 'Retries on failure', 5)
    await setNumber(page, 'Retry interval (seconds)', 10)
    // A fixed interval: the same wait every time, and no exponential fields.
    await expect(page.getByText('Fixed interval', { exact: true })).toBeVisible()
    await expect(preview).toHaveText('Each of the 5 retries waits 10 s.')
    await expect(page.getByLabel('Multiplier', { exact: true })).toHaveCount(0)
    await expect(page.getByLabel('Longest wait (seconds)', { exact: true })).toHaveCount(0)

    await choose(page, 'Back-off', 'Exponential')
    await expect(page.getByText('Each retry waits the multiplier times longer than the one before, up to the ceiling.')).toBeVisible()
    await expect(page.getByText('Seconds before the first retry')).toBeVisible()
    // The default multiplier doubles each wait.
    await expect(preview).toHaveText('Retries wait 10 s, 20 s, 40 s, 1 min 20 s, 2 min 40 s.')
    await setNumber(page, 'Multiplier', 3)
    await expect(preview).toHaveText('Retries wait 10 s, 30 s, 1 min 30 s, 4 min 30 s, 13 min 30 s.')
    await setNumber(page, 'Longest wait (seconds)', 600)
    await expect(preview).toHaveText('Retries wait 10 s, 30 s, 1 min 30 s, 4 min 30 s, 10 min.')
    await setNumber(page, 'Jitter (%)', 20)
    await expect(preview).toHaveText('Retries wait 10 s, 30 s, 1 min 30 s, 4 min 30 s, 10 min, each up to 20% shorter.')
    // Fixed hides the exponential fields without forgetting them.
    await choose(page, 'Back-off', 'Fixed interval')
    await expect(page.getByLabel('Multiplier', { exact: true })).toHaveCount(0)
    await expect(preview).toHaveText('Each of the 5 retries waits 10 s, each up to 20% shorter.')
    await choose(page, 'Back-off', 'Exponential')
    await expect(page.getByLabel('Multiplier', { exact: true })).toHaveValue('3')

    await page.getByRole('button', { name: 'Create' }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    await expect(page.getByRole('heading', { name: new RegExp(`^Job #\\d+: ${name}$`) })).toBeVisible()
    const id = Number(/\/jobs\/(\d+)$/.exec(page.url())![1])
    jobs.push(id)
    const saved = await api.get(`jobs/${id}`)
    expect(saved).toMatchObject({
      executorFailRetryCount: 5,
      retryInterval: 10,
      retryBackoff: 'EXPONENTIAL',
      retryMultiplier: 3,
      retryMaxInterval: 600,
      retryJitter: 20,
    })

    // Read back: the page shows what was saved.
    await page.reload()
    await expect(page.getByText('Exponential', { exact: true })).toBeVisible()
    await expect(page.getByLabel('Multiplier', { exact: true })).toHaveValue('3')
    await expect(page.getByLabel('Longest wait (seconds)', { exact: true })).toHaveValue('600')
    await expect(preview).toHaveText('Retries wait 10 s, 30 s, 1 min 30 s, 4 min 30 s, 10 min, each up to 20% shorter.')

    // A refusal naming a field hidden under a fixed back-off brings the field back with it.
    await choose(page, 'Back-off', 'Fixed interval')
    await expect(page.getByLabel('Multiplier', { exact: true })).toHaveCount(0)
    await page.route(`**/api/v1/jobs/${id}`, async (route) => {
      const request = route.request()
      if (request.method() !== 'PUT') return route.continue()
      const body = { ...JSON.parse(request.postData() ?? '{}'), retryMultiplier: 11 }
      await route.continue({ postData: JSON.stringify(body) })
    })
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    const error = page.getByText(/^retryMultiplier: must be a number from 1 to 10, got 11/)
    await expect(error).toBeVisible()
    const field = page.getByLabel('Multiplier', { exact: true })
    await expect(field).toBeVisible()
    // Under the field, in its column (after its explanation), above the preview.
    const [fieldBox, errorBox, previewBox] = [await field.boundingBox(), await error.boundingBox(), await preview.boundingBox()]
    expect(errorBox!.y).toBeGreaterThan(fieldBox!.y + fieldBox!.height)
    expect(errorBox!.y).toBeLessThan(previewBox!.y)
    expect(Math.abs(errorBox!.x - fieldBox!.x)).toBeLessThan(60)
    await page.unroute(`**/api/v1/jobs/${id}`)
    expect(await api.get(`jobs/${id}`)).toMatchObject({ retryBackoff: 'EXPONENTIAL', retryMultiplier: 3 })
  })

  test('a failed run’s page says when its retry is due and counts down to it', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('Retried later'),
      executorHandler: 'fail',
      executorFailRetryCount: 1,
      retryInterval: 600,
    })
    jobs.push(job.id)
    await api.post(`jobs/${job.id}/trigger`, {})
    let runs: Run[] = []
    await expect
      .poll(
        async () => {
          runs = (await api.get<{ items: Run[] }>(`logs?jobId=${job.id}&limit=10`)).items
          return runs.some((r) => r.triggerType === 'MANUAL' && r.state === 'failed') && runs.some((r) => r.triggerType === 'RETRY')
        },
        { timeout: 20_000 },
      )
      .toBe(true)
    const failed = runs.find((r) => r.triggerType === 'MANUAL')!
    const detail = await api.get<Run & { retry: { id: number; scheduledTime: number; state: string } | null }>(`logs/${failed.id}`)
    const retry = runs.find((r) => r.triggerType === 'RETRY')!
    expect(detail.retry).toMatchObject({ id: retry.id, state: 'pending' })
    // Ten minutes after the failure was recorded.
    expect(detail.retry!.scheduledTime - detail.handleTime!).toBeGreaterThanOrEqual(599_000)
    expect(detail.retry!.scheduledTime - detail.handleTime!).toBeLessThanOrEqual(601_000)

    await logIn(page)
    await page.goto(`/runs/${failed.id}`)
    await expect(page.getByRole('heading', { name: new RegExp(`^Run #${failed.id}:`) })).toBeVisible()
    const row = page.getByRole('row').filter({ has: page.getByText('Retried by', { exact: true }) })
    // In the browser's zone (Berlin), pending, and how far off.
    await expect(row).toContainText(
      new RegExp(`Retry #${retry.id} due at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\+0[12]:00 \\(Pending, in (9 min \\d+ s|10 min)\\)`),
    )
    const first = await row.textContent()
    await expect(row).not.toHaveText(first!, { timeout: 5_000 })
    await expect(row).toContainText(/\(Pending, in (9 min \d+ s|10 min)\)/)

    // The retry's own page: when it is due, and how far off.
    await row.getByRole('link', { name: `Details of run ${retry.id}` }).click()
    await expect(page.getByRole('heading', { name: new RegExp(`^Run #${retry.id}:`) })).toBeVisible()
    await expect(page.getByRole('row').filter({ has: page.getByText('Retry of', { exact: true }) })).toContainText(`#${failed.id}`)
    const scheduled = page.getByRole('row').filter({ has: page.getByText('Scheduled', { exact: true }) })
    await expect(scheduled).toContainText(/\d\d:\d\d:\d\d UTC\+0[12]:00 \(in (9 min \d+ s|10 min)\)/)

    await page.goBack()
    await expect(page.getByRole('heading', { name: new RegExp(`^Run #${failed.id}:`) })).toBeVisible()
    await expect(row).toContainText(`Retry #${retry.id} due at`)
  })
})
