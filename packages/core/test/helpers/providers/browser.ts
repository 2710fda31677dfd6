/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser), headless, with the
 * flags that keep it off the network: only the loopback app and IdP are reached. Playwright gives
 * each launch a new empty profile directory and removes it on close.
 */
import { chromium, type BrowserContext, type Page } from 'playwright-core'

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

export async function launchChromium (): Promise<HeadlessBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 })
  return {
    async newContext () {
      const context = await browser.newContext()
      context.setDefaultTimeout(15_000)
      context.setDefaultNavigationTimeout(15_000)
      return context
    },
    async close () {
      await browser.close()
    }
  }
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
