import type { Page } from '@playwright/test'
import { expect, logIn, test, unique } from './support'

// The job list pages by the admin's cursors one page at a time; the page, its filters and its
// cursor are in the URL, so a reload and the browser's back and forward show the same jobs.
test.describe('list paging', () => {
  const created: number[] = []
  test.afterEach(async ({ api }) => {
    for (const id of created.splice(0)) await api.del(`jobs/${id}`)
  })

  // The links to the test's jobs in the list. A page's rows stay until the next page's answer
  // replaces them, so checks of what a page shows retry (toHaveText) rather than read once.
  const jobLinks = (page: Page, prefix: string) => page.getByRole('table').getByRole('link', { name: prefix })

  // The descriptions of the jobs the list shows now.
  async function shown(page: Page, prefix: string): Promise<string[]> {
    return (await jobLinks(page, prefix).allTextContents()).map((s) => s.trim())
  }

  test('a filtered job list keeps its page through reloads, back and forward', async ({ page, api }) => {
    const prefix = unique('Paged')
    for (let i = 1; i <= 25; i++) {
      const job = await api.createJob({ jobDesc: `${prefix} ${String(i).padStart(2, '0')}`, executorHandler: 'echo' })
      created.push(job.id)
    }

    await logIn(page)
    await page.goto('/jobs')
    await page.getByLabel('Search jobs').fill(prefix)
    await page.getByRole('button', { name: 'Search' }).click()
    await expect(page).toHaveURL(/[?&]text=/)
    await expect(page.getByText('25 in all')).toBeVisible()
    // Ten a page.
    await page.getByRole('main').getByText('20/page').click()
    await page.getByRole('option', { name: '10/page' }).click()
    await expect(page).toHaveURL(/[?&]size=10(&|$)/)
    await expect(jobLinks(page, prefix)).toHaveCount(10)
    const first = await shown(page, prefix)

    const next = page.getByRole('button', { name: 'Go to next page' })
    const prev = page.getByRole('button', { name: 'Go to previous page' })
    await next.click()
    await expect(page).toHaveURL(/[?&]page=2(&|$)/)
    await expect(page).toHaveURL(/[?&]after=/)
    await expect(jobLinks(page, prefix)).not.toHaveText(first)
    await expect(jobLinks(page, prefix)).toHaveCount(10)
    const second = await shown(page, prefix)
    await next.click()
    await expect(page).toHaveURL(/[?&]page=3(&|$)/)
    await expect(jobLinks(page, prefix)).toHaveCount(5)
    const third = await shown(page, prefix)
    // Three pages, every job on one of them.
    expect(new Set([...first, ...second, ...third]).size).toBe(25)

    // A reload shows the same page, filter and size.
    await page.reload()
    await expect(page.getByLabel('Search jobs')).toHaveValue(prefix)
    await expect(jobLinks(page, prefix)).toHaveText(third)

    // One page back goes by the page's cursor too.
    await prev.click()
    await expect(page).toHaveURL(/[?&]page=2(&|$)/)
    await expect(page).toHaveURL(/[?&]before=/)
    await expect(jobLinks(page, prefix)).toHaveText(second)

    // The browser's back and forward.
    await page.goBack()
    await expect(page).toHaveURL(/[?&]page=3(&|$)/)
    await expect(jobLinks(page, prefix)).toHaveText(third)
    await page.goBack()
    await page.goBack()
    await expect(page).not.toHaveURL(/[?&]page=/)
    await expect(jobLinks(page, prefix)).toHaveText(first)
    await page.goForward()
    await expect(page).toHaveURL(/[?&]page=2(&|$)/)
    await expect(jobLinks(page, prefix)).toHaveText(second)

    // A page picked by number, not next to the one shown, and a new filter go by offset.
    await page.getByLabel('page 1').click()
    await expect(page).not.toHaveURL(/[?&](page|after|before)=/)
    await expect(jobLinks(page, prefix)).toHaveText(first)
    await page.getByLabel('page 3').click()
    await expect(page).toHaveURL(/[?&]page=3(&|$)/)
    await expect(page).not.toHaveURL(/[?&](after|before)=/)
    await expect(jobLinks(page, prefix)).toHaveText(third)
    await page.getByLabel('Search jobs').fill(`${prefix} 2`)
    await page.getByRole('button', { name: 'Search' }).click()
    await expect(page).not.toHaveURL(/[?&]page=/)
    await expect(page.getByText('6 in all')).toBeVisible()
  })
})
