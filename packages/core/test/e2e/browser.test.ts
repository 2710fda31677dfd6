/**
 * Real headless Chromium (Debian's /usr/bin/chromium through playwright-core, no browser download)
 * against the app listening on 127.0.0.1: an anonymous visit to / lands on the login page that
 * states no provider is configured; a session from the test-only identity flow shows the starter
 * page, and its logout button signs the browser out.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import type { BrowserContext } from 'playwright-core'
import { signIn, standardUser } from '../helpers/app.js'
import { addCookieHeader, SCREENSHOTS, useStarterAppInChromium } from '../helpers/providers/browser.js'

const SESSION = '__Host-ProjectTemplate.Web.Authentication'
const STEP_TIMEOUT = 10_000

describe('browser end to end', { timeout: 60_000 }, () => {
  const app = useStarterAppInChromium({ stepTimeout: STEP_TIMEOUT })

  async function withContext<T> (run: (context: BrowserContext) => Promise<T>): Promise<T> {
    const context = await app.browser.newContext()
    try {
      return await run(context)
    } finally {
      await context.close()
    }
  }

  test('an anonymous visit to / lands on the login page, which states that no provider is configured', async () => {
    await withContext(async (context) => {
      const page = await context.newPage()
      const response = await page.goto(`${app.origin}/`)
      assert.equal(response?.status(), 200)
      assert.equal(new URL(page.url()).pathname, '/Account/Login')
      assert.equal(new URL(page.url()).searchParams.get('ReturnUrl'), '/')
      assert.equal((await page.locator('#no-provider').textContent())?.trim(), 'No sign-in provider is configured for this application.')
      assert.equal(await page.locator('form, input, a.provider').count(), 0)
      await page.screenshot({ path: join(SCREENSHOTS, 'login-no-provider.png'), fullPage: true })
    })
  })

  test('a signed-in browser sees the starter page with its name, and the logout button signs it out', async () => {
    const cookieHeader = await signIn(app.subject.app, standardUser())
    await withContext(async (context) => {
      await addCookieHeader(context, cookieHeader)
      const page = await context.newPage()
      await page.goto(`${app.origin}/`)
      assert.equal(new URL(page.url()).pathname, '/')
      assert.equal(await page.locator('#user-name').textContent(), 'Ada Lovelace')
      await page.screenshot({ path: join(SCREENSHOTS, 'starter-page.png'), fullPage: true })

      await Promise.all([page.waitForURL((url) => url.pathname === '/Account/Login'), page.locator('#logout').click()])
      assert.equal((await page.locator('#no-provider').textContent())?.trim(), 'No sign-in provider is configured for this application.')
      const remaining = (await context.cookies(app.origin)).filter((cookie) => cookie.name.startsWith(SESSION))
      assert.deepEqual(remaining, [], 'the session cookie is gone from the browser')
      await page.goto(`${app.origin}/`)
      assert.equal(new URL(page.url()).pathname, '/Account/Login', 'signed out: / challenges again')
    })
  })
})
