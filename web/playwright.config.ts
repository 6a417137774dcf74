// The console's browser tests (web/tests/browser), run by tests/console/run_browser_tests.sh
// (ctest console.browser, label browser) against a real admin, executor and PostgreSQL.
// It sets the environment below; Playwright's own browser download is never used: Debian's
// chromium is driven instead.
//   CRONWHEEL_CONSOLE_URL     the admin serving the console (required)
//   CRONWHEEL_CHROMIUM        the browser (default /usr/bin/chromium)
//   CRONWHEEL_BROWSER_OUTPUT  traces and screenshots of failed tests (default test-results in
//                             the system's temporary directory, never inside web/)
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineConfig, devices } from '@playwright/test'

const output = process.env.CRONWHEEL_BROWSER_OUTPUT ?? join(tmpdir(), 'cronwheel-browser-tests')

export default defineConfig({
  testDir: 'tests/browser',
  testMatch: '*.spec.ts',
  // Files run in name order (their numbers) on one worker: the machine has two cores, and the
  // admin, the executor and PostgreSQL need the other.
  workers: 1,
  fullyParallel: false,
  // A failure is a failure: never hidden by a second try.
  retries: 0,
  forbidOnly: true,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  globalTimeout: 360_000,
  outputDir: join(output, 'results'),
  reporter: [['list'], ['html', { outputFolder: join(output, 'report'), open: 'never' }]],
  use: {
    baseURL: process.env.CRONWHEEL_CONSOLE_URL,
    ...devices['Desktop Chrome'],
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
    // Fixed, and not UTC: the console shows times in the browser's zone beside the job's.
    timezoneId: 'Europe/Berlin',
    headless: true,
    actionTimeout: 10_000,
    navigationTimeout: 15_000,
    // A failed test keeps its trace (actions, network, DOM snapshots) without the screencast:
    // recording frames for every test took a quarter of the run's CPU (browser, GPU process and
    // Playwright), and the screenshot below shows the page as it failed.
    trace: { mode: 'retain-on-failure', screenshots: false },
    screenshot: 'only-on-failure',
    video: 'off',
    launchOptions: {
      executablePath: process.env.CRONWHEEL_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    },
  },
})
