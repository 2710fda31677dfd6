/**
 * Real headless Chromium (Debian's /usr/bin/chromium through playwright-core, no browser download)
 * against the app listening on 127.0.0.1: an anonymous visit to / lands on the login page that
 * states no provider is configured; a session from the test-only identity flow shows the starter
 * page, and its logout button signs the browser out.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext } from 'playwright-core'
import { buildTestApp, signIn, standardUser, CORE_ROOT, type TestApp } from '../helpers/app.js'

const OUTPUT = join(CORE_ROOT, 'test', 'output')
const SESSION = '__Host-ProjectTemplate.Web.Authentication'
const STEP_TIMEOUT = 10_000

describe('browser end to end', { timeout: 60_000 }, () => {
  let t: TestApp
  let origin: string
  let browser: Browser

  before(async () => {
    mkdirSync(OUTPUT, { recursive: true })
    // Development: no upgrade-insecure-requests/HSTS on plain-HTTP loopback; the cookie is still __Host- and Secure.
    t = await buildTestApp({ nodeEnv: 'development' })
    origin = await t.app.listen({ host: '127.0.0.1', port: 0 })
    // launch() gives every run a fresh temporary profile of its own.
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      timeout: 30_000,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']
    })
  })

  after(async () => {
    await browser?.close()
    await t?.app.close()
  })

  async function withContext<T> (run: (context: BrowserContext) => Promise<T>): Promise<T> {
    const context = await browser.newContext()
    context.setDefaultTimeout(STEP_TIMEOUT)
    try {
      return await run(context)
    } finally {
      await context.close()
    }
  }

  test('an anonymous visit to / lands on the login page, which states that no provider is configured', async () => {
    await withContext(async (context) => {
      const page = await context.newPage()
      const response = await page.goto(`${origin}/`)
      assert.equal(response?.status(), 200)
      assert.equal(new URL(page.url()).pathname, '/Account/Login')
      assert.equal(new URL(page.url()).searchParams.get('ReturnUrl'), '/')
      assert.equal((await page.locator('#no-provider').textContent())?.trim(), 'No sign-in provider is configured for this application.')
      assert.equal(await page.locator('form, input, a.provider').count(), 0)
      await page.screenshot({ path: join(OUTPUT, 'login-no-provider.png'), fullPage: true })
    })
  })

  test('a signed-in browser sees the starter page with its name, and the logout button signs it out', async () => {
    const cookieHeader = await signIn(t.app, standardUser())
    await withContext(async (context) => {
      await context.addCookies(cookieHeader.split('; ').map((pair) => {
        const [name = '', ...rest] = pair.split('=')
        // __Host- cookies need Secure and no Domain attribute; Chromium treats 127.0.0.1 as a secure origin.
        return { name, value: rest.join('='), domain: '127.0.0.1', path: '/', secure: true, httpOnly: true, sameSite: 'Lax' as const }
      }))
      const page = await context.newPage()
      await page.goto(`${origin}/`)
      assert.equal(new URL(page.url()).pathname, '/')
      assert.equal(await page.locator('#user-name').textContent(), 'Ada Lovelace')
      await page.screenshot({ path: join(OUTPUT, 'starter-page.png'), fullPage: true })

      await Promise.all([page.waitForURL((url) => url.pathname === '/Account/Login'), page.locator('#logout').click()])
      assert.equal((await page.locator('#no-provider').textContent())?.trim(), 'No sign-in provider is configured for this application.')
      const remaining = (await context.cookies(origin)).filter((cookie) => cookie.name.startsWith(SESSION))
      assert.deepEqual(remaining, [], 'the session cookie is gone from the browser')
      await page.goto(`${origin}/`)
      assert.equal(new URL(page.url()).pathname, '/Account/Login', 'signed out: / challenges again')
    })
  })
})
