import { APP_NAME, EXECUTOR_ADDRESS, docsImage, expect, logIn, test, unique } from './support'

test.describe('jobs', () => {
  const stopAfterwards: number[] = []
  test.afterEach(async ({ api }) => {
    for (const id of stopAfterwards.splice(0)) await api.post(`jobs/${id}/stop`)
  })

  test('a cron job in America/New_York shows its next fires in its zone and in the browser’s', async ({
    page,
    api,
    expectedFailures,
  }) => {
    // The expression is checked live by GET /cron/next: a wrong one answers 400 on purpose.
    expectedFailures.add(400, /^\/api\/v1\/cron\/next$/)
    await api.ensureGroup()
    const name = unique('Weekday report')

    await logIn(page)
    await page.goto('/')
    await page.getByRole('menuitem', { name: 'Jobs' }).click()
    await page.getByRole('button', { name: 'New job' }).click()
    await expect(page.getByRole('heading', { name: 'New job' })).toBeVisible()

    await page.getByRole('combobox', { name: 'Executor group' }).click()
    await page.getByRole('option', { name: `(${APP_NAME})` }).click()
    await page.getByLabel('Description').fill(name)

    // A wrong hour is named under the field while typing.
    const expression = page.getByRole('textbox', { name: 'Cron expression' })
    await expression.fill('0 30 25 ? * MON-FRI')
    await expect(page.getByText(/hour/i).first()).toBeVisible()
    await expression.fill('0 30 9 ? * MON-FRI')
    await expect(page.getByText('Valid expression')).toBeVisible()

    await page.getByRole('combobox', { name: 'Time zone' }).click()
    await page.keyboard.type('New_York')
    await page.getByRole('option', { name: /^America\/New_York/ }).click()

    const fires = page.getByRole('region', { name: 'Next 5 fire times' })
    await expect(fires.getByRole('columnheader', { name: 'In America/New_York' })).toBeVisible()
    await expect(fires.getByRole('columnheader', { name: 'In your zone, Europe/Berlin' })).toBeVisible()
    // 09:30 on weekdays in New York (EST or EDT) is 14:30 or 15:30 in Berlin (CET or CEST).
    const rows = fires.getByRole('row', { name: /UTC/ })
    await expect(rows).toHaveCount(5)
    for (const row of await rows.all()) {
      await expect(row.getByRole('cell').first()).toHaveText(/\d{4}-\d\d-\d\d 09:30:00 UTC-0[45]:00/)
      await expect(row.getByRole('cell').last()).toHaveText(/\d{4}-\d\d-\d\d 1[45]:30:00 UTC\+0[12]:00/)
    }
    await page.getByRole('heading', { name: 'Schedule', level: 2 }).evaluate((e) => e.scrollIntoView({ block: 'start' }))
    await docsImage(page, 'job-editor')

    await page.getByLabel('JobHandler').fill('echo')
    await page.getByRole('button', { name: 'Create' }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    await expect(page.getByRole('heading', { name: new RegExp(`^Job #\\d+: ${name}$`) })).toBeVisible()

    // Saved as shown: reloading the page shows the same schedule.
    await page.reload()
    await expect(page.getByRole('textbox', { name: 'Cron expression' })).toHaveValue('0 30 9 ? * MON-FRI')
    await expect(page.getByRole('combobox', { name: 'Time zone' })).toBeVisible()
    await expect(page.getByText(/^America\/New_York/).first()).toBeVisible()
    await expect(page.getByRole('region', { name: 'Next 5 fire times' }).getByRole('row', { name: /09:30:00 UTC-0[45]:00/ })).toHaveCount(5)
  })

  test('a job is named after its id until it is given a name of its own, which the form checks', async ({
    page,
    api,
    expectedFailures,
  }) => {
    // The second job's taken name is refused by the server on purpose.
    expectedFailures.add(409, /^\/api\/v1\/jobs\/\d+$/)
    const job = await api.createJob({ jobDesc: unique('Named job'), scheduleType: 'NONE', executorHandler: 'echo' })
    const other = await api.createJob({ jobDesc: unique('Other job'), scheduleType: 'NONE', executorHandler: 'echo' })
    const name = unique('nightly-export').toLowerCase().replace(/[^a-z0-9._-]/g, '-')
    await api.put(`jobs/${other.id}`, { name })

    await logIn(page)
    await page.goto(`/jobs/${job.id}`)
    const field = page.getByLabel('Name', { exact: true })
    await expect(field).toHaveValue(`job-${job.id}`)

    await field.fill('Nightly Export')
    await page.getByRole('button', { name: 'Save' }).click()
    await expect(page.getByText(/Lower-case letters, digits/)).toBeVisible()

    await field.fill(name)
    await page.getByRole('button', { name: 'Save' }).click()
    await expect(page.getByText(/name is taken by another job of the group/)).toBeVisible()

    await field.fill(`${name}.v2`)
    await page.getByRole('button', { name: 'Save' }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    await page.reload()
    await expect(page.getByLabel('Name', { exact: true })).toHaveValue(`${name}.v2`)
  })

  test('starting a job from the list schedules it, and its runs appear', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('Every two seconds'),
      scheduleType: 'CRON',
      scheduleConf: '*/2 * * * * ?',
      timezone: 'UTC',
      executorHandler: 'echo',
      executorParam: 'hello from the browser tests',
    })
    // Stopped again however the test ends, so it does not fire on through the other tests.
    stopAfterwards.push(job.id)

    await logIn(page)
    await page.goto('/jobs')
    await page.getByLabel('Search jobs').fill(job.jobDesc)
    await page.getByRole('button', { name: 'Search' }).click()
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: job.jobDesc }) })
    const toggle = row.getByRole('switch', { name: `Schedule the job "${job.jobDesc}"` })
    await expect(toggle).not.toBeChecked()
    // Element Plus draws the switch over a hidden checkbox: toggled from the keyboard, as its label is read.
    await toggle.press('Enter')
    await expect(page.getByText(`The job "${job.jobDesc}" is scheduled`)).toBeVisible()
    await expect(toggle).toBeChecked()
    await expect(row).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/)

    // Its runs, on the runs page filtered to this job.
    await page.getByRole('menuitem', { name: 'Runs' }).click()
    await expect(page.getByRole('heading', { name: 'Runs', level: 1 })).toBeVisible()
    await page.getByRole('combobox', { name: 'Job', exact: true }).click()
    await page.keyboard.type(job.jobDesc)
    await page.getByRole('option', { name: job.jobDesc }).click()
    await expect(page).toHaveURL(new RegExp(`[?&]jobId=${job.id}(&|$)`))
    // A fire every 2 s: three have succeeded within 10 s.
    const succeeded = page.getByRole('row').filter({ hasText: job.jobDesc }).filter({ hasText: 'Succeeded' })
    await expect(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click()
      expect(await succeeded.count()).toBeGreaterThanOrEqual(3)
    }).toPass({ timeout: 15_000, intervals: [1_000] })
    await expect(succeeded.first()).toContainText(EXECUTOR_ADDRESS)
  })

  test('the JobHandler field suggests the handlers the group’s executor runs, and takes one it does not', async ({ page, api }) => {
    await api.ensureGroup()
    const name = unique('Suggested handler')

    await logIn(page)
    await page.goto('/')
    await page.getByRole('menuitem', { name: 'Jobs' }).click()
    await page.getByRole('button', { name: 'New job' }).click()
    // The list's group filter is an "Executor group" too: wait for the form's before choosing.
    await expect(page.getByRole('heading', { name: 'New job' })).toBeVisible()
    await page.getByRole('combobox', { name: 'Executor group' }).click()
    await page.getByRole('option', { name: `(${APP_NAME})` }).click()
    await page.getByLabel('Description').fill(name)

    // The test executor's built-in handlers, as it registered them.
    const handler = page.getByRole('textbox', { name: 'JobHandler' })
    await handler.click()
    for (const builtIn of ['echo', 'shell', 'sleep', 'http', 'fail', 'sharding']) {
      await expect(page.getByRole('option', { name: builtIn, exact: true })).toBeVisible()
    }
    await expect(page.getByText('Suggested: the handlers the group’s online executors run')).toBeVisible()

    // Typing narrows them down; choosing one fills the field.
    await handler.pressSequentially('sl')
    await expect(page.getByRole('option', { name: 'sleep', exact: true })).toBeVisible()
    await expect(page.getByRole('option', { name: 'echo', exact: true })).toBeHidden()
    await page.getByRole('option', { name: 'sleep', exact: true }).click()
    await expect(handler).toHaveValue('sleep')

    // A handler no executor runs yet is still taken, without a word against it.
    await handler.fill('notOnlineYet')
    await expect(page.getByRole('option')).toHaveCount(0)
    await page.getByRole('button', { name: 'Create' }).click()
    await expect(page.getByText('Saved')).toBeVisible()
    await expect(page.getByRole('heading', { name: new RegExp(`^Job #\\d+: ${name}$`) })).toBeVisible()
    await expect(handler).toHaveValue('notOnlineYet')
    const id = Number(/\/jobs\/(\d+)$/.exec(page.url())![1])
    await api.del(`jobs/${id}`)
  })
})
