/**
 * The core's pages in real headless Chromium (Debian's /usr/bin/chromium through playwright-core)
 * are accessible and styled under the app's own Content-Security-Policy: axe-core (its source put
 * into each page through the DevTools protocol, which the page's CSP does not govern) finds no
 * violation on the login page (provider buttons, the e-mail field), the login page with a failure
 * message and with an unknown e-mail domain (the address kept in the field), the e-mail flow's
 * continue page, access denied, the error page, /Account/Sessions and /Account/ApiKeys signed in
 * and the 429 page, in
 * the light and the dark scheme and at a phone's width (390 px, where nothing scrolls sideways);
 * the core's stylesheet applies and the browser reports no CSP violation. Keyboard only (the
 * IdP's address, https://idp.invalid/, is requested and never answered): Tab reaches the provider
 * button and Enter starts its challenge; the e-mail field typed and Enter reaches the provider
 * serving the domain; on /Account/ApiKeys a key is created, shown once (no-store), and revoked, by
 * keyboard alone, with no axe-core violation on the form, the refused form, the new key's page and
 * the list with the revoked key.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { BrowserContext, Page } from 'playwright-core'
import { launchChromium, type HeadlessBrowser } from '../helpers/providers/browser.js'
import { API_KEY_PREFIX, CORE_PAGES, IDP_ORIGIN, signInContext, startPagesApp, visit, type PagesApp } from '../helpers/pages-in-chromium.js'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const STEP_TIMEOUT = 10_000

interface Violation { readonly id: string, readonly impact: string | null, readonly help: string, readonly targets: string[] }

/** Every axe-core rule the default run applies (WCAG 2.0-2.2 A and AA, best practices). */
async function axeViolations (page: Page): Promise<Violation[]> {
  await page.evaluate(AXE_SOURCE)
  const results = await page.evaluate(`axe.run(document).then((results) => ({ passed: results.passes.length, violations: results.violations.map((violation) => ({
    id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' '))
  })) }))`) as { passed: number, violations: Violation[] }
  // Teeth: axe ran its rules on this page (a page axe could not read would pass nothing).
  assert.ok(results.passed >= 10, `axe-core passed ${results.passed} rules`)
  return results.violations
}

/** Tab (at most `limit` times) until the focused element matches `selector`; false if it never does. */
async function tabTo (page: Page, selector: string, limit = 12): Promise<boolean> {
  for (let step = 0; step < limit; step++) {
    await page.keyboard.press('Tab')
    if (await page.evaluate(`document.activeElement !== null && document.activeElement.matches(${JSON.stringify(selector)})`)) return true
  }
  return false
}

