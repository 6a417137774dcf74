// Workflows in the console: a graph of jobs built in the editor by picking jobs and dragging
// edges between their handles, saved, run from the list with its input parameters, and followed
// live on the run's graph until every node has succeeded; a node's run opens with its log. An
// edge that closes a cycle, and a template reading a parameter that does not exist, are explained
// in place as the server's check finds them. Leaving the editor with unsaved changes asks first.
import type { Page } from '@playwright/test'
import { APP_NAME, docsImage, expect, logIn, test, unique, type Api } from './support'

async function deleteQuietly(api: Api, path: string) {
  try {
    await api.del(path)
  } catch {
    /* already gone */
  }
}

/** Drags an edge from node `from`'s bottom handle to node `to`'s top handle, as a user does. */
async function connect(page: Page, from: string, to: string) {
  const canvas = page.getByRole('region', { name: 'Workflow graph' })
  await canvas.evaluate((e) => e.scrollIntoView({ block: 'center' }))
  const out = canvas.getByLabel(`Out of ${from}`, { exact: true })
  const into = canvas.getByLabel(`Into ${to}`, { exact: true })
  // hover() waits until the handle stands still and is what the pointer would hit there.
  await out.hover()
  await page.mouse.down()
  const start = (await out.boundingBox())!
  await page.mouse.move(start.x + start.width / 2 + 10, start.y + start.height / 2 + 30, { steps: 4 })
  await into.hover()
  await page.mouse.up()
  // (Attached, not "visible": an edge straight down has no width, which Playwright reads as hidden.)
  await expect(canvas.getByRole('group', { name: `Edge ${from} to ${to}` })).toBeAttached()
}

/** Adds the job `jobDesc` as a node through the editor's job search; answers nothing. */
async function addJob(page: Page, jobDesc: string) {
  await page.getByRole('combobox', { name: 'Add a job' }).click()
  await page.keyboard.type(jobDesc)
  await page.getByRole('option', { name: jobDesc }).click()
}

