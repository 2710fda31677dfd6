/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser), headless, with the
 * flags that keep it off the network: only the loopback app and IdP are reached. Playwright gives
 * each launch a new empty profile directory and removes it on close.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { buildTestApp, CORE_ROOT, type TestApp } from '../app.js'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'
]

export interface HeadlessBrowser {
  /** A fresh context (own cookie store) with bounded waits. */
  newContext: () => Promise<BrowserContext>
  close: () => Promise<void>
}

/** `stepTimeout` bounds every action and navigation in the contexts it opens (15 s unless given). */
export async function launchChromium (options: { readonly stepTimeout?: number } = {}): Promise<HeadlessBrowser> {
  const stepTimeout = options.stepTimeout ?? 15_000
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 })
  return {
    async newContext () {
      const context = await browser.newContext()
      context.setDefaultTimeout(stepTimeout)
      context.setDefaultNavigationTimeout(stepTimeout)
      return context
    },
    async close () {
      await browser.close()
    }
  }
}

/**
 * Puts the cookies of a Cookie header (from `signIn` or `cookieHeaderFrom`) into a context for the
 * app on 127.0.0.1: `__Host-` cookies need Secure and no Domain attribute; Chromium treats
 * 127.0.0.1 as a secure origin.
 */
export async function addCookieHeader (context: BrowserContext, cookieHeader: string): Promise<void> {
  await context.addCookies(cookieHeader.split('; ').map((pair) => {
    const [name = '', ...rest] = pair.split('=')
    return { name, value: rest.join('='), domain: '127.0.0.1', path: '/', secure: true, httpOnly: true, sameSite: 'Lax' as const }
  }))
}

/** Where the browser tests write their screenshots (test/output/, created by {@link useStarterAppInChromium}). */
export const SCREENSHOTS = join(CORE_ROOT, 'test', 'output')

export interface StarterAppInChromium {
  /** The app (set once `before` has run). */
  subject: TestApp
  /** `http://127.0.0.1:<port>` of the listening app. */
  origin: string
  browser: HeadlessBrowser
}

/**
 * Registers before/after hooks: the starter app in Development (no upgrade-insecure-requests/HSTS
 * on plain-HTTP loopback; the cookie is still `__Host-` and Secure) listening on 127.0.0.1, and
 * headless Chromium whose contexts bound every step by `stepTimeout`; closed in reverse order.
 */
export function useStarterAppInChromium (options: { readonly stepTimeout: number }): StarterAppInChromium {
  const fixture = {} as StarterAppInChromium
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    fixture.subject = await buildTestApp({ nodeEnv: 'development' })
    fixture.origin = await fixture.subject.app.listen({ host: '127.0.0.1', port: 0 })
    fixture.browser = await launchChromium({ stepTimeout: options.stepTimeout })
  })
  after(async () => {
    await fixture.browser?.close()
    await fixture.subject?.app.close()
  })
  return fixture
}

/**
 * On oidc-provider's dev interaction pages (reached from the app's challenge): logs in as `login`
 * and consents; returns when the page has left for the app's callback.
 */
export async function loginAtOidcProvider (page: Page, issuer: string, login: string): Promise<void> {
  await page.waitForURL((url) => url.origin === issuer && url.pathname.startsWith('/interaction/'))
  await page.fill('input[name="login"]', login)
  await page.fill('input[name="password"]', 'any-password')
  await page.click('button[type="submit"]')
  await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' })
  await page.click('button[type="submit"]')
}
