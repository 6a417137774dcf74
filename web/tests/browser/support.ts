// What every browser test shares: the `test` to import instead of Playwright's, which
//  - fails a test on any uncaught page error and on any error in the browser's console, except
//    "Failed to load resource" lines of the 4xx answers the test declared it expects
//    (`expectFailedRequests`; only GET /auth/me's 401 before a login is expected everywhere);
//  - saves a 1280×800 screenshot of the page the test ended on to CRONWHEEL_SCREENSHOT_DIR;
//  - gives an `api` logged in as the bootstrap admin, to set up what a test does not click
//    through itself.
// The environment comes from tests/console/run_browser_tests.sh.
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { test as base, expect, request, type APIRequestContext, type Locator, type Page } from '@playwright/test'

export { expect }

export const ADMIN = {
  username: process.env.CRONWHEEL_ADMIN_USER ?? 'admin',
  password: process.env.CRONWHEEL_ADMIN_PASSWORD ?? '',
}
/** The app name the test executor registers with. */
export const APP_NAME = process.env.CRONWHEEL_EXECUTOR_APP_NAME ?? 'browser-executors'
/** The address it is reachable at. */
export const EXECUTOR_ADDRESS = process.env.CRONWHEEL_EXECUTOR_ADDRESS ?? ''

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** A name no earlier test (or earlier run on the same database) has used. */
export function unique(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`
}

// ---- the admin's REST API, for set-up and checks ----

export class Api {
  constructor(
    private readonly ctx: APIRequestContext,
    private readonly csrf: string,
  ) {}

  static async login(baseURL: string, username = ADMIN.username, password = ADMIN.password): Promise<Api> {
    const ctx = await request.newContext({ baseURL })
    const r = await ctx.post('/api/v1/auth/login', { data: { username, password } })
    if (!r.ok()) throw new Error(`login as ${username}: ${r.status()} ${await r.text()}`)
    const body = (await r.json()) as { csrfToken: string }
    return new Api(ctx, body.csrfToken)
  }

  async call<T = any>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, data?: unknown): Promise<T> {
    const r = await this.ctx.fetch(`/api/v1/${path}`, {
      method,
      data,
      headers: method === 'GET' ? {} : { 'X-CSRF-Token': this.csrf },
    })
    if (!r.ok()) throw new Error(`${method} ${path}: ${r.status()} ${await r.text()}`)
    return (r.status() === 204 ? undefined : await r.json()) as T
  }
  /** `text` as the body, of `contentType` (a jobs file as YAML); throws unless 2xx. */
  async sendText<T = any>(method: 'POST' | 'PUT', path: string, text: string, contentType: string): Promise<T> {
    const r = await this.ctx.fetch(`/api/v1/${path}`, {
      method,
      data: text,
      headers: { 'X-CSRF-Token': this.csrf, 'Content-Type': contentType },
    })
    if (!r.ok()) throw new Error(`${method} ${path}: ${r.status()} ${await r.text()}`)
    return (await r.json()) as T
  }
  get<T = any>(path: string) {
    return this.call<T>('GET', path)
  }
  post<T = any>(path: string, data: unknown = {}) {
    return this.call<T>('POST', path, data)
  }
  put<T = any>(path: string, data: unknown) {
    return this.call<T>('PUT', path, data)
  }
  del(path: string) {
    return this.call('DELETE', path)
  }
  dispose() {
    return this.ctx.dispose()
  }

  /** The group `appName`, created (automatic addresses) when missing; its id. */
  async ensureGroup(appName = APP_NAME, title = 'Browser test executors'): Promise<number> {
    const page = await this.get<{ items: { id: number; appName: string }[] }>(
      `groups?text=${encodeURIComponent(appName)}&limit=100`,
    )
    const found = page.items.find((g) => g.appName === appName)
    if (found) return found.id
    const created = await this.post<{ id: number }>('groups', { appName, title, addressType: 0 })
    return created.id
  }

  /** A stopped BEAN job of the test executor's group, on a built-in handler. */
  async createJob(fields: Record<string, unknown>): Promise<{ id: number; jobDesc: string }> {
    const jobGroup = (fields.jobGroup as number | undefined) ?? (await this.ensureGroup())
    return this.post('jobs', {
      jobGroup,
      author: 'browser tests',
      scheduleType: 'NONE',
      glueType: 'BEAN',
      executorRouteStrategy: 'FIRST',
      executorBlockStrategy: 'SERIAL_EXECUTION',
      misfireStrategy: 'DO_NOTHING',
      ...fields,
    })
  }
}

/** Logs `page`'s browser context in through the API (the cookie lands in the context). */
export async function logIn(page: Page, username = ADMIN.username, password = ADMIN.password): Promise<void> {
  const r = await page.request.post('/api/v1/auth/login', { data: { username, password } })
  expect(r.status(), await r.text()).toBe(200)
}

/**
 * Opens the Element Plus select whose input is `combobox`, as a user does: a click on the
 * select's box, since the shown value (or placeholder) lies over the input. The click is not
 * forced, so it waits while anything else lies over the select: a form's loading mask still
 * fading out after its data came takes a forced click and leaves the select shut.
 */
export async function openSelect(combobox: Locator): Promise<void> {
  await combobox.locator('xpath=ancestor::div[contains(concat(" ", @class, " "), " el-select__wrapper ")][1]').click()
}

// ---- screenshots ----

const SCREENSHOT_DIR = process.env.CRONWHEEL_SCREENSHOT_DIR
const DOCS_IMAGES = fileURLToPath(new URL('../../../docs/images/', import.meta.url))

/**
 * With CRONWHEEL_UPDATE_DOCS_IMAGES=1, writes docs/images/console-NAME.png (the README's
 * pictures) from what `page` shows now.
 */
export async function docsImage(page: Page, name: 'dashboard' | 'job-editor' | 'live-log' | 'workflow-editor' | 'workflow-run' | 'calendar-year'): Promise<void> {
  if (process.env.CRONWHEEL_UPDATE_DOCS_IMAGES !== '1') return
  mkdirSync(DOCS_IMAGES, { recursive: true })
  await page.screenshot({ path: join(DOCS_IMAGES, `console-${name}.png`), animations: 'disabled' })
}

function fileName(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
}

// ---- the test ----

interface ExpectedFailure {
  status: number
  path: RegExp
}

/** Before any login the console asks who is logged in, and is told: nobody. */
const ALWAYS_EXPECTED: ExpectedFailure[] = [{ status: 401, path: /^\/api\/v1\/auth\/me$/ }]

const FAILED_RESOURCE = /^Failed to load resource: the server responded with a status of (\d+)/

/** The 4xx answers a test causes on purpose; their "Failed to load resource" lines are fine. */
export class ExpectedFailures {
  readonly list: ExpectedFailure[] = [...ALWAYS_EXPECTED]
  /** Answers of `status` from paths matching `path` are expected in this test. */
  add(status: number, path: RegExp): void {
    this.list.push({ status, path })
  }
  covers(status: number, path: string): boolean {
    return status >= 400 && status < 500 && this.list.some((e) => e.status === status && e.path.test(path))
  }
}

export const test = base.extend<{ expectedFailures: ExpectedFailures; consoleGuard: void }, { api: Api }>({
  api: [
    async ({}, use, workerInfo) => {
      const api = await Api.login(workerInfo.project.use.baseURL as string)
      await use(api)
      await api.dispose()
    },
    { scope: 'worker' },
  ],

  expectedFailures: async ({}, use) => {
    await use(new ExpectedFailures())
  },

  page: async ({ page }, use, testInfo) => {
    await use(page)
    if (SCREENSHOT_DIR) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true })
      const name = fileName(testInfo.titlePath.slice(1).join(' '))
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) }).catch(() => {})
    }
  },

  consoleGuard: [
    async ({ page, expectedFailures }, use) => {
      const problems: string[] = []
      page.on('pageerror', (e) => problems.push(`page error: ${e.stack ?? e.message}`))
      page.on('console', (m) => {
        if (m.type() !== 'error') return
        const failed = FAILED_RESOURCE.exec(m.text())
        const url = m.location().url
        if (failed && url && expectedFailures.covers(Number(failed[1]), new URL(url).pathname)) return
        problems.push(`console error: ${m.text()}${failed ? ` (${url || 'no URL'})` : ''}`)
      })
      await use()
      expect(problems, 'errors in the browser').toEqual([])
    },
    { auto: true },
  ],
})
