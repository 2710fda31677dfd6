/**
 * The core's pages as a user meets them, for the accessibility test (test/e2e/pages-accessibility)
 * and the screenshot script (scripts/screenshots.ts): the starter app listening on 127.0.0.1 with
 * two registered providers (Staff, serving the e-mail domain example.test, and an unavailable
 * Partners), so the login page has provider buttons and the e-mail field; a signed-in user with a
 * second session elsewhere; an ApiKey scheme ({@link API_KEY_PREFIX}), so /Account/ApiKeys exists
 * (the user's sign-in is recent: its creation form is shown); and {@link CORE_PAGES}, each page
 * with how to reach it in a browser.
 * A challenge redirects to https://idp.invalid/ (never answered: the name does not resolve).
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { BrowserContext, Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, claim, cookieHeaderFrom, standardUser, TEST_SIGN_IN_PATH, type TestApp } from './app.js'
import { addCookieHeader } from './providers/browser.js'

export const IDP_ORIGIN = 'https://idp.invalid'
/** Challenges per client and window: room for the keyboard tests, and few enough to reach the 429. */
export const CHALLENGE_LIMIT = 12
/** The prefix of the app's API keys. */
export const API_KEY_PREFIX = 'pt_'

export interface PagesApp {
  readonly subject: TestApp
  readonly origin: string
}

/** A provider that only starts flows: its challenge redirects to {@link IDP_ORIGIN}. */
function registerProvider (app: FastifyInstance, scheme: string, displayName: string, options: { domains?: string[], available: boolean }): void {
  app.authentication.registerProvider({
    scheme,
    displayName,
    paths: [],
    ...(options.domains === undefined ? {} : { domains: options.domains }),
    status: () => ({ available: options.available }),
    async challenge (_request, reply, returnUrl, hint) {
      const flowId = await app.externalSignIn.beginFlow(reply, scheme, returnUrl, {})
      const query = new URLSearchParams({ state: flowId, ...(hint?.loginHint === undefined ? {} : { login_hint: hint.loginHint }) })
      return reply.redirect(`${IDP_ORIGIN}/authorize?${query.toString()}`, 302)
    }
  })
}

/**
 * The starter app with the two providers, listening on 127.0.0.1: Production, so the pages are
 * those users see (no exception detail) under the production Content-Security-Policy.
 */
export async function startPagesApp (): Promise<PagesApp> {
  const subject = await buildTestApp({
    nodeEnv: 'production',
    settings: {
      RateLimits: { ChallengePerWindow: CHALLENGE_LIMIT, WindowSeconds: 600 },
      Authentication: { Schemes: { Keys: { Type: 'ApiKey', Prefix: API_KEY_PREFIX, Scopes: { 'application.read': 'Read the application information', 'orders.write': 'Change orders' } } } }
    } as never,
    configure: (app) => {
      registerProvider(app, 'Staff', 'Staff account', { domains: ['example.test'], available: true })
      registerProvider(app, 'Partners', 'Partner sign-in', { available: false })
    }
  })
  const origin = await subject.app.listen({ host: '127.0.0.1', port: 0 })
  return { subject, origin }
}

/**
 * Signs `context` in as the standard user with its own User-Agent, plus one other session of the
 * same user from Firefox on Windows, so /Account/Sessions has a row to end.
 */
export async function signInContext (app: PagesApp, context: BrowserContext): Promise<void> {
  const page = await context.newPage()
  const userAgent = String(await page.evaluate('navigator.userAgent'))
  await page.close()
  const firefox = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'
  // A user of its own per context: the sessions page lists exactly these two sessions.
  const claims = [claim('application:subject', `pages-user-${randomUUID()}`), ...standardUser().filter((item) => item.type !== 'application:subject')]
  for (const agent of [firefox, userAgent]) {
    const authentication = { authTime: Math.floor(Date.now() / 1000) }
    const response = await app.subject.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, headers: { 'user-agent': agent }, payload: { claims, authentication } })
    assert.equal(response.statusCode, 204)
    if (agent === userAgent) await addCookieHeader(context, cookieHeaderFrom(response))
  }
}

/** Uses up this client's challenge budget, so the next challenge is answered 429. */
export async function exhaustChallenges (app: PagesApp): Promise<void> {
  for (let index = 0; index <= CHALLENGE_LIMIT; index++) await app.subject.app.inject({ url: '/External/Challenge?provider=Staff', remoteAddress: '127.0.0.1' })
}

export interface CorePage {
  /** File-name-safe name (screenshots) and test name. */
  readonly name: string
  readonly path: string
  readonly status: number
  /** Open in a signed-in context. */
  readonly signedIn?: boolean
  /** Runs before the visit (the 429 page uses up the challenge budget first). */
  readonly prepare?: (app: PagesApp) => Promise<void>
  /** Stops at this page although it navigates on at once (the e-mail flow's continue page). */
  readonly holdNavigation?: boolean
}

/** Every page the core renders for a browser, in an order that keeps the 429 last. */
export const CORE_PAGES: readonly CorePage[] = [
  { name: 'login', path: '/Account/Login', status: 200 },
  { name: 'login-failure', path: '/Account/Login?failure=cancelled', status: 200 },
  { name: 'login-email-unknown', path: '/External/Challenge?email=ada%40unknown.test', status: 200 },
  { name: 'email-continue', path: '/External/Challenge?email=ada%40example.test', status: 200, holdNavigation: true },
  { name: 'access-denied', path: '/Account/AccessDenied', status: 403, signedIn: true },
  { name: 'error', path: '/Home/Error/500', status: 500 },
  { name: 'sessions', path: '/Account/Sessions', status: 200, signedIn: true },
  { name: 'api-keys', path: '/Account/ApiKeys', status: 200, signedIn: true },
  { name: 'too-many-requests', path: '/External/Challenge?provider=Staff', status: 429, prepare: exhaustChallenges }
]

/**
 * Opens `corePage` in `page` and returns the HTTP status. A page that navigates on at once is held:
 * the follow-up navigation is aborted, which leaves the page in place.
 */
export async function visit (app: PagesApp, page: Page, corePage: CorePage): Promise<number | undefined> {
  await corePage.prepare?.(app)
  if (corePage.holdNavigation === true) {
    const target = new URL(corePage.path, app.origin).href
    await page.route('**/*', async (route) => {
      const request = route.request()
      if (request.isNavigationRequest() && request.url() !== target) await route.abort('aborted')
      else await route.fallback()
    })
  }
  const response = await page.goto(new URL(corePage.path, app.origin).href, { waitUntil: 'load' })
  return response?.status()
}
