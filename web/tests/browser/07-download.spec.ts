// What a first visit downloads: the login page in a fresh browser, then the dashboard after
// logging in, counted as the bytes that crossed the wire (the admin sends the brotli copies the
// build leaves beside its files to a browser that takes brotli, as Chromium does). The figures go to the test's output (and docs/benchmarks.md);
// the test fails when the login page's download grows past a budget, so the console stays
// quick to open.
import type { Page, Response } from '@playwright/test'
import { ADMIN, expect, test } from './support'

// Compressed bytes of everything the login page loads (index.html, scripts, styles, icon).
const LOGIN_BUDGET_BYTES = 400 * 1024

// Counts the non-API responses `page` gets from now on; settle() waits for their sizes.
function countBytes(page: Page) {
  const sizes: Promise<number>[] = []
  const listener = (response: Response) => {
    if (new URL(response.url()).pathname.startsWith('/api/')) return
    sizes.push(
      response
        .request()
        .sizes()
        .then((s) => s.responseBodySize),
    )
  }
  page.on('response', listener)
  return {
    async settle(): Promise<{ bytes: number; files: number }> {
      page.off('response', listener)
      const all = await Promise.all(sizes)
      return { bytes: all.reduce((a, b) => a + b, 0), files: all.length }
    },
  }
}

test('the console opens with a small download', async ({ page }) => {
  const loginCount = countBytes(page)
  await page.goto('/login')
  await expect(page.getByRole('heading', { name: 'Log in to cronwheel' })).toBeVisible()
  await page.waitForLoadState('networkidle')
  const login = await loginCount.settle()

  const dashboardCount = countBytes(page)
  await page.getByLabel('Username').fill(ADMIN.username)
  await page.getByLabel('Password').fill(ADMIN.password)
  await page.getByRole('button', { name: 'Log in' }).click()
  await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible()
  await page.waitForLoadState('networkidle')
  const dashboard = await dashboardCount.settle()

  const kib = (n: number) => (n / 1024).toFixed(1)
  console.log(
    `console download: login page ${kib(login.bytes)} KiB in ${login.files} files; ` +
      `then the dashboard ${kib(dashboard.bytes)} KiB in ${dashboard.files} files (compressed, as sent)`,
  )
  expect(login.bytes).toBeGreaterThan(0)
  expect(login.bytes).toBeLessThan(LOGIN_BUDGET_BYTES)
})
