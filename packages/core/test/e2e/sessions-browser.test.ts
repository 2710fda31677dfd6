/**
 * The sessions page in real headless Chromium (Debian's /usr/bin/chromium through playwright-core):
 * the same user signed in from two browser contexts; the first opens /Account/Sessions, sees both
 * (its own marked "This device", both described as Chrome on Linux), ends the other with the
 * page's form (anti-forgery included), and the second browser is signed out on its next request.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import type { BrowserContext } from 'playwright-core'
import { cookieHeaderFrom, standardUser, TEST_SIGN_IN_PATH } from '../helpers/app.js'
import { addCookieHeader, SCREENSHOTS, useStarterAppInChromium } from '../helpers/providers/browser.js'

const STEP_TIMEOUT = 10_000

describe('sessions page in Chromium', { timeout: 60_000 }, () => {
  const app = useStarterAppInChromium({ stepTimeout: STEP_TIMEOUT })

  /** A context signed in through the test-only flow with the browser's own User-Agent. */
  async function signedInContext (): Promise<BrowserContext> {
    const context = await app.browser.newContext()
    const page = await context.newPage()
    const userAgent = String(await page.evaluate('navigator.userAgent'))
    await page.close()
    const response = await app.subject.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, headers: { 'user-agent': userAgent }, payload: { claims: standardUser() } })
    assert.equal(response.statusCode, 204)
    await addCookieHeader(context, cookieHeaderFrom(response))
    return context
  }

  test('signed in twice, the first browser ends the other from the sessions page; the other is signed out', async () => {
    const first = await signedInContext()
    const second = await signedInContext()
    try {
      const other = await second.newPage()
      await other.goto(`${app.origin}/`)
      assert.equal(new URL(other.url()).pathname, '/', 'the second browser is signed in')

      const page = await first.newPage()
      await page.goto(`${app.origin}/Account/Sessions`)
      assert.equal(new URL(page.url()).pathname, '/Account/Sessions')
      assert.equal(await page.locator('#session-count').textContent(), 'You are signed in on 2 devices.')
      assert.equal(await page.locator('table.sessions tbody tr').count(), 2)
      assert.equal(await page.locator('tr.current .this-device').textContent(), 'This device')
      assert.deepEqual(await page.locator('table.sessions tbody tr td:first-child').allTextContents(), ['Chrome on Linux', 'Chrome on Linux'])
      await page.screenshot({ path: join(SCREENSHOTS, 'sessions-page.png'), fullPage: true })

      await Promise.all([page.waitForURL(`${app.origin}/Account/Sessions`, { waitUntil: 'load' }), page.locator('.end-session').click()])
      assert.equal(await page.locator('#session-count').textContent(), 'You are signed in on 1 device.')
      assert.equal(await page.locator('.end-session').count(), 0)

      await other.reload()
      assert.equal(new URL(other.url()).pathname, '/Account/Login', 'the ended session is refused')
      await page.goto(`${app.origin}/`)
      assert.equal(new URL(page.url()).pathname, '/', 'the first browser is still signed in')
      assert.equal(app.subject.logs.events('session.ended_by_user').at(-1)?.ended, true)
    } finally {
      await first.close()
      await second.close()
    }
  })
})
