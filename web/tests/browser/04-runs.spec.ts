import { docsImage, expect, logIn, test, unique } from './support'

test.describe('runs', () => {
  test('the log of a running shell job grows live, and killing the run ends it as failed', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('Counting shell'),
      executorHandler: 'shell',
      executorParam: 'for i in $(seq 1 20); do echo line $i; sleep 1; done',
    })

    await logIn(page)
    await page.goto(`/jobs/${job.id}`)
    await page.getByRole('button', { name: 'Run once' }).click()
    const dialog = page.getByRole('dialog', { name: `Run "${job.jobDesc}" once` })
    await expect(dialog.getByRole('radio', { name: 'Now' })).toBeChecked()
    await dialog.getByRole('button', { name: 'Run' }).click()
    const recorded = page.getByText(/^Run #\d+ is recorded and fires now\./)
    await expect(recorded).toBeVisible()
    const runId = Number(/#(\d+)/.exec((await recorded.textContent()) ?? '')![1])

    await page.getByRole('menuitem', { name: 'Runs' }).click()
    await expect(page.getByRole('heading', { name: 'Runs', level: 1 })).toBeVisible()
    await page.getByRole('link', { name: `Details of run ${runId}` }).click()
    await expect(page.getByRole('heading', { level: 1 })).toContainText(String(runId))

    // The log follows the run: it shows more lines as the script prints them.
    const log = page.getByRole('log', { name: `Log of run ${runId}` })
    await expect(page.getByRole('status').filter({ hasText: 'Following the log live' })).toBeVisible()
    await expect(log).toContainText('line 2', { timeout: 15_000 })
    const lines = async () => ((await log.textContent()) ?? '').match(/line \d+/g)?.length ?? 0
    const before = await lines()
    await expect(log).toContainText(`line ${before + 2}`, { timeout: 10_000 })
    expect(await lines()).toBeGreaterThan(before)
    await log.evaluate((e) => e.scrollIntoView({ block: 'center' }))
    await docsImage(page, 'live-log')

    // Killed before its 20 s are up: the run ends as failed and the log stops following.
    await page.getByRole('button', { name: 'Kill' }).click()
    const confirm = page.getByRole('dialog', { name: 'Kill the run?' })
    await expect(confirm).toContainText(`kill run #${runId} of "${job.jobDesc}"`)
    await confirm.getByRole('button', { name: 'Kill' }).click()
    await expect(page.getByText(`The executor accepted the kill of run #${runId}`)).toBeVisible()
    await expect(page.getByText('Failed', { exact: true }).first()).toBeVisible({ timeout: 15_000 })
    await expect(page.getByRole('status').filter({ hasText: 'End of the log: the run is over' })).toBeVisible({
      timeout: 15_000,
    })
    await expect(log).not.toContainText('line 20')
  })

  test('a run once after a delay waits as pending and can be cancelled before it fires', async ({ page, api }) => {
    const job = await api.createJob({ jobDesc: unique('Delayed echo'), executorHandler: 'echo' })

    await logIn(page)
    await page.goto('/jobs')
    await page.getByLabel('Search jobs').fill(job.jobDesc)
    await page.getByRole('button', { name: 'Search' }).click()
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: job.jobDesc }) })
    await row.getByRole('button', { name: 'Run once' }).click()

    const dialog = page.getByRole('dialog', { name: `Run "${job.jobDesc}" once` })
    await dialog.getByLabel('Parameters').fill('delayed by the browser tests')
    // (Element Plus draws its radios over hidden inputs: the label is what a user clicks.)
    await dialog.getByText('After a delay', { exact: true }).click()
    await expect(dialog.getByRole('radio', { name: 'After a delay' })).toBeChecked()
    await dialog.getByRole('spinbutton', { name: 'Delay (seconds)' }).fill('600')
    await dialog.getByRole('button', { name: 'Run' }).click()
    const recorded = page.getByText(/^Run #\d+ is recorded and fires /)
    await expect(recorded).toBeVisible()
    await expect(recorded).not.toContainText('fires now')
    const runId = Number(/#(\d+)/.exec((await recorded.textContent()) ?? '')![1])

    // Recorded as asked: pending, ten minutes from now, with the parameters of this run.
    const run = await api.get(`logs/${runId}`)
    expect(run.state).toBe('pending')
    expect(run.executorParam).toBe('delayed by the browser tests')
    expect(run.scheduledTime - Date.now()).toBeGreaterThan(540_000)

    await page.getByRole('menuitem', { name: 'Runs' }).click()
    await expect(page.getByRole('heading', { name: 'Runs', level: 1 })).toBeVisible()
    const runRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of run ${runId}` }) })
    await expect(runRow).toContainText('Pending')
    await runRow.getByRole('button', { name: 'Cancel fire' }).click()
    const confirm = page.getByRole('dialog', { name: 'Cancel the fire?' })
    await expect(confirm).toContainText(`Cancel the pending run #${runId} of "${job.jobDesc}"`)
    await confirm.getByRole('button', { name: 'Cancel fire' }).click()
    await expect(page.getByText(`Run #${runId} is cancelled.`)).toBeVisible()
    await expect(runRow).toContainText('Cancelled')
    expect((await api.get(`logs/${runId}`)).state).toBe('cancelled')
  })
})
