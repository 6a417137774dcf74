// The Tokens page: a new API token's secret is shown once (SecretOnceDialog), copied to the
// clipboard or, without one, selected to copy by hand, and gone once the dialog closes.
import { expect, logIn, test, unique } from './support'

test('a new token is shown once, copied, and gone when the dialog closes', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'])
  await logIn(page)
  await page.goto('/tokens')
  const name = unique('deploy')
  await page.getByRole('button', { name: 'New token' }).click()
  const create = page.getByRole('dialog', { name: 'New API token' })
  await create.getByLabel('Name').fill(name)
  await create.getByRole('button', { name: 'Create' }).click()

  const dialog = page.getByRole('dialog', { name: 'Your new token' })
  await expect(dialog.getByText('it is shown only once')).toBeVisible()
  const box = dialog.getByRole('textbox', { name: `The secret of the token ${name}` })
  const secret = await box.inputValue()
  expect(secret).toMatch(/^cw_/)
  await dialog.getByRole('button', { name: 'Copy' }).click()
  await expect(page.getByText('Copied to the clipboard')).toBeVisible()
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
  // A click beside it does not close it.
  await page.mouse.click(5, 5)
  await expect(dialog).toBeVisible()
  await dialog.getByRole('button', { name: 'I copied it' }).click()
  await expect(dialog).toBeHidden()
  await expect(page.getByRole('cell', { name, exact: true })).toBeVisible()
  await expect(page.getByText(secret)).toHaveCount(0)

  // Another, closed with Escape.
  const second = unique('ci')
  await page.getByRole('button', { name: 'New token' }).click()
  await create.getByLabel('Name').fill(second)
  await create.getByRole('button', { name: 'Create' }).click()
  await expect(dialog.getByRole('textbox', { name: `The secret of the token ${second}` })).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(dialog).toBeHidden()
})

test('without a clipboard the secret is selected to copy by hand', async ({ page }) => {
  await logIn(page)
  await page.addInitScript(() => {
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new Error('no')) } })
  })
  await page.goto('/tokens')
  const name = unique('nocopy')
  await page.getByRole('button', { name: 'New token' }).click()
  const create = page.getByRole('dialog', { name: 'New API token' })
  await create.getByLabel('Name').fill(name)
  await create.getByRole('button', { name: 'Create' }).click()
  const dialog = page.getByRole('dialog', { name: 'Your new token' })
  const box = dialog.getByRole('textbox', { name: `The secret of the token ${name}` })
  const secret = await box.inputValue()
  await dialog.getByRole('button', { name: 'Copy' }).click()
  await expect(page.getByText('Could not copy: select the text and copy it yourself')).toBeVisible()
  expect(await page.evaluate(() => window.getSelection()?.toString() || (document.activeElement as HTMLInputElement).value.substring(
    (document.activeElement as HTMLInputElement).selectionStart ?? 0, (document.activeElement as HTMLInputElement).selectionEnd ?? 0)))
    .toBe(secret)
})
