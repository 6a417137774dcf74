import { docsImage, expect, logIn, test } from './support'

test.describe('dashboard', () => {
  test('the dashboard shows jobs, runs, executors online and the runs per day', async ({ page, api }) => {
    await api.ensureGroup()
    await logIn(page)
    await page.goto('/')
    await page.getByRole('menuitem', { name: 'Dashboard' }).click()
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible()
    // Earlier tests ran jobs on the test executor: the figures are not empty.
    const main = page.getByRole('main')
    await expect(main.getByText(/Jobs/).first()).toBeVisible()
    await expect(main.getByText(/Executors online/i).first()).toBeVisible()
    await expect(main.getByText(/Runs per day/i).first()).toBeVisible()
    await docsImage(page, 'dashboard')
  })
})
