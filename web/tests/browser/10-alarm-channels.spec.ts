import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { APP_NAME, expect, logIn, openSelect, test, unique } from './support'

/** What the webhook receiver below was sent. */
interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

test.describe('alarm channels', () => {
  // A webhook receiver of the test's own: records every request, answers 200.
  const received: Received[] = []
  let receiver: Server
  let receiverUrl = ''
  test.beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
        res.writeHead(200, { 'Content-Type': 'application/json' })
        res.end('{"ok":true}')
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/cronwheel`
  })
  test.afterAll(async () => {
    await new Promise<void>((resolve) => receiver.close(() => resolve()))
  })
  // The channels a test made go however it ends, so no later test's failed runs alarm them.
  const madeNames: string[] = []
  test.afterEach(async ({ api }) => {
    const names = madeNames.splice(0)
    const channels = await api.get<{ items: { id: number; name: string }[] }>('alarm-channels?limit=1000')
    for (const c of channels.items) if (names.includes(c.name)) await api.del(`alarm-channels/${c.id}`)
  })

  test('an admin makes a webhook channel for a group, sees its secret once, tests it and changes it', async ({
    page,
    api,
    expectedFailures,
  }) => {
    await api.ensureGroup()
    const job = await api.createJob({ jobDesc: unique('Invoice export'), executorHandler: 'echo' })
    const taken = await api.post<{ id: number; name: string }>('alarm-channels', {
      name: unique('Taken name'),
      kind: 'email',
      target: 'ops@example.com',
    })
    const name = unique('Ops webhook')
    madeNames.push(taken.name, name)
    // A wrong URL (400 on target) and a name in use (409 on name), on purpose.
    expectedFailures.add(400, /^\/api\/v1\/alarm-channels$/)
    expectedFailures.add(409, /^\/api\/v1\/alarm-channels$/)

    await logIn(page)
    await page.goto('/')
    await page.getByRole('menuitem', { name: 'Alarm channels' }).click()
    await expect(page.getByRole('heading', { name: 'Alarm channels', level: 1 })).toBeVisible()

    // A new webhook for the test executor's group, its secret left to the admin.
    await page.getByRole('button', { name: 'New channel' }).click()
    const dialog = page.getByRole('dialog', { name: 'New alarm channel' })
    await dialog.getByLabel('Name', { exact: true }).fill(taken.name)
    await openSelect(dialog.getByRole('combobox', { name: 'Kind' }))
    await page.getByRole('option', { name: 'Webhook' }).click()
    await dialog.getByLabel('URL').fill('ftp://127.0.0.1/hooks')
    await openSelect(dialog.getByRole('combobox', { name: 'Groups' }))
    await page.getByRole('option', { name: `(${APP_NAME})` }).click()
    await dialog.getByRole('button', { name: 'Create' }).click()
    // Each refusal is named under its field.
    await expect(dialog.getByText(/^target.*expected an http\(s\) URL/)).toBeVisible()
    await dialog.getByLabel('URL').fill(receiverUrl)
    await dialog.getByRole('button', { name: 'Create' }).click()
    await expect(dialog.getByText(/expected an http\(s\) URL/)).toHaveCount(0)
    await expect(dialog.getByText(/name is taken/)).toBeVisible()
    await dialog.getByLabel('Name', { exact: true }).fill(name)
    await dialog.getByRole('button', { name: 'Create' }).click()

    // The generated secret, shown this once.
    const secretDialog = page.getByRole('dialog', { name: 'The webhook’s secret' })
    await expect(secretDialog.getByText('it is shown only once')).toBeVisible()
    const secretBox = secretDialog.getByRole('textbox', { name: `The secret of the channel ${name}` })
    const secret = await secretBox.inputValue()
    expect(secret.length).toBeGreaterThanOrEqual(16)
    await secretDialog.getByRole('button', { name: 'I copied it' }).click()
    await expect(secretDialog).toBeHidden()

    // The list names the group by its title, and says a secret is set, never which.
    const row = page.getByRole('row').filter({ hasText: name })
    await expect(row).toContainText('Webhook')
    await expect(row).toContainText(receiverUrl)
    await expect(row).toContainText('Browser test executors')
    await expect(row).toContainText('Set')
    await expect(page.getByText(secret)).toHaveCount(0)

    // A test alarm reaches the receiver, signed with that secret.
    await page.getByRole('button', { name: `Send a test alarm to the channel ${name}` }).click()
    await expect(page.getByText(`The test alarm reached the channel ${name}.`)).toBeVisible()
    await expect.poll(() => received.length).toBeGreaterThan(0)
    const hook = received.find((r) => r.method === 'POST' && r.url === '/hooks/cronwheel')
    expect(hook, 'the receiver got a POST').toBeDefined()
    expect(JSON.parse(hook!.body)).toMatchObject({ event: 'test' })
    const timestamp = String(hook!.headers['x-cronwheel-timestamp'])
    const signature = createHmac('sha256', secret).update(`${timestamp}.${hook!.body}`).digest('hex')
    expect(hook!.headers['x-cronwheel-signature']).toBe(`sha256=${signature}`)

    // Changed: one job more, and a new secret.
    await page.getByRole('button', { name: `Edit the channel ${name}` }).click()
    const edit = page.getByRole('dialog', { name: `Edit the channel ${name}` })
    await expect(edit.getByLabel('URL')).toHaveValue(receiverUrl)
    await expect(edit.getByLabel('Secret', { exact: true })).toHaveValue('')
    await openSelect(edit.getByRole('combobox', { name: 'Jobs' }))
    await page.keyboard.type(job.jobDesc)
    await page.getByRole('option', { name: `#${job.id} ${job.jobDesc}` }).click()
    // (Clicking its label, as a user does: Element Plus hides the box's own input.)
    await edit.getByText(/^Rotate secret/).click()
    await expect(edit.getByRole('checkbox', { name: /Rotate secret/ })).toBeChecked()
    await edit.getByRole('button', { name: 'Save' }).click()
    await expect(secretDialog).toBeVisible()
    const rotated = await secretBox.inputValue()
    expect(rotated).not.toBe(secret)
    await secretDialog.getByRole('button', { name: 'I copied it' }).click()
    await expect(secretDialog).toBeHidden()
    await expect(row).toContainText(job.jobDesc)
    await expect(row).toContainText('Set')
  })

  test('an admin deletes a channel after confirming', async ({ page, api }) => {
    const name = unique('Old webhook')
    madeNames.push(name)
    await api.post('alarm-channels', { name, kind: 'webhook', target: receiverUrl, groups: [await api.ensureGroup()] })

    await logIn(page)
    await page.goto('/alarm-channels')
    const row = page.getByRole('row').filter({ hasText: name })
    await expect(row).toContainText('Browser test executors')
    await page.getByRole('button', { name: `Delete the channel ${name}` }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete?' })
    await expect(confirm).toContainText(`"${name}"`)
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await expect(page.getByText('Deleted')).toBeVisible()
    await expect(row).toHaveCount(0)
    await expect(confirm).toBeHidden()
  })
})
