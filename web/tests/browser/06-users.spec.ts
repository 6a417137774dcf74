import { APP_NAME, expect, logIn, openSelect, test, unique } from './support'

test.describe('users', () => {
  test('an admin creates a normal user for one group', async ({ page, api }) => {
    await api.ensureGroup()
    const username = unique('operator')

    await logIn(page)
    await page.goto('/')
    await page.getByRole('menuitem', { name: 'Users' }).click()
    await expect(page.getByRole('heading', { name: 'Users', level: 1 })).toBeVisible()
    await page.getByRole('button', { name: /New user/ }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('User name').fill(username)
    await dialog.getByLabel(/^\*?Password$/).fill('operator-password-1')
    await dialog.getByLabel('Repeat the password').fill('operator-password-1')
    await dialog.getByRole('radio', { name: 'User' }).check()
    await openSelect(dialog.getByRole('combobox', { name: /Groups/ }))
    await page.getByRole('option', { name: `(${APP_NAME})` }).click()
    // A multiple select stays open after a choice, and with many groups its list covers the
    // dialog's buttons: a click elsewhere in the dialog closes it.
    await dialog.getByLabel('User name').click()
    await expect(page.getByRole('option', { name: `(${APP_NAME})` })).toBeHidden()
    await dialog.getByRole('button', { name: /Create|Save/ }).click()
    // The list names a group by its title.
    await expect(page.getByRole('row').filter({ hasText: username })).toContainText('Browser test executors')
  })

  test('a normal user sees their group’s jobs and not another group’s, and no admin pages', async ({
    page,
    api,
    expectedFailures,
  }) => {
    const ownGroup = await api.ensureGroup()
    const otherApp = unique('other-team')
    const otherGroup = await api.ensureGroup(otherApp, 'Another team')
    const ownJob = await api.createJob({ jobGroup: ownGroup, jobDesc: unique('Own nightly export'), executorHandler: 'echo' })
    const otherJob = await api.createJob({ jobGroup: otherGroup, jobDesc: unique('Other team billing'), executorHandler: 'echo' })
    const username = unique('operator')
    const password = 'operator-password-1'
    await api.post('users', { username, password, role: 'normal', groups: [ownGroup] })

    await logIn(page, username, password)
    await page.goto('/')
    await expect(page.getByRole('button', { name: `User menu for ${username}` })).toBeVisible()
    const menu = page.getByRole('navigation', { name: 'Main menu' })
    await expect(menu.getByRole('menuitem', { name: 'Jobs' })).toBeVisible()
    await expect(menu.getByRole('menuitem', { name: 'Users' })).toHaveCount(0)
    await expect(menu.getByRole('menuitem', { name: 'Audit log' })).toHaveCount(0)

    await menu.getByRole('menuitem', { name: 'Jobs' }).click()
    await expect(page.getByRole('link', { name: ownJob.jobDesc })).toBeVisible()
    await expect(page.getByRole('link', { name: otherJob.jobDesc })).toHaveCount(0)
    // Not even by searching for it.
    await page.getByLabel('Search jobs').fill(otherJob.jobDesc)
    await page.getByRole('button', { name: 'Search' }).click()
    await expect(page.getByText('Nothing matches these filters')).toBeVisible()
    // The group filter offers only their own group.
    await page.getByRole('combobox', { name: 'Executor group' }).click()
    await expect(page.getByRole('option', { name: `(${APP_NAME})` })).toBeVisible()
    await expect(page.getByRole('option', { name: `(${otherApp})` })).toHaveCount(0)
    await page.keyboard.press('Escape')

    // Another group's job by its address: not found, never a blank page.
    expectedFailures.add(404, new RegExp(`^/api/v1/jobs/${otherJob.id}$`))
    await page.goto(`/jobs/${otherJob.id}`)
    await expect(page.getByText('Not found')).toBeVisible()
  })

  test('a normal user who opens an admin page’s address is told it is not allowed', async ({ page, api }) => {
    const username = unique('operator')
    await api.post('users', { username, password: 'operator-password-1', role: 'normal', groups: [await api.ensureGroup()] })
    await logIn(page, username, 'operator-password-1')
    await page.goto('/users')
    await expect(page.getByText('Not allowed')).toBeVisible()
    await expect(page.getByText('Your account may not see this page.')).toBeVisible()
  })
  test('a user a jobs file brought has no password until an admin sets one', async ({ page, api }) => {
    await api.ensureGroup()
    const username = unique('imported')
    await api.sendText('POST', 'apply', `groups: []\nusers:\n  - {username: ${username}, groups: [${APP_NAME}]}\n`, 'application/yaml')
    // Nothing logs in as it, not even an empty password.
    const refused = await page.request.post('/api/v1/auth/login', { data: { username, password: '' } })
    expect(refused.status()).not.toBe(200)

    await logIn(page)
    await page.goto('/users')
    const row = page.getByRole('row').filter({ hasText: username })
    await expect(row.getByText('no password')).toBeVisible()
    await row.getByRole('button', { name: `Reset the password of ${username}` }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel(/^\*?Password$/).fill('imported-password-1')
    await dialog.getByLabel('Repeat the password').fill('imported-password-1')
    await dialog.getByRole('button', { name: /Save|Reset/ }).click()
    await expect(row.getByText('no password')).toBeHidden()

    const login = await page.request.post('/api/v1/auth/login', { data: { username, password: 'imported-password-1' } })
    expect(login.status()).toBe(200)
  })
})
