// What the run list and a run's page tell: results without a sideways scroll, the job's zone and
// the zone of the log's line times, a retry and the run it retried linked both ways, and whether
// the run's alarm went out.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect, logIn, test, unique, type Api } from './support'

interface Run {
  id: number
  state: string
  triggerType: string
  parentLogId?: number | null
  alarmStatus?: number
}

/** The job's runs, newest first, once `done` holds for them (polled through the API). */
async function runsOf(api: Api, jobId: number, done: (runs: Run[]) => boolean): Promise<Run[]> {
  let runs: Run[] = []
  await expect
    .poll(
      async () => {
        runs = (await api.get<{ items: Run[] }>(`logs?jobId=${jobId}&limit=50`)).items
        return done(runs)
      },
      { timeout: 20_000 },
    )
    .toBe(true)
  return runs
}

test.describe('run pages', () => {
  const jobs: number[] = []
  test.afterAll(async ({ api }) => {
    for (const id of jobs.splice(0)) await api.del(`jobs/${id}`)
  })

  test('the run list shows a run’s result and duration at 1440 px without scrolling sideways', async ({ page, api }) => {
    const job = await api.createJob({ jobDesc: unique('Wide list'), executorHandler: 'echo', executorParam: 'wide' })
    jobs.push(job.id)
    await api.post(`jobs/${job.id}/trigger`, {})
    const [run] = await runsOf(api, job.id, (r) => r[0]?.state === 'succeeded')

    await page.setViewportSize({ width: 1440, height: 900 })
    await logIn(page)
    await page.goto('/')
    await page.getByRole('menuitem', { name: 'Runs' }).click()
    const table = page.getByRole('table', { name: 'Runs' })
    const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of run ${run!.id}` }) })
    await expect(row).toContainText('Succeeded')
    for (const name of ['Result', 'Duration', 'Actions']) {
      const header = table.getByRole('columnheader', { name, exact: true })
      await expect(header).toBeInViewport({ ratio: 1 })
    }
    await expect(row.getByRole('cell').nth(4)).toContainText('OK')
    await expect(row.getByRole('cell').nth(5)).toContainText(/\d+(\.\d+)? (ms|s)/)
    await expect(row.getByRole('link', { name: 'Details', exact: true })).toBeInViewport({ ratio: 1 })
    // The table fits its box: nothing hidden to the right.
    const [scrollWidth, clientWidth] = await table.evaluate((t) => [t.parentElement!.scrollWidth, t.parentElement!.clientWidth])
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth)
  })

  test('a retry links back to the run it retried, and that run links on to its retry', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('Retried'),
      executorHandler: 'fail',
      executorFailRetryCount: 1,
      retryInterval: 1,
    })
    jobs.push(job.id)
    await api.post(`jobs/${job.id}/trigger`, {})
    const runs = await runsOf(api, job.id, (r) => r.length === 2 && r.every((l) => l.state === 'failed'))
    const retry = runs.find((r) => r.triggerType === 'RETRY')!
    const first = runs.find((r) => r.triggerType === 'MANUAL')!
    expect(retry.parentLogId).toBe(first.id)

    await logIn(page)
    await page.goto(`/runs?jobId=${job.id}`)
    // The list names the run a retry retried.
    const retryRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of run ${retry.id}` }) })
    await expect(retryRow.getByRole('link', { name: `retry of #${first.id}` })).toBeVisible()

    await page.getByRole('link', { name: `Details of run ${first.id}` }).click()
    await expect(page.getByRole('heading', { name: new RegExp(`^Run #${first.id}:`) })).toBeVisible()
    const retriedBy = page.getByRole('row').filter({ has: page.getByText('Retried by', { exact: true }) })
    await expect(retriedBy).toContainText(new RegExp(`Retry #${retry.id} due at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\+0[12]:00 \\(Failed\\)`))
    await retriedBy.getByRole('link', { name: `Details of run ${retry.id}` }).click()

    await expect(page.getByRole('heading', { name: new RegExp(`^Run #${retry.id}:`) })).toBeVisible()
    await expect(page.getByText('Retry', { exact: true })).toBeVisible()
    const retryOf = page.getByRole('row').filter({ has: page.getByText('Retry of', { exact: true }) })
    await retryOf.getByRole('link', { name: `Details of run ${first.id}` }).click()
    await expect(page.getByRole('heading', { name: new RegExp(`^Run #${first.id}:`) })).toBeVisible()
  })

  test('a run shows its job’s zone, its times there, and the zone of its log’s lines', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('New York report'),
      scheduleType: 'CRON',
      scheduleConf: '0 30 9 ? * MON-FRI',
      timezone: 'America/New_York',
      executorHandler: 'echo',
      executorParam: 'zoned',
    })
    jobs.push(job.id)
    await api.post(`jobs/${job.id}/trigger`, {})
    const [run] = await runsOf(api, job.id, (r) => r[0]?.state === 'succeeded')

    await logIn(page)
    await page.goto(`/runs?jobId=${job.id}`)
    await page.getByRole('link', { name: `Details of run ${run!.id}` }).click()
    await expect(page.getByRole('row').filter({ has: page.getByText('Job time zone', { exact: true }) })).toContainText('America/New_York')
    // Scheduled: in the browser's zone (Berlin), and beneath it in the job's.
    const scheduled = page.getByRole('row').filter({ has: page.getByText('Scheduled', { exact: true }) })
    await expect(scheduled).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+0[12]:00/)
    await expect(scheduled).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC-0[45]:00 in America\/New_York/)
    // The executor stamps its lines with its own clock; the page says which zone that is.
    const log = page.getByRole('log', { name: `Log of run ${run!.id}` })
    await expect(log).toContainText('zoned')
    await expect(page.getByText(/^Line times are the executor’s clock, UTC[+-]\d\d:\d\d \(worked out from the run’s start\)\.$/)).toBeVisible()
  })

  test('a run that alarmed says the alarm was sent, on its page and in the list', async ({ page, api }) => {
    // A webhook of the test's own takes the alarm.
    let alarms = 0
    const receiver: Server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        alarms++
        res.writeHead(200, { 'Content-Type': 'application/json' })
        res.end('{}')
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const job = await api.createJob({ jobDesc: unique('Alarming'), executorHandler: 'fail' })
    jobs.push(job.id)
    const channel = await api.post<{ id: number }>('alarm-channels', {
      name: unique('run page alarm'),
      kind: 'webhook',
      target: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alarm`,
      jobs: [job.id],
    })
    try {
      await api.post(`jobs/${job.id}/trigger`, {})
      const [run] = await runsOf(api, job.id, (r) => r[0]?.state === 'failed')

      await logIn(page)
      await page.goto(`/runs/${run!.id}`)
      // The page keeps asking until the alarm is decided and sent (every few seconds).
      const alarm = page.getByRole('row').filter({ has: page.getByText('Alarm', { exact: true }) })
      await expect(alarm).toContainText('Sent', { timeout: 20_000 })
      expect(alarms).toBeGreaterThanOrEqual(1)

      await page.getByRole('button', { name: 'Runs of this job' }).click()
      const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of run ${run!.id}` }) })
      await expect(row).toContainText('Alarm sent')
    } finally {
      await api.del(`alarm-channels/${channel.id}`)
      await new Promise<void>((resolve) => receiver.close(() => resolve()))
    }
  })
})