describe('the core\'s pages in Chromium', { timeout: 120_000 }, () => {
  let app: PagesApp
  let browser: HeadlessBrowser

  before(async () => {
    app = await startPagesApp()
    browser = await launchChromium({ stepTimeout: STEP_TIMEOUT })
  })
  after(async () => {
    await browser?.close()
    await app?.subject.app.close()
  })

  async function withContext<T> (run: (context: BrowserContext) => Promise<T>): Promise<T> {
    const context = await browser.newContext()
    try {
      return await run(context)
    } finally {
      await context.close()
    }
  }

  test('keyboard only: Tab reaches the provider button, Enter starts its challenge', async () => {
    await withContext(async (context) => {
      const page = await context.newPage()
      await page.goto(`${app.origin}/Account/Login`)
      assert.ok(await tabTo(page, 'a.provider[data-provider="Staff"]'), 'the provider button takes the focus')
      const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')
      assert.equal(outline, 'solid', 'the focused button shows a focus ring')
      const [challenge, idp] = await Promise.all([
        page.waitForResponse((response) => new URL(response.url()).pathname === '/External/Challenge'),
        page.waitForRequest((request) => request.url().startsWith(`${IDP_ORIGIN}/`)),
        page.keyboard.press('Enter')
      ])
      assert.equal(new URL(challenge.url()).searchParams.get('provider'), 'Staff')
      assert.equal(challenge.status(), 302)
      assert.equal(new URL(idp.url()).pathname, '/authorize')
    })
  })

  test('keyboard only: the e-mail field typed and Enter reaches the provider that serves the domain', async () => {
    await withContext(async (context) => {
      const page = await context.newPage()
      await page.goto(`${app.origin}/Account/Login`)
      assert.ok(await tabTo(page, 'input#email'), 'the e-mail field takes the focus')
      await page.keyboard.type('ada@example.test')
      const [idp] = await Promise.all([page.waitForRequest((request) => request.url().startsWith(`${IDP_ORIGIN}/`)), page.keyboard.press('Enter')])
      assert.equal(new URL(idp.url()).searchParams.get('login_hint'), 'ada@example.test')
    })
  })

  test('an unknown e-mail domain answers the login page with the address still in the field', async () => {
    await withContext(async (context) => {
      const page = await context.newPage()
      await page.goto(`${app.origin}/Account/Login`)
      await page.fill('input#email', 'ada@unknown.test')
      await page.focus('input#email')
      await Promise.all([page.waitForURL((url) => url.pathname === '/External/Challenge'), page.keyboard.press('Enter')])
      assert.equal(await page.locator('p.alert[role="alert"]').count(), 1)
      assert.equal(await page.inputValue('input#email'), 'ada@unknown.test')
    })
  })

  /** No axe-core violation on the page in the light and the dark scheme. */
  async function assertAccessible (page: Page, what: string): Promise<void> {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      assert.deepEqual(await axeViolations(page), [], `${what}, ${colorScheme} scheme`)
    }
  }

  test('keyboard only on /Account/ApiKeys: a refused form names its field, a key is created and shown once, then revoked', async () => {
    await withContext(async (context) => {
      await signInContext(app, context)
      const page = await context.newPage()
      await page.goto(`${app.origin}/Account/ApiKeys`)
      // Refused: no scope chosen (the browser checks the name and lifetime itself, not the checkboxes).
      assert.ok(await tabTo(page, '#key-name'), 'the name field takes the focus')
      await page.keyboard.type('ci deploy')
      assert.ok(await tabTo(page, '#create-key'), 'the create button takes the focus')
      const [refused] = await Promise.all([page.waitForResponse((response) => new URL(response.url()).pathname === '/Account/ApiKeys/Create'), page.keyboard.press('Enter')])
      assert.equal(refused.status(), 400)
      await page.waitForLoadState('load')
      assert.match(await page.locator('#form-problem').innerText(), /^Scopes: /)
      await assertAccessible(page, 'the refused form')
      // Created: the first scope checked with Space, submitted with Enter.
      assert.ok(await tabTo(page, '#scope-0', 20), 'the first scope takes the focus')
      await page.keyboard.press('Space')
      assert.ok(await tabTo(page, '#create-key'), 'the create button takes the focus')
      const [created] = await Promise.all([page.waitForResponse((response) => new URL(response.url()).pathname === '/Account/ApiKeys/Create'), page.keyboard.press('Enter')])
      assert.equal(created.status(), 201)
      assert.equal(created.headers()['cache-control'], 'no-store')
      await page.waitForLoadState('load')
      const secret = await page.inputValue('#new-key')
      assert.ok(secret.startsWith(API_KEY_PREFIX) && secret.length === API_KEY_PREFIX.length + 65, 'the key is shown')
      await assertAccessible(page, 'the new key')
      assert.ok(await tabTo(page, '#back-to-keys'), 'the way back takes the focus')
      await Promise.all([page.waitForURL((url) => url.pathname === '/Account/ApiKeys'), page.keyboard.press('Enter')])
      assert.ok(!(await page.content()).includes(secret), 'the list never shows the key again')
      assert.equal(await page.locator('table.api-keys tbody tr').count(), 1)
      assert.equal((await app.subject.app.apiKeys?.scheme().authenticate(secret))?.ok, true)
      // Revoked: the row's button, by keyboard.
      assert.ok(await tabTo(page, 'button.revoke-key'), 'the revoke button takes the focus')
      await Promise.all([page.waitForResponse((response) => new URL(response.url()).pathname === '/Account/ApiKeys' && response.status() === 200), page.keyboard.press('Enter')])
      await page.waitForLoadState('load')
      assert.equal(await page.locator('table.api-keys tbody tr td:nth-child(7)').innerText(), 'Revoked')
      assert.equal((await app.subject.app.apiKeys?.scheme().authenticate(secret))?.ok, false)
      await assertAccessible(page, 'the list with a revoked key')
    })
  })

  for (const corePage of CORE_PAGES) {
    test(`${corePage.name} (${corePage.path}): styled, no CSP violation, no axe-core violation in light and dark and at a phone's width`, async () => {
      await withContext(async (context) => {
        if (corePage.signedIn === true) await signInContext(app, context)
        const page = await context.newPage()
        const cspErrors: string[] = []
        page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text()) })
        assert.equal(await visit(app, page, corePage), corePage.status)
        assert.equal(new URL(page.url()).pathname, new URL(corePage.path, app.origin).pathname, 'still on the page')
        assert.equal(await page.evaluate('getComputedStyle(document.body).display'), 'flex', 'the core\'s stylesheet applies')
        for (const colorScheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme })
          assert.deepEqual(await axeViolations(page), [], `${colorScheme} scheme`)
        }
        // A phone's width: the narrow layout (the sessions table as blocks), and nothing wider than the screen.
        await page.setViewportSize({ width: 390, height: 844 })
        assert.deepEqual(await axeViolations(page), [], 'phone width, dark scheme')
        assert.equal(await page.evaluate('document.documentElement.scrollWidth <= 390'), true, 'no sideways scrolling at 390 px')
        assert.deepEqual(cspErrors, [])
      })
    })
  }
})
