// A workflow's backfill from its page: the job's backfill dialog on a workflow, with the workflow's
// zone and its runs' inputs (a declared one prefilled with its default); previewed, started, run
// to the end on the real executor and shown on the backfill's page with its workflow runs; the
// Backfills list marks it as a workflow's, a run of it links back to it, and a node's run says
// the instant it runs for.
import { expect, logIn, test, unique } from './support'

interface WorkflowRun {
  id: number
  state: string
  triggerType: string
  scheduledTime: number
  backfillId?: number | null
  params: Record<string, unknown>
}

test.describe('workflow backfills', () => {
  const workflows: number[] = []
  const jobs: number[] = []
  test.afterAll(async ({ api }) => {
    for (const id of workflows.splice(0)) await api.del(`workflows/${id}`)
    for (const id of jobs.splice(0)) await api.del(`jobs/${id}`)
  })

  test('a workflow’s last hour is backfilled from its page with an input, runs to the end and is listed as a workflow’s', async ({
    page,
    api,
  }) => {
    const job = await api.createJob({ jobDesc: unique('Extract'), executorHandler: 'echo' })
    jobs.push(job.id)
    const name = unique('etl').toLowerCase()
    // Every ten minutes in UTC: the dialog's last hour holds six instants.
    const workflow = await api.post<{ id: number; jobGroup: number }>('workflows', {
      jobGroup: (await api.get<{ jobGroup: number }>(`jobs/${job.id}`)).jobGroup,
      name,
      scheduleType: 'CRON',
      scheduleConf: '0 */10 * * * ?',
      timezone: 'UTC',
      params: [{ name: 'region', default: 'eu', description: 'Where to extract from' }],
      nodes: [{ key: 'extract', jobId: job.id, params: '${params.region}' }],
    })
    workflows.push(workflow.id)

    await logIn(page)
    await page.goto(`/workflows/${workflow.id}`)
    await expect(page.getByRole('heading', { name: `Workflow #${workflow.id}: ${name}` })).toBeVisible()
    await page.getByRole('button', { name: 'Backfill…' }).click()
    const dialog = page.getByRole('dialog', { name: `Backfill "${name}"` })
    await expect(dialog).toBeVisible()
    await expect(dialog.getByRole('radio', { name: 'The workflow’s zone, UTC' })).toBeChecked()
    const region = dialog.getByLabel('region', { exact: true })
    await expect(region).toHaveValue('eu')
    await region.fill('apac')
    const maxConcurrent = dialog.getByLabel('At most at once', { exact: true })
    await maxConcurrent.fill('3')
    await maxConcurrent.press('Tab')

    await dialog.getByRole('button', { name: 'Preview' }).click()
    const preview = dialog.getByRole('region', { name: 'What the backfill would run' })
    await expect(preview).toContainText('6 instants in the range; 0 already ran; 6 would run.')
    await dialog.getByRole('button', { name: 'Start' }).click()
    const started = page.getByText(/^Backfill #\d+ is running: 6 instants\./)
    await expect(started).toBeVisible()
    const backfillId = Number(/#(\d+)/.exec((await started.textContent())!)![1])
    await page.getByRole('link', { name: 'Open the backfill' }).click()

    await expect(page.getByRole('heading', { name: `Backfill #${backfillId}: ${name}` })).toBeVisible()
    await expect(page.getByRole('row').filter({ has: page.getByText('Inputs of its runs', { exact: true }) })).toContainText('"region":"apac"')
    const state = page.locator('.page-header .el-tag')
    await expect(state).toHaveText('Done', { timeout: 40_000 })
    await expect(page.getByRole('row').filter({ has: page.getByText('Runs by state', { exact: true }) })).toContainText('Succeeded: 6')
    const runTable = page.getByRole('table', { name: `Runs of backfill ${backfillId}` })
    await expect(runTable.getByRole('link', { name: /^Details of workflow run \d+$/ })).toHaveCount(6)

    const runs = (await api.get<{ items: WorkflowRun[] }>(`workflow-runs?backfillId=${backfillId}&limit=100`)).items
    expect(runs).toHaveLength(6)
    expect(runs.every((r) => r.triggerType === 'BACKFILL' && r.backfillId === backfillId && r.state === 'succeeded')).toBe(true)
    expect(runs.every((r) => r.params.region === 'apac')).toBe(true)

    // A node's run started when its workflow run did, now, and runs for the run's instant.
    const detail = await api.get<{ nodes: { runId?: number | null }[] }>(`workflow-runs/${runs[0]!.id}`)
    const logId = detail.nodes[0]!.runId!
    const nodeRun = await api.get<{ scheduledTime: number; logDateTime: number }>(`logs/${logId}`)
    expect(nodeRun.logDateTime).toBe(runs[0]!.scheduledTime)
    expect(nodeRun.scheduledTime).toBeGreaterThan(nodeRun.logDateTime)
    await page.goto(`/runs/${logId}`)
    const instant = new Intl.DateTimeFormat('sv-SE', {
      timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit',
    }).format(new Date(nodeRun.logDateTime))
    await expect(page.getByRole('row').filter({ has: page.getByText('Scheduled', { exact: true }) })).toContainText(
      `Runs for ${instant}`,
    )

    // The list marks it as a workflow's, filtered by its workflow.
    await page.goto(`/backfills?workflowId=${workflow.id}`)
    const listRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Details of backfill ${backfillId}` }) })
    await expect(listRow).toContainText('Workflow')
    await expect(listRow.getByRole('link', { name })).toHaveAttribute('href', `/workflows/${workflow.id}`)
    await expect(listRow).toContainText('6 of 6 instants')

    // One of its runs says it is a backfill's, and links back to it.
    await page.goto(`/workflow-runs/${runs[0]!.id}`)
    const trigger = page.getByRole('row').filter({ has: page.getByText('Trigger', { exact: true }) })
    await expect(trigger).toContainText(`Backfill · admin · backfill #${backfillId}`)
    await trigger.getByRole('link', { name: `backfill #${backfillId}` }).click()
    await expect(page.getByRole('heading', { name: `Backfill #${backfillId}: ${name}` })).toBeVisible()
  })
})
