// The job list's selection: start, stop and delete the selected jobs together (each by its own
// call, one message summing up), and the tag on the jobs a group's pause stopped.
import { expect, logIn, test, unique, type Api } from './support'

/** A job name from a unique prefix: lower-case, as names must be. */
function jobName(prefix: string, suffix: string): string {
  return `${prefix}-${suffix}`.toLowerCase().replace(/[^a-z0-9._-]/g, '-')
}

async function deleteQuietly(api: Api, path: string) {
  try {
    await api.del(path)
  } catch {
    /* already gone: the test deleted it */
  }
}

test.describe('job list selection', () => {
  const jobsAfterwards: number[] = []
  const groupsAfterwards: number[] = []
  test.afterEach(async ({ api }) => {
    for (const id of jobsAfterwards.splice(0)) await deleteQuietly(api, `jobs/${id}`)
    for (const id of groupsAfterwards.splice(0)) await deleteQuietly(api, `groups/${id}`)
  })

  test('selected jobs are started, stopped and deleted together, one message summing up each', async ({
    page,
    api,
    expectedFailures,
  }) => {
    // The job without a schedule cannot start: the server refuses it on purpose.
    expectedFailures.add(400, /^\/api\/v1\/jobs\/\d+\/start$/)
    const prefix = unique('Bulk')
    const hourly = []
    for (const suffix of ['a', 'b', 'c']) {
      const job = await api.createJob({
        jobDesc: `${prefix} ${suffix}`,
        name: jobName(prefix, suffix),
        scheduleType: 'FIX_RATE',
        scheduleConf: '3600',
        executorHandler: 'echo',
      })
      jobsAfterwards.push(job.id)
      hourly.push(job)
    }
    const manual = await api.createJob({ jobDesc: `${prefix} manual`, name: jobName(prefix, 'manual'), executorHandler: 'echo' })
    jobsAfterwards.push(manual.id)

    await logIn(page)
    await page.goto(`/jobs?text=${encodeURIComponent(prefix)}`)
    const table = page.getByRole('table', { name: 'Jobs' })
    await expect(table.getByRole('row')).toHaveCount(5)
    const toolbar = page.getByRole('toolbar', { name: 'Selected jobs' })
    await expect(toolbar).toBeHidden()

    // All four, by the header's checkbox; the job without a schedule fails, with the reason.
    await table.getByRole('checkbox', { name: 'Select every row on this page' }).check()
    await expect(toolbar).toContainText('4 selected')
    await toolbar.getByRole('button', { name: 'Start' }).click()
    await expect(
      page.getByText(`3 started, 1 failed: ${jobName(prefix, 'manual')}: scheduleType: NONE never fires by itself`),
    ).toBeVisible()
    await expect(toolbar).toBeHidden()
    for (const job of hourly) {
      expect((await api.get(`jobs/${job.id}`)).triggerStatus).toBe(1)
      await expect(table.getByRole('switch', { name: `Schedule the job "${job.jobDesc}"` })).toBeChecked()
    }
    expect((await api.get(`jobs/${manual.id}`)).triggerStatus).toBe(0)

    // Two of them, one by one.
    await table.getByRole('checkbox', { name: `Select the job "${hourly[0]!.jobDesc}"` }).check()
    await table.getByRole('checkbox', { name: `Select the job "${hourly[1]!.jobDesc}"` }).check()
    await expect(table.getByRole('checkbox', { name: 'Select every row on this page' })).not.toBeChecked()
    await expect(toolbar).toContainText('2 selected')
    await toolbar.getByRole('button', { name: 'Stop' }).click()
    await expect(page.getByText('2 stopped', { exact: true })).toBeVisible()
    expect((await api.get(`jobs/${hourly[0]!.id}`)).triggerStatus).toBe(0)
    expect((await api.get(`jobs/${hourly[1]!.id}`)).triggerStatus).toBe(0)
    expect((await api.get(`jobs/${hourly[2]!.id}`)).triggerStatus).toBe(1)
    await expect(table.getByRole('switch', { name: `Schedule the job "${hourly[2]!.jobDesc}"` })).toBeChecked()

    // Delete asks first, saying how many; cancelling deletes nothing.
    await table.getByRole('checkbox', { name: 'Select every row on this page' }).check()
    await toolbar.getByRole('button', { name: 'Delete' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete?' })
    await expect(confirm).toContainText('Delete these 4 jobs with their runs and script histories? This cannot be undone.')
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    await expect(confirm).toBeHidden()
    expect((await api.get(`jobs?text=${encodeURIComponent(prefix)}`)).total).toBe(4)

    await toolbar.getByRole('button', { name: 'Delete' }).click()
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await expect(page.getByText('4 deleted', { exact: true })).toBeVisible()
    await expect(table.getByRole('row')).toHaveCount(2)
    await expect(table).toContainText('Nothing matches these filters')
    expect((await api.get(`jobs?text=${encodeURIComponent(prefix)}`)).total).toBe(0)
  })

  test('a job its group’s pause stopped is tagged in the list until the group resumes', async ({ page, api }) => {
    const appName = unique('tagged').toLowerCase()
    const group = await api.post<{ id: number }>('groups', { appName, title: 'Paused for a release', addressType: 0 })
    groupsAfterwards.push(group.id)
    const fields = { jobGroup: group.id, scheduleType: 'FIX_RATE', scheduleConf: '3600', executorHandler: 'echo' }
    const running = await api.createJob({ ...fields, jobDesc: unique('Running before the pause') })
    const idle = await api.createJob({ ...fields, jobDesc: unique('Stopped before the pause') })
    jobsAfterwards.push(running.id, idle.id)
    await api.post(`jobs/${running.id}/start`)

    await logIn(page)
    await page.goto(`/groups?text=${appName}`)
    await page.getByRole('button', { name: `Pause the running jobs of ${appName}` }).click()
    await page.getByRole('button', { name: 'Pause', exact: true }).click()
    await expect(page.getByText('Paused 1 running jobs')).toBeVisible()

    await page.goto(`/jobs?group=${group.id}`)
    const table = page.getByRole('table', { name: 'Jobs' })
    const rowOf = (desc: string) => table.getByRole('row').filter({ has: page.getByRole('link', { name: desc }) })
    await expect(rowOf(running.jobDesc).getByText('Paused with group')).toBeVisible()
    await expect(rowOf(running.jobDesc).getByRole('switch')).not.toBeChecked()
    await expect(rowOf(idle.jobDesc)).toBeVisible()
    await expect(rowOf(idle.jobDesc).getByText('Paused with group')).toHaveCount(0)

    // Resumed, the job runs again and the tag is gone.
    await api.post(`groups/${group.id}/resume`)
    await page.reload()
    await expect(rowOf(running.jobDesc).getByRole('switch')).toBeChecked()
    await expect(table.getByText('Paused with group')).toHaveCount(0)
    await api.post(`jobs/${running.id}/stop`)
  })
})