test.describe('workflows', () => {
  const workflowsAfterwards: number[] = []
  const jobsAfterwards: number[] = []
  test.afterEach(async ({ api }) => {
    for (const id of workflowsAfterwards.splice(0)) await deleteQuietly(api, `workflows/${id}`)
    for (const id of jobsAfterwards.splice(0)) await deleteQuietly(api, `jobs/${id}`)
  })

  /** Echo jobs named `<letter>.<tag>` (their node keys: `<letter>_<tag>`), by letter. */
  async function echoJobs(api: Api, letters: string[], tag: string) {
    const jobs = new Map<string, { id: number; jobDesc: string; key: string }>()
    for (const letter of letters) {
      const job = await api.createJob({
        name: `${letter}.${tag}`,
        jobDesc: `Workflow step ${letter.toUpperCase()} ${tag}`,
        executorHandler: 'echo',
        executorParam: `step ${letter} of ${tag}`,
      })
      jobsAfterwards.push(job.id)
      jobs.set(letter, { ...job, key: `${letter}_${tag}` })
    }
    return jobs
  }

  test('a diamond built in the editor runs from the list; every node turns green and node D’s run opens with its log', async ({
    page,
    api,
  }) => {
    const tag = Date.now().toString(36)
    const jobs = await echoJobs(api, ['a', 'b', 'c', 'd'], tag)
    const key = (letter: string) => jobs.get(letter)!.key
    const name = unique('diamond').toLowerCase()

    await logIn(page)
    await page.goto('/workflows')
    await expect(page.getByRole('heading', { name: 'Workflows', level: 1 })).toBeVisible()
    await page.getByRole('button', { name: 'New workflow' }).click()
    await expect(page.getByRole('heading', { name: 'New workflow', level: 1 })).toBeVisible()
    await page.getByRole('combobox', { name: 'Executor group' }).click()
    await page.getByRole('option', { name: `(${APP_NAME})` }).click()
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name)
    await page.getByRole('textbox', { name: 'Description', exact: true }).fill('A diamond of echo jobs')

    // Each job picked becomes a node keyed by its name made into a key.
    for (const letter of ['a', 'b', 'c', 'd']) {
      await addJob(page, jobs.get(letter)!.jobDesc)
      await expect(page.getByRole('group', { name: `Node ${key(letter)}` })).toBeVisible()
    }
    await connect(page, key('a'), key('b'))
    await connect(page, key('a'), key('c'))
    await connect(page, key('b'), key('d'))
    await connect(page, key('c'), key('d'))
    await expect(page.getByText('No problems', { exact: true })).toBeVisible()

    // The layout puts D below B and C, which are below A.
    const top = async (letter: string) => (await page.getByRole('group', { name: `Node ${key(letter)}` }).boundingBox())!.y
    expect(await top('b')).toBeGreaterThan(await top('a'))
    expect(await top('c')).toBeGreaterThan(await top('a'))
    expect(await top('d')).toBeGreaterThan(await top('b'))
    await docsImage(page, 'workflow-editor')

    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await expect(page).toHaveURL(/\/workflows\/\d+$/)
    const id = Number(/\/workflows\/(\d+)$/.exec(page.url())![1])
    workflowsAfterwards.push(id)

    // Saved as drawn, by key, without positions.
    const saved = await api.get(`workflows/${id}`)
    expect(saved.name).toBe(name)
    expect(saved.nodes.map((n: { key: string; jobId: number }) => [n.key, n.jobId])).toEqual(
      ['a', 'b', 'c', 'd'].map((l) => [key(l), jobs.get(l)!.id]),
    )
    expect(saved.edges).toEqual([
      { from: key('a'), to: key('b') },
      { from: key('a'), to: key('c') },
      { from: key('b'), to: key('d') },
      { from: key('c'), to: key('d') },
    ])
    expect(JSON.stringify(saved.nodes)).not.toMatch(/position|"x"|"y"/)

    // Run from the list.
    await page.getByRole('menuitem', { name: 'Workflows' }).click()
    await page.getByRole('textbox', { name: 'Search workflows' }).fill(name)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('button', { name: `Run the workflow "${name}"` }).click()
    const dialog = page.getByRole('dialog', { name: `Run "${name}"` })
    await expect(dialog.getByText('This workflow declares no input parameters.')).toBeVisible()
    await dialog.getByRole('button', { name: 'Run', exact: true }).click()
    await expect(page.getByText(/^Workflow run #\d+ is created/)).toBeVisible()
    await page.getByRole('link', { name: 'Open the run' }).click()
    await expect(page).toHaveURL(/\/workflow-runs\/\d+$/)
    const workflowRunId = Number(/\/workflow-runs\/(\d+)$/.exec(page.url())![1])
    await expect(page.getByRole('heading', { level: 1 })).toContainText(name)

    // The graph follows the run until every node has succeeded, and the run with it.
    const graph = page.getByRole('region', { name: 'Graph of the run' })
    for (const letter of ['a', 'b', 'c', 'd']) {
      await expect(graph.getByRole('group', { name: `Node ${key(letter)}: Succeeded` })).toBeVisible({ timeout: 30_000 })
    }
    await expect(page.getByText('Updated every second while the run goes on.')).toBeHidden({ timeout: 10_000 })
    await expect(page.getByRole('button', { name: 'Cancel the run' })).toHaveCount(0)
    expect((await api.get(`workflow-runs/${workflowRunId}`)).state).toBe('succeeded')

    // Node D: its details, then its run with the live log.
    await graph.getByRole('group', { name: `Node ${key('d')}: Succeeded` }).click()
    await expect(page).toHaveURL(new RegExp(`[?&]node=${key('d')}(&|$)`))
    const details = page.getByRole('complementary', { name: `Node ${key('d')}` })
    await expect(details).toContainText('Attempts')
    await docsImage(page, 'workflow-run')
    await expect(details.getByLabel('Parameters as rendered')).toContainText(`step d of ${tag}`)
    const runLink = details.getByRole('link', { name: /^Run #\d+ and its live log$/ })
    const runId = Number(/#(\d+)/.exec((await runLink.textContent()) ?? '')![1])
    await runLink.click()
    await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`))
    await expect(page.getByRole('log', { name: `Log of run ${runId}` })).toContainText(`step d of ${tag}`, { timeout: 15_000 })
  })

  test('a run that failed at a node is re-run from it on the run’s graph, keeping what succeeded', async ({ page, api }) => {
    const tag = Date.now().toString(36)
    const jobs = await echoJobs(api, ['a', 'b'], tag)
    const key = (letter: string) => jobs.get(letter)!.key
    // b fails until its job is fixed.
    await api.put(`jobs/${jobs.get('b')!.id}`, { executorHandler: 'fail' })
    const jobGroup = await api.ensureGroup()
    const created = await api.post<{ id: number }>('workflows', {
      jobGroup,
      name: unique('rerun').toLowerCase(),
      scheduleType: 'NONE',
      nodes: ['a', 'b'].map((l) => ({ key: key(l), jobId: jobs.get(l)!.id })),
      edges: [{ from: key('a'), to: key('b') }],
    })
    workflowsAfterwards.push(created.id)
    const run = await api.post<{ id: number }>(`workflows/${created.id}/trigger`, {})

    await logIn(page)
    await page.goto(`/workflow-runs/${run.id}`)
    const graph = page.getByRole('region', { name: 'Graph of the run' })
    await expect(graph.getByRole('group', { name: `Node ${key('b')}: Failed` })).toBeVisible({ timeout: 30_000 })
    await expect(graph.getByRole('group', { name: `Node ${key('a')}: Succeeded` })).toBeVisible()

    await api.put(`jobs/${jobs.get('b')!.id}`, { executorHandler: 'echo' })
    await graph.getByRole('group', { name: `Node ${key('b')}: Failed` }).click()
    await page.getByRole('button', { name: `Re-run from ${key('b')}` }).click()
    await page.getByRole('dialog', { name: 'Re-run?' }).getByRole('button', { name: `Re-run from ${key('b')}` }).click()
    await expect(graph.getByRole('group', { name: `Node ${key('b')}: Succeeded` })).toBeVisible({ timeout: 30_000 })
    const after = await api.get(`workflow-runs/${run.id}`)
    expect(after.state).toBe('succeeded')
    const attempts = Object.fromEntries(after.nodes.map((n: { key: string; attempts: number }) => [n.key, n.attempts]))
    expect(attempts).toEqual({ [key('a')]: 1, [key('b')]: 2 })
  })

  test('an edge closing a cycle and a template reading an unknown parameter are explained in place', async ({ page, api }) => {
    const tag = Date.now().toString(36)
    const jobs = await echoJobs(api, ['a', 'b', 'c', 'd'], tag)
    const key = (letter: string) => jobs.get(letter)!.key
    const jobGroup = await api.ensureGroup()
    const created = await api.post<{ id: number }>('workflows', {
      jobGroup,
      name: unique('cycle').toLowerCase(),
      scheduleType: 'NONE',
      nodes: ['a', 'b', 'c', 'd'].map((l) => ({ key: key(l), jobId: jobs.get(l)!.id })),
      edges: [
        { from: key('a'), to: key('b') },
        { from: key('a'), to: key('c') },
        { from: key('b'), to: key('d') },
        { from: key('c'), to: key('d') },
      ],
    })
    workflowsAfterwards.push(created.id)

    await logIn(page)
    await page.goto(`/workflows/${created.id}`)
    await expect(page.getByRole('group', { name: `Node ${key('d')}` })).toBeVisible()
    await expect(page.getByText('No problems', { exact: true })).toBeVisible()

    // D → A closes a cycle: the server's check names it above the canvas.
    await connect(page, key('d'), key('a'))
    const problems = page.getByRole('alert').filter({ hasText: 'Problems of this workflow' })
    await expect(problems).toContainText('cycle')
    await expect(problems).toContainText(`${key('a')} → ${key('b')} → ${key('d')} → ${key('a')}`)

    // Selected from the keyboard and deleted, the edge takes the problem with it.
    const edge = page.getByRole('group', { name: `Edge ${key('d')} to ${key('a')}` })
    await edge.focus()
    await page.keyboard.press('Enter')
    await expect(page.getByRole('complementary', { name: `Edge ${key('d')} → ${key('a')}` })).toBeVisible()
    await page.keyboard.press('Delete')
    await expect(edge).toHaveCount(0)
    await expect(problems).toHaveCount(0)
    await expect(page.getByText('No problems', { exact: true })).toBeVisible()

    // A template reading a parameter the workflow does not declare: shown on the node.
    await page.getByRole('group', { name: `Node ${key('b')}` }).click()
    const panel = page.getByRole('complementary', { name: `Node ${key('b')}` })
    await panel.getByRole('textbox', { name: 'Parameter template' }).fill('day=${params.day}')
    const node = page.getByRole('group', { name: `Node ${key('b')}` })
    await expect(node.getByRole('alert')).toContainText('no parameter day')
    await expect(panel).toContainText('no parameter day')

    // Declared, the problem goes.
    await page.getByRole('button', { name: 'Add a parameter' }).click()
    const param = page.getByRole('group', { name: 'Parameter 1' })
    await param.getByRole('textbox', { name: 'Name' }).fill('day')
    await param.getByRole('textbox', { name: 'Default' }).fill('monday')
    await expect(node.getByRole('alert')).toHaveCount(0)
    await expect(page.getByText('No problems', { exact: true })).toBeVisible()
    await page.getByRole('region', { name: 'Workflow graph' }).evaluate((e) => e.scrollIntoView({ block: 'center' }))
  })

  test('leaving the editor with unsaved changes asks first; staying keeps them, and after a save nothing is asked', async ({
    page,
    api,
  }) => {
    const tag = Date.now().toString(36)
    const jobs = await echoJobs(api, ['a', 'b', 'c'], tag)
    const key = (letter: string) => jobs.get(letter)!.key
    const jobGroup = await api.ensureGroup()
    const name = unique('unsaved').toLowerCase()
    const created = await api.post<{ id: number }>('workflows', {
      jobGroup,
      name,
      description: 'two steps',
      scheduleType: 'NONE',
      nodes: ['a', 'b'].map((l) => ({ key: key(l), jobId: jobs.get(l)!.id })),
      edges: [{ from: key('a'), to: key('b') }],
    })
    workflowsAfterwards.push(created.id)
    const leaveBox = page.getByRole('dialog', { name: 'Leave without saving?' })
    const unsavedNote = page.getByRole('status').filter({ hasText: 'Unsaved changes' })
    const nativeDialogs: string[] = []
    page.on('dialog', (d) => nativeDialogs.push(d.type()))
    const editorUrl = new RegExp(`/workflows/${created.id}$`)
    const listUrl = /\/workflows(\?.*)?$/

    async function openFromList() {
      await page.getByRole('textbox', { name: 'Search workflows' }).fill(name)
      await page.getByRole('button', { name: 'Search' }).click()
      await page.getByRole('link', { name: `Edit the workflow "${name}"` }).click()
      await expect(page).toHaveURL(editorUrl)
      await expect(page.getByRole('group', { name: `Node ${key('b')}` })).toBeVisible()
      await expect(page.getByText('No problems', { exact: true })).toBeVisible()
    }

    await logIn(page)
    await page.goto('/workflows')
    await openFromList()

    // As loaded: back to the list and forward again without a question.
    await expect(unsavedNote).toHaveCount(0)
    await page.goBack()
    await expect(page.getByRole('heading', { name: 'Workflows', level: 1 })).toBeVisible()
    await page.goForward()
    await expect(page).toHaveURL(editorUrl)
    await expect(page.getByRole('group', { name: `Node ${key('b')}` })).toBeVisible()
    await expect(leaveBox).toHaveCount(0)

    // A field changed and changed back by hand is no change.
    const description = page.getByRole('textbox', { name: 'Description', exact: true })
    await description.fill('two steps and more')
    await expect(unsavedNote).toBeVisible()
    await description.fill('two steps')
    await expect(unsavedNote).toHaveCount(0)

    // A node added: leaving through the menu asks; staying keeps the node.
    await addJob(page, jobs.get('c')!.jobDesc)
    await expect(page.getByRole('group', { name: `Node ${key('c')}` })).toBeVisible()
    await expect(unsavedNote).toBeVisible()
    await page.getByRole('menuitem', { name: 'Workflows' }).click()
    await expect(leaveBox).toContainText('The workflow has changes that are not saved.')
    await leaveBox.getByRole('button', { name: 'Stay' }).click()
    await expect(leaveBox).toBeHidden()
    await expect(page).toHaveURL(editorUrl)
    await expect(page.getByRole('group', { name: `Node ${key('c')}` })).toBeVisible()

    // Closing the tab: the browser asks (its own box); dismissed, the page stays as it was.
    const unload = page.waitForEvent('dialog')
    await page.close({ runBeforeUnload: true })
    const unloadDialog = await unload
    expect(unloadDialog.type()).toBe('beforeunload')
    await unloadDialog.dismiss()
    await expect(page.getByRole('group', { name: `Node ${key('c')}` })).toBeVisible()

    // The browser's back asks too; leaving saves nothing.
    await page.goBack()
    await leaveBox.getByRole('button', { name: 'Leave' }).click()
    await expect(page).toHaveURL(listUrl)
    await expect(page.getByRole('heading', { name: 'Workflows', level: 1 })).toBeVisible()
    expect((await api.get(`workflows/${created.id}`)).nodes).toHaveLength(2)

    // Opened again it is as saved; changed and saved, leaving asks nothing.
    await openFromList()
    await expect(page.getByRole('group', { name: `Node ${key('c')}` })).toHaveCount(0)
    await addJob(page, jobs.get('c')!.jobDesc)
    await connect(page, key('b'), key('c'))
    await expect(unsavedNote).toBeVisible()
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await expect(page.getByText('Saved', { exact: true })).toBeVisible()
    await expect(unsavedNote).toHaveCount(0)
    const saved = await api.get(`workflows/${created.id}`)
    expect(saved.nodes.map((n: { key: string }) => n.key)).toEqual([key('a'), key('b'), key('c')])
    expect(saved.edges).toContainEqual({ from: key('b'), to: key('c') })
    await page.getByRole('menuitem', { name: 'Workflows' }).click()
    await expect(page).toHaveURL(listUrl)
    await expect(page.getByRole('heading', { name: 'Workflows', level: 1 })).toBeVisible()
    await expect(leaveBox).toHaveCount(0)
    expect(nativeDialogs).toEqual(['beforeunload'])
  })
})
