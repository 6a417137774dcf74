// The audit log in words and in the user's zone; the cluster page with the admin nodes and the
// executors of every group.
import { APP_NAME, EXECUTOR_ADDRESS, expect, logIn, test, unique } from './support'

test.describe('audit log', () => {
  test('names what was done in words and shows times in the user’s zone, fields too', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('Audited'),
      scheduleType: 'CRON',
      scheduleConf: '0 0 6 * * ?',
      timezone: 'UTC',
      executorHandler: 'echo',
    })
    await api.post(`jobs/${job.id}/start`)
    await api.post(`jobs/${job.id}/stop`)
    try {
      await logIn(page)
      await page.goto('/')
      await page.getByRole('menuitem', { name: 'Audit log' }).click()
      await expect(page.getByRole('heading', { name: 'Audit log', level: 1 })).toBeVisible()
      await expect(page.getByText(/^Times in Europe\/Berlin \(UTC\+0[12]:00\)$/)).toBeVisible()
      // (The select's own text takes the click, as a user's would.)
      await page.getByRole('search').getByText('Any object').click()
      await page.getByRole('option', { name: 'Job', exact: true }).click()
      await page.getByRole('textbox', { name: 'Object ID' }).fill(String(job.id))
      await page.getByRole('button', { name: 'Search' }).click()

      const rows = page.getByRole('row').filter({ hasText: `Job #${job.id}` })
      await expect(rows).toHaveCount(3)
      await expect(rows.nth(0)).toContainText('Stopped the job')
      await expect(rows.nth(1)).toContainText('Started the job')
      await expect(rows.nth(2)).toContainText('Created the job')
      await expect(rows.nth(1)).not.toContainText('job.start')
      await expect(rows.nth(1)).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+0[12]:00/)

      // The change: the next fire time it was given is a time, not a count of milliseconds.
      await rows.nth(1).getByRole('button', { name: /^Show the change of entry \d+$/ }).click()
      const dialog = page.getByRole('dialog', { name: `Started the job on Job #${job.id}` })
      await expect(dialog).toBeVisible()
      const next = dialog.getByRole('row').filter({ hasText: 'triggerNextTime' })
      await expect(next).toContainText(/\d{4}-\d\d-\d\d 0[78]:00:00 UTC\+0[12]:00/)
      await expect(next).not.toContainText(/\d{13}/)
    } finally {
      await api.del(`jobs/${job.id}`)
    }
  })
})

test.describe('cluster', () => {
  test('lists the admin node alive beside the executors of each group, and a group with none online', async ({ page, api }) => {
    await api.ensureGroup()
    const empty = await api.post<{ id: number }>('groups', { appName: unique('nobody-home'), title: unique('Empty group'), addressType: 0 })
    try {
      await logIn(page)
      await page.goto('/')
      await page.getByRole('menuitem', { name: 'Cluster' }).click()
      await expect(page.getByRole('heading', { name: 'Cluster', level: 1 })).toBeVisible()

      const nodes = page.getByRole('table', { name: 'Admin nodes' })
      const live = nodes.getByRole('row').filter({ hasText: 'Alive' })
      await expect(live.first()).toBeVisible()
      await expect(nodes.getByText('Ran the last scan')).toBeVisible()
      await expect(page.getByText(/^The last scheduling scan was by .+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+0[12]:00\.$/)).toBeVisible()

      const executors = page.getByRole('table', { name: 'Executors' })
      const ours = executors.getByRole('row').filter({ hasText: `(${APP_NAME})` })
      await expect(ours).toContainText(EXECUTOR_ADDRESS)
      await expect(ours).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/)
      const none = executors.getByRole('row').filter({ has: page.getByRole('link', { name: /^Empty group/ }) })
      await expect(none).toContainText('None online')

      // A group's row leads to the group.
      await ours.getByRole('link', { name: 'Browser test executors' }).click()
      await expect(page.getByRole('heading', { name: `Executor group: ${APP_NAME}` })).toBeVisible()
      await page.goBack()
      await expect(none).toContainText('None online')
    } finally {
      await api.del(`groups/${empty.id}`)
    }
  })
})
