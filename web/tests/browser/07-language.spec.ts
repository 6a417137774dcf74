import { ADMIN, expect, logIn, test } from './support'

test.describe('language', () => {
  test('switching to 中文 and back translates the console, and the choice is remembered', async ({ page }) => {
    await logIn(page)
    await page.goto('/jobs')
    await expect(page.getByRole('heading', { name: 'Jobs', level: 1 })).toBeVisible()

    await page.getByRole('button', { name: 'Language: English' }).click()
    await page.getByRole('menuitem', { name: '简体中文' }).click()
    await expect(page.getByRole('heading', { name: '任务管理', level: 1 })).toBeVisible()
    await expect(page.getByRole('menuitem', { name: '执行器管理' })).toBeVisible()
    await expect(page.getByRole('button', { name: '新建任务' })).toBeVisible()
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN')

    // Remembered across a reload.
    await page.reload()
    await expect(page.getByRole('heading', { name: '任务管理', level: 1 })).toBeVisible()
    await expect(page.getByRole('button', { name: `${ADMIN.username} 的用户菜单` })).toBeVisible()

    await page.getByRole('button', { name: '语言: 简体中文' }).click()
    await page.getByRole('menuitem', { name: 'English' }).click()
    await expect(page.getByRole('heading', { name: 'Jobs', level: 1 })).toBeVisible()
    await expect(page.getByRole('menuitem', { name: 'Executor groups' })).toBeVisible()
    await expect(page.locator('html')).toHaveAttribute('lang', 'en')
  })
})
