// Jobs as code in the console (docs/jobs-as-code.md): a group's Export downloads its jobs file;
// Import previews the plan the server answers for a file (POST /apply?dryRun=true) and changes
// nothing until Apply; a file with an error, or naming a group the user may not change, is
// refused in the dialog.
import { readFile } from 'node:fs/promises'
import type { Page } from '@playwright/test'
import { expect, logIn, test, unique, type Api } from './support'

async function deleteQuietly(api: Api, path: string) {
  try {
    await api.del(path)
  } catch {
    /* already gone */
  }
}

/** Picks `text` as the file `name` through the group list's Import button. */
async function importFile(page: Page, name: string, text: string | Buffer) {
  const chooser = page.waitForEvent('filechooser')
  await page.getByRole('button', { name: 'Import', exact: true }).click()
  await (await chooser).setFiles({ name, mimeType: 'application/yaml', buffer: Buffer.from(text) })
}

/** The jobs file of one group, with its jobs' YAML lines (each indented under the group's jobs:). */
function jobsFile(appName: string, jobs: string): string {
  return `groups:
  - appName: ${appName}
    title: Imported in the browser
    jobs:
${jobs}`
}

test.describe('jobs files', () => {
  const jobsAfterwards: number[] = []
  const groupsAfterwards: number[] = []
  const usersAfterwards: number[] = []
  test.afterEach(async ({ api }) => {
    for (const id of jobsAfterwards.splice(0)) await deleteQuietly(api, `jobs/${id}`)
    for (const id of groupsAfterwards.splice(0)) await deleteQuietly(api, `groups/${id}`)
    for (const id of usersAfterwards.splice(0)) await deleteQuietly(api, `users/${id}`)
  })

  /** The jobs of the group `appName`, by name, and that group's id (every job to be deleted afterwards). */
  async function groupJobs(api: Api, appName: string) {
    const groups = await api.get<{ items: { id: number; appName: string }[] }>(`groups?text=${appName}&limit=100`)
    const group = groups.items.find((g) => g.appName === appName)
    if (!group) return { groupId: undefined, jobs: new Map<string, any>() }
    if (!groupsAfterwards.includes(group.id)) groupsAfterwards.push(group.id)
    const page = await api.get<{ items: any[] }>(`jobs?jobGroup=${group.id}&limit=100`)
    for (const j of page.items) if (!jobsAfterwards.includes(j.id)) jobsAfterwards.unshift(j.id)
    return { groupId: group.id, jobs: new Map(page.items.map((j) => [j.name as string, j])) }
  }

  test('a group’s Export downloads <appName>.yaml with its jobs, which imported again changes nothing', async ({ page, api }) => {
    const appName = unique('exported').toLowerCase()
    const group = await api.post<{ id: number }>('groups', { appName, title: 'Exported from the browser', addressType: 0 })
    groupsAfterwards.push(group.id)
    const job = await api.createJob({
      jobGroup: group.id,
      name: 'nightly-report',
      jobDesc: 'Nightly report',
      scheduleType: 'CRON',
      scheduleConf: '0 0 2 * * ?',
      timezone: 'Europe/Berlin',
      executorHandler: 'echo',
      executorParam: '--region=eu',
    })
    jobsAfterwards.push(job.id)

    await logIn(page)
    await page.goto(`/groups?text=${appName}`)
    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: `Export the jobs of ${appName} as YAML` }).click()
    const file = await download
    expect(file.suggestedFilename()).toBe(`${appName}.yaml`)
    const text = await readFile((await file.path())!, 'utf8')
    expect(text).toMatch(new RegExp(`appName: ["']?${appName}["']?\\n`))
    expect(text).toContain('title: Exported from the browser')
    expect(text).toMatch(/\n\s+nightly-report:\n/)
    expect(text).toContain('jobDesc: Nightly report')
    expect(text).toMatch(/scheduleConf: ["']0 0 2 \* \* \?["']/)
    expect(text).toContain('timezone: Europe/Berlin')
    expect(text).toContain('executorHandler: echo')
    expect(text).toMatch(/executorParam: ["']?--region=eu["']?\n/)
    // Only the group asked for.
    expect(text.match(/appName:/g)).toHaveLength(1)

    // The file, imported as it is, matches the server: nothing to apply.
    await importFile(page, `${appName}.yaml`, text)
    const dialog = page.getByRole('dialog', { name: `Import ${appName}.yaml` })
    await expect(dialog.getByText('The server already matches the file: nothing to change.')).toBeVisible()
    const plan = dialog.getByRole('table', { name: 'What the import changes' })
    await expect(plan.getByRole('row', { name: `Group ${appName} Unchanged` })).toBeVisible()
    await expect(plan.getByRole('row', { name: `Job ${appName}/nightly-report Unchanged` })).toBeVisible()
    await expect(dialog.getByRole('button', { name: 'Apply' })).toBeDisabled()
  })

  test('an import that creates a job and changes another previews exactly that, prunes only when asked, then applies', async ({
    page,
    api,
  }) => {
    const appName = unique('imported').toLowerCase()
    const existing = unique('Existing job')
    const leftover = unique('Job the file leaves out')
    const fresh = unique('Job the file creates')
    // The server as a first file made it.
    await api.sendText(
      'POST',
      'apply',
      jobsFile(
        appName,
        `      existing:
        jobDesc: ${existing}
        scheduleType: FIX_RATE
        scheduleConf: "3600"
        executorHandler: echo
      leftover:
        jobDesc: ${leftover}
        executorHandler: echo
`,
      ),
      'application/yaml',
    )
    const before = await groupJobs(api, appName)
    expect([...before.jobs.keys()].sort()).toEqual(['existing', 'leftover'])

    await logIn(page)
    await page.goto(`/groups?text=${appName}`)
    await importFile(
      page,
      'billing.yml',
      jobsFile(
        appName,
        `      existing:
        jobDesc: ${existing}
        scheduleType: FIX_RATE
        scheduleConf: "1800"
        executorHandler: echo
      fresh:
        jobDesc: ${fresh}
        scheduleType: CRON
        scheduleConf: "0 30 6 * * ?"
        timezone: Europe/Berlin
        executorHandler: echo
`,
      ),
    )
    const dialog = page.getByRole('dialog', { name: 'Import billing.yml' })
    const plan = dialog.getByRole('table', { name: 'What the import changes' })
    await expect(plan.getByRole('row', { name: `Group ${appName} Unchanged` })).toBeVisible()
    await expect(plan.getByRole('row', { name: `Job ${appName}/existing Update scheduleConf 3600 → 1800` })).toBeVisible()
    await expect(plan.getByRole('row', { name: `Job ${appName}/fresh Create` })).toBeVisible()
    // Exactly that: a header row and these three.
    await expect(plan.getByRole('row')).toHaveCount(4)
    await expect(dialog.getByText(/^Nothing has changed yet\./)).toBeVisible()
    // Nothing has.
    let now = await groupJobs(api, appName)
    expect([...now.jobs.keys()].sort()).toEqual(['existing', 'leftover'])
    expect(now.jobs.get('existing').scheduleConf).toBe('3600')

    // With prune, the job the file does not name would go; without it again, it stays.
    // (Element Plus draws the checkbox over a hidden one: its label takes the click.)
    const prune = dialog.getByRole('checkbox', { name: 'Delete jobs the file does not name' })
    await dialog.getByText('Delete jobs the file does not name').click()
    await expect(prune).toBeChecked()
    await expect(plan.getByRole('row', { name: `Job ${appName}/leftover Delete` })).toBeVisible()
    await expect(plan.getByRole('row')).toHaveCount(5)
    await expect(dialog.getByRole('button', { name: 'Apply (deletes 1)' })).toBeEnabled()
    await dialog.getByText('Delete jobs the file does not name').click()
    await expect(prune).not.toBeChecked()
    await expect(plan.getByRole('row', { name: `Job ${appName}/leftover Delete` })).toHaveCount(0)
    await expect(plan.getByRole('row')).toHaveCount(4)

    await dialog.getByRole('button', { name: 'Apply', exact: true }).click()
    const result = dialog.getByRole('table', { name: 'What the import changed' })
    await expect(dialog.getByText(/^Applied: 1 created, 1 updated, 0 deleted/)).toBeVisible()
    await expect(result.getByRole('row', { name: `Job ${appName}/existing Updated scheduleConf 3600 → 1800` })).toBeVisible()
    await expect(result.getByRole('row', { name: `Job ${appName}/fresh Created` })).toBeVisible()
    now = await groupJobs(api, appName)
    expect([...now.jobs.keys()].sort()).toEqual(['existing', 'fresh', 'leftover'])
    expect(now.jobs.get('existing').scheduleConf).toBe('1800')
    await dialog.getByRole('button', { name: 'Close', exact: true }).click()
    await expect(dialog).toBeHidden()

    // And in the job list of the group.
    await page.goto(`/jobs?group=${now.groupId}`)
    const table = page.getByRole('table', { name: 'Jobs' })
    await expect(table.getByRole('row').filter({ has: page.getByRole('link', { name: existing }) })).toContainText('1800 s')
    await expect(table.getByRole('row').filter({ has: page.getByRole('link', { name: fresh }) })).toContainText('0 30 6 * * ?')
    await expect(table.getByRole('link', { name: leftover })).toBeVisible()
  })

  test('a file with an error is refused in the dialog, naming the line and key, and changes nothing', async ({
    page,
    api,
    expectedFailures,
  }) => {
    expectedFailures.add(400, /^\/api\/v1\/apply$/)
    const appName = unique('refused').toLowerCase()
    const group = await api.post<{ id: number }>('groups', { appName, title: 'Imported in the browser', addressType: 0 })
    groupsAfterwards.push(group.id)

    await logIn(page)
    await page.goto(`/groups?text=${appName}`)
    // Line 10: a key jobs do not have.
    const text = jobsFile(
      appName,
      `      good:
        jobDesc: A job that would be created
        executorHandler: echo
      bad:
        jobDesc: A job with a typo
        scheduleKonf: "60"
`,
    )
    expect(text.split('\n')[9]).toContain('scheduleKonf')
    await importFile(page, 'typo.yaml', text)
    const dialog = page.getByRole('dialog', { name: 'Import typo.yaml' })
    const alert = dialog.getByRole('alert')
    await expect(alert).toContainText('The file has an error')
    await expect(alert).toContainText('scheduleKonf')
    await expect(alert).toContainText('line 10')
    await expect(dialog.getByRole('table')).toHaveCount(0)
    await expect(dialog.getByRole('button', { name: 'Apply' })).toBeDisabled()
    // Not even the job without a mistake was created.
    expect((await api.get(`jobs?jobGroup=${group.id}`)).total).toBe(0)
  })

  test('a normal user’s import naming another team’s group is refused whole, naming that group', async ({
    page,
    api,
    expectedFailures,
  }) => {
    expectedFailures.add(403, /^\/api\/v1\/apply$/)
    const ownApp = unique('own-team').toLowerCase()
    const otherApp = unique('other-team').toLowerCase()
    const own = await api.post<{ id: number }>('groups', { appName: ownApp, title: 'Own team', addressType: 0 })
    const other = await api.post<{ id: number }>('groups', { appName: otherApp, title: 'Other team', addressType: 0 })
    groupsAfterwards.push(own.id, other.id)
    const username = unique('importer')
    const user = await api.post<{ id: number }>('users', { username, password: 'importer-password-1', role: 'normal', groups: [own.id] })
    usersAfterwards.push(user.id)

    await logIn(page, username, 'importer-password-1')
    await page.goto('/groups')
    await importFile(
      page,
      'two-teams.yaml',
      `groups:
  - appName: ${ownApp}
    title: Own team
    jobs:
      mine:
        jobDesc: Mine
        executorHandler: echo
  - appName: ${otherApp}
    title: Other team
    jobs:
      theirs:
        jobDesc: Theirs
        executorHandler: echo
`,
    )
    const dialog = page.getByRole('dialog', { name: 'Import two-teams.yaml' })
    const alert = dialog.getByRole('alert')
    await expect(alert).toContainText('Not allowed')
    await expect(alert).toContainText(otherApp)
    await expect(dialog.getByRole('button', { name: 'Apply' })).toBeDisabled()
    // Refused whole: not even the user's own group changed.
    expect((await api.get(`jobs?jobGroup=${own.id}`)).total).toBe(0)
    expect((await api.get(`jobs?jobGroup=${other.id}`)).total).toBe(0)
  })
})
