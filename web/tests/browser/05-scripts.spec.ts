import { expect, logIn, test, unique } from './support'

test.describe('scripts', () => {
  test('a GLUE script is edited in its editor: two versions saved, compared and the first restored', async ({ page, api }) => {
    const job = await api.createJob({
      jobDesc: unique('Nightly cleanup script'),
      glueType: 'GLUE_SHELL',
      glueSource: '#!/bin/sh\necho "version one"\n',
      glueRemark: 'First version',
    })

    await logIn(page)
    await page.goto(`/jobs/${job.id}`)
    await expect(page.getByRole('heading', { name: new RegExp(`${job.jobDesc}$`) })).toBeVisible()
    // The steps below name the controls as the issue describes them; bring them in line with the
    // editor's real labels when it lands, and drop this fixme.
    test.fixme(true, 'the script editor (CodeMirror, versions, diff, restore) is not committed to the console yet')
    await page.getByRole('button', { name: /script/i }).first().click()

    // Two versions, each with its remark.
    const editor = page.getByRole('textbox', { name: /Script/ })
    for (const [line, remark] of [
      ['echo "version two"', 'Second version'],
      ['echo "version three"', 'Third version'],
    ]) {
      await editor.click()
      await page.keyboard.press('Control+End')
      await page.keyboard.type(`\n${line}`)
      await page.getByRole('button', { name: /Save/ }).click()
      const dialog = page.getByRole('dialog')
      await dialog.getByLabel(/Remark/i).fill(remark)
      await dialog.getByRole('button', { name: /Save/ }).click()
      await expect(page.getByText('Saved')).toBeVisible()
    }
    await expect(page.getByText('Second version')).toBeVisible()
    await expect(page.getByText('Third version')).toBeVisible()

    // The first version side by side with the current source, then restored.
    const first = page.getByRole('row').filter({ hasText: 'First version' })
    await first.getByRole('button', { name: /Compare|Diff/ }).click()
    await expect(page.getByText('echo "version three"')).toBeVisible()
    await first.getByRole('button', { name: /Restore/ }).click()
    await page.getByRole('dialog').getByRole('button', { name: /Restore/ }).click()
    await expect(editor).not.toContainText('version two')
    expect((await api.get(`jobs/${job.id}/script`)).glueSource).not.toContain('version two')
  })
})
