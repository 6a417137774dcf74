import { APP_NAME, EXECUTOR_ADDRESS, escapeRegExp, expect, logIn, test, unique } from './support'

test.describe('executor groups', () => {
  test('an admin creates the group the executor registers with and sees the executor online', async ({ page }) => {
    await logIn(page)
    await page.goto('/')
    await page.getByRole('menuitem', { name: 'Executor groups' }).click()
    await expect(page.getByRole('heading', { name: 'Executor groups', level: 1 })).toBeVisible()

    await page.getByRole('button', { name: 'New group' }).click()
    await expect(page.getByRole('heading', { name: 'New executor group' })).toBeVisible()
    await page.getByLabel('App name').fill(APP_NAME)
    await page.getByLabel('Title').fill('Browser test executors')
    await expect(page.getByRole('radio', { name: 'Automatic (registered executors)' })).toBeChecked()
    await page.getByRole('button', { name: 'Create' }).click()

    // The new group's page: the executor, registered before the group existed, is online.
    await expect(page.getByRole('heading', { name: `Executor group: ${APP_NAME}` })).toBeVisible()
    // (Element Plus draws a table's header and body as two tables.)
    await expect(page.getByRole('heading', { name: 'Registered executors' })).toBeVisible()
    await expect(page.getByRole('columnheader', { name: 'Last registration' })).toBeVisible()
    await expect(page.getByRole('row', { name: new RegExp(`^${escapeRegExp(EXECUTOR_ADDRESS)}`) })).toBeVisible()
    await expect(page.getByRole('row', { name: `Online addresses ${EXECUTOR_ADDRESS}` })).toBeVisible()
    // Its clock against the admin's, from its second registration on (one every 2 s here): one
    // host, one clock, so in step within the measure's own uncertainty.
    const executorRow = page.getByRole('row', { name: new RegExp(`^${escapeRegExp(EXECUTOR_ADDRESS)}`) })
    await expect(page.getByRole('columnheader', { name: 'Clock against the admin' })).toBeVisible()
    await expect(executorRow).toContainText(/(In step|\d+ ms (behind|ahead)) \(± \d+ ms\)/, { timeout: 15_000 })
    await expect(executorRow).not.toContainText('More than a second off')
    // Knowing the admin's clock, a cronwheel executor takes each second's fires ahead of time.
    await expect(page.getByRole('columnheader', { name: 'Fires' })).toBeVisible()
    await expect(executorRow).toContainText('Handed over ahead', { timeout: 15_000 })

    // And in the list, with its online address.
    await page.getByRole('button', { name: 'Back' }).click()
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: APP_NAME, exact: true }) })
    await expect(row).toContainText('Browser test executors')
    await expect(row).toContainText(EXECUTOR_ADDRESS)

    // Its search keeps the filter in the URL.
    await page.getByLabel('Search groups').fill('browser')
    await page.getByRole('button', { name: 'Search' }).click()
    await expect(page).toHaveURL(/[?&]text=browser/)
    await expect(row).toBeVisible()
  })

  test('the executor\'s clock against the admin\'s reads in 中文', async ({ page, api }) => {
    const groups = await api.call<{ items: { id: number; appName: string }[] }>('GET', `groups?text=${APP_NAME}`)
    const group = groups.items.find((g) => g.appName === APP_NAME)
    expect(group, `the group of ${APP_NAME}`).toBeDefined()
    await logIn(page)
    await page.goto(`/groups/${group!.id}`)
    await page.getByRole('button', { name: 'Language: English' }).click()
    await page.getByRole('menuitem', { name: '简体中文' }).click()
    await expect(page.getByRole('columnheader', { name: '与调度中心的时钟差' })).toBeVisible()
    const executorRow = page.getByRole('row', { name: new RegExp(`^${escapeRegExp(EXECUTOR_ADDRESS)}`) })
    await expect(executorRow).toContainText(/(一致|[慢快] \d+ 毫秒) \(± \d+ 毫秒\)/, { timeout: 15_000 })
    await executorRow.scrollIntoViewIfNeeded()  // for the screenshot
  })

  test('pausing a group stops its running jobs, and resuming starts exactly those again', async ({ page, api }) => {
    const appName = unique('pause-me').toLowerCase()
    const group = await api.post<{ id: number }>('groups', { appName, title: 'Paused in a release', addressType: 0 })
    const running = await api.createJob({ jobGroup: group.id, jobDesc: unique('Running'), scheduleType: 'FIX_RATE', scheduleConf: '3600', executorHandler: 'echo' })
    const idle = await api.createJob({ jobGroup: group.id, jobDesc: unique('Idle'), scheduleType: 'FIX_RATE', scheduleConf: '3600', executorHandler: 'echo' })
    await api.post(`jobs/${running.id}/start`)

    await logIn(page)
    await page.goto(`/groups?text=${appName}`)
    await page.getByRole('button', { name: `Pause the running jobs of ${appName}` }).click()
    await page.getByRole('button', { name: 'Pause', exact: true }).click()
    await expect(page.getByText('Paused 1 running jobs')).toBeVisible()
    const paused = await api.get(`jobs/${running.id}`)
    expect(paused.triggerStatus).toBe(0)
    expect(paused.pausedWithGroup).toBe(true)

    await page.getByRole('button', { name: `Resume the paused jobs of ${appName}` }).click()
    await expect(page.getByText('Resumed 1 jobs')).toBeVisible()
    expect((await api.get(`jobs/${running.id}`)).triggerStatus).toBe(1)
    expect((await api.get(`jobs/${idle.id}`)).triggerStatus).toBe(0)
    // Gone again, so later tests see the groups they expect.
    await api.del(`jobs/${running.id}`)
    await api.del(`jobs/${idle.id}`)
    await api.del(`groups/${group.id}`)
  })
})
