import { APP_NAME, EXECUTOR_ADDRESS, escapeRegExp, expect, logIn, test } from './support'

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
})
