import { ADMIN, expect, test } from './support'

test.describe('logging in', () => {
  test('a wrong password is refused, the right one opens the page asked for, and logging out ends the session', async ({
    page,
    expectedFailures,
  }) => {
    // The refused attempt below answers 401.
    expectedFailures.add(401, /^\/api\/v1\/auth\/login$/)

    await page.goto('/jobs')
    await expect(page).toHaveURL(/\/login\?redirect=(\/|%2F)jobs$/)
    await expect(page.getByRole('heading', { name: 'Log in to cronwheel' })).toBeVisible()

    await page.getByLabel('Username').fill(ADMIN.username)
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Log in' }).click()
    await expect(page.getByRole('alert').filter({ hasText: 'Wrong username or password' })).toBeVisible()

    await page.getByLabel('Password').fill(ADMIN.password)
    await page.getByLabel('Password').press('Enter')
    await expect(page).toHaveURL(/\/jobs$/)
    await expect(page.getByRole('heading', { name: 'Jobs', level: 1 })).toBeVisible()
    await expect(page.getByRole('button', { name: `User menu for ${ADMIN.username}` })).toBeVisible()

    await page.getByRole('button', { name: `User menu for ${ADMIN.username}` }).click()
    await page.getByRole('menuitem', { name: 'Log out' }).click()
    await expect(page.getByText('You are logged out')).toBeVisible()
    await expect(page.getByRole('heading', { name: 'Log in to cronwheel' })).toBeVisible()

    // The session is gone: the pages send back to the login.
    await page.goto('/groups')
    await expect(page).toHaveURL(/\/login\?redirect=(\/|%2F)groups$/)
  })
})
