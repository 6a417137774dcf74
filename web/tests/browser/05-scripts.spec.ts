import { expect, logIn, test, unique } from './support'

test.describe('scripts', () => {
  test('a GLUE script is edited in its editor: two versions saved, compared and the first restored', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('Nightly cleanup script'),
      glueType: 'GLUE_SHELL',
      glueSource: '#!/bin/sh\necho "version one"\n',
      glueRemark: 'First version',
    })

    // From the job's list, its "Script" button opens the editor.
    await logIn(page)
    await page.goto('/jobs')
    await page.getByLabel('Search jobs').fill(job.jobDesc)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('link', { name: `Edit the script of "${job.jobDesc}"` }).click()
    await expect(page).toHaveURL(new RegExp(`/jobs/${job.id}/script$`))
    await expect(page.getByRole('heading', { name: new RegExp(`${job.jobDesc}$`), level: 1 })).toBeVisible()

    // Two versions, each saved with its remark.
    const editor = page.getByRole('textbox', { name: `Script of "${job.jobDesc}"` })
    await expect(editor).toContainText('echo "version one"')
    const versions = page.getByRole('region', { name: 'Versions' })
    for (const [line, remark] of [
      ['echo "version two"', 'Second version'],
      ['echo "version three"', 'Third version'],
    ]) {
      await editor.click()
      await page.keyboard.press('Control+End')
      await page.keyboard.press('Enter')
      await page.keyboard.insertText(line)
      await expect(editor).toContainText(line)
      await expect(page.getByRole('status').filter({ hasText: 'Unsaved changes' })).toBeVisible()
      await page.getByLabel('Remark for this version').fill(remark)
      await page.getByRole('button', { name: 'Save as a new version' }).click()
      await expect(page.getByRole('alert').filter({ hasText: 'Saved as a new version' }).first()).toBeVisible()
      await expect(versions.getByRole('row').filter({ hasText: remark })).toBeVisible()
    }
    await expect(page.getByText('Unsaved changes')).toHaveCount(0)
    expect((await api.get(`jobs/${job.id}`)).glueSource).toContain('echo "version three"')

    // The first saved version side by side with the current script.
    const first = versions.getByRole('row').filter({ hasText: 'Second version' })
    await first.getByRole('button', { name: /^Compare the version .*"Second version"/ }).click()
    const diff = page.getByRole('dialog', { name: 'Compare versions' })
    const older = diff.getByRole('textbox', { name: /^Version of .*Second version/ })
    const current = diff.getByRole('textbox', { name: 'Current script' })
    await expect(older).toContainText('echo "version two"')
    await expect(older).not.toContainText('version three')
    await expect(current).toContainText('echo "version three"')
    await diff.getByRole('button', { name: 'Close', exact: true }).click()
    await expect(diff).toBeHidden()

    // Restored, after confirming.
    await first.getByRole('button', { name: /^Restore the version .*"Second version"/ }).click()
    const confirm = page.getByRole('dialog', { name: 'Restore this version?' })
    await expect(confirm).toContainText('"Second version"')
    await confirm.getByRole('button', { name: 'Restore' }).click()
    await expect(page.getByRole('alert').filter({ hasText: 'Restored as the newest version' }).first()).toBeVisible()
    await expect(editor).toContainText('echo "version two"')
    await expect(editor).not.toContainText('version three')
    const restored = (await api.get(`jobs/${job.id}`)).glueSource as string
    expect(restored).toContain('echo "version two"')
    expect(restored).not.toContain('version three')
  })
})
