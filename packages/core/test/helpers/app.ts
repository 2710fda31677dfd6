/**
 * The core's test helpers: the starter app (template/src/app.ts, the app every generated project
 * starts from: one source, nothing copied) built through `@project-template/core/testing`
 * (src/testing/), with the core's own root, and the core-internal pieces (stored sessions,
 * anti-forgery, the standard principals) its suites share.
 *
 * The starter app imports `@project-template/core`; in the core's tests that name resolves to
 * this package's src/index.ts (tsconfig.json `paths`, which tsx applies, also in child processes
 * through TSX_TSCONFIG_PATH, set below), so app and tests share one copy of every module.
 */
import { randomBytes } from 'node:crypto'
import { after, before, type TestContext } from 'node:test'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../../../template/src/app.js'
import { createKeyRing, type KeyRing } from '../../src/data-protection/key-ring.js'
import type { Claim } from '../../src/session/principal.js'
import type { LoadedConfiguration } from '../../src/providers/application-schema.js'
import { openSessionReference, openTicket } from '../../src/session/ticket.js'
import type { AuthenticationTicket } from '../../src/session/principal.js'
import type { EmbeddedStateStore } from '../../src/state/embedded-store.js'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import {
  buildTestApp as buildWithTesting,
  claim,
  cookieHeaderFrom,
  loadTestConfiguration as loadWithTesting,
  signIn,
  testKeyRing as testKeyRingOf,
  type TestApp,
  type TestAppOptions as TestingAppOptions,
  type TestSettings
} from '../../src/testing/app.js'
import { antiforgeryTokenIn } from './cookies.js'
import { waitFor } from './wait.js'

export { buildApp }
export { claim, CLOSED_POSTURE, cookieHeaderFrom, EPHEMERAL_STATE, LogCapture, settingsToEnv, signIn, TEST_SIGN_IN_PATH } from '../../src/testing/app.js'
export type { TestApp } from '../../src/testing/app.js'

/** The core package's root (its docs/, test/output/). */
export const CORE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The starter app's root (the monorepo's template/): the content root of every app the tests build, and the cwd of the process tests. */
export const APP_ROOT = resolve(CORE_ROOT, '..', '..', 'template')

// Child processes run with cwd APP_ROOT, where tsx would read template/tsconfig.json and load the
// core's built dist/ beside these tests' src/: point them at the core's tsconfig.json instead.
process.env.TSX_TSCONFIG_PATH = join(CORE_ROOT, 'tsconfig.json')

/** The test app's options: everything `@project-template/core/testing` takes but the app and its root. */
export type TestAppOptions = Omit<TestingAppOptions, 'buildApp' | 'contentRoot' | 'applicationName'>

export function testKeyRing (): KeyRing {
  return testKeyRingOf()
}

export function loadTestConfiguration (options: { readonly settings?: TestSettings, readonly nodeEnv?: string } = {}): LoadedConfiguration {
  return loadWithTesting({ ...options, contentRoot: APP_ROOT })
}

export async function buildTestApp (options: TestAppOptions = {}): Promise<TestApp> {
  return await buildWithTesting({ ...options, buildApp, contentRoot: APP_ROOT })
}

/**
 * Builds the app for one test and closes it when that test ends (`t.after`), as fastify/demo's
 * `build(t)` does: `const t = await build(context, { settings })`.
 */
export async function build (context: Pick<TestContext, 'after'>, options: TestAppOptions = {}): Promise<TestApp> {
  const built = await buildTestApp(options)
  context.after(async () => { await built.app.close() })
  return built
}

/**
 * For a suite (`describe`): builds the app in `before` and closes it in `after`; inside the tests
 * `t.app` is the ready app. `const t = buildForSuite({ configure })`.
 */
export function buildForSuite (options: TestAppOptions = {}): TestApp {
  const fixture = {} as { -readonly [K in keyof TestApp]: TestApp[K] }
  before(async () => { Object.assign(fixture, await buildTestApp(options)) })
  after(async () => { await fixture.app?.close() })
  return fixture
}

/**
 * For a suite (`describe`, or a whole file): app instances A and B with one fresh key ring, each
 * with its own state store connections as two processes have. In `before`: `shared.start()` starts
 * what they share (a Redis, an IdP) and gives their settings (State and whatever names what was
 * started); A, then B, is built with those and `options`, and waits for its state store (at most
 * `storeReadyMs`, 10 s unless given) and then `ready`. In `after`: A and B close, then
 * `shared.stop()`. Inside the tests `a` and `b` are the ready apps: `const { a, b } = twoInstancesForSuite(...)`.
 */
export function twoInstancesForSuite (
  shared: { readonly start: () => Promise<TestSettings>, readonly stop: () => Promise<void> },
  options: Omit<TestAppOptions, 'settings' | 'keyRing'> & { readonly storeReadyMs?: number, readonly ready?: (instance: TestApp) => Promise<void> } = {}
): { readonly a: TestApp, readonly b: TestApp } {
  const { storeReadyMs, ready, ...appOptions } = options
  const keyRing = createKeyRing([randomBytes(32)])
  const a = {} as { -readonly [K in keyof TestApp]: TestApp[K] }
  const b = {} as { -readonly [K in keyof TestApp]: TestApp[K] }
  before(async () => {
    const settings = await shared.start()
    for (const instance of [a, b]) {
      Object.assign(instance, await buildTestApp({ ...appOptions, keyRing, settings }))
      await waitFor(() => instance.app.state.status().available, 'the shared state store', storeReadyMs)
      await ready?.(instance)
    }
  })
  after(async () => {
    await a.app?.close()
    await b.app?.close()
    await shared.stop()
  })
  return { a, b }
}

export const standardUser = (): Claim[] => [
  claim('application:subject', 'user-1'),
  claim('application:name', 'Ada Lovelace'),
  claim('application:email', 'ada@example.test'),
  claim('application:role', 'Reader'),
  claim('application:group', 'engineering'),
  claim('application:permission', 'application.read')
]

/** The standard user, and the same user with the administrator role, the manage permission or the auditors group. */
export const PRINCIPALS = {
  reader: (): Claim[] => standardUser(),
  admin: (): Claim[] => [...standardUser(), claim('application:role', 'Administrator')],
  manager: (): Claim[] => [...standardUser(), claim('application:permission', 'application.manage')],
  auditor: (): Claim[] => [...standardUser(), claim('application:group', 'auditors')]
} as const

/** Signs each named principal of {@link PRINCIPALS} in: their Cookie headers by name. */
export async function signInEach<K extends keyof typeof PRINCIPALS> (app: FastifyInstance, names: readonly K[]): Promise<Record<K, string>> {
  const cookies: Partial<Record<K, string>> = {}
  for (const name of names) cookies[name] = await signIn(app, PRINCIPALS[name]())
  return cookies as Record<K, string>
}

/** An embedded state store with the default bounds, to share between test apps. */
export function testStateStore (): EmbeddedStateStore {
  return createEmbeddedStore(loadTestConfiguration().config.State.Embedded)
}

export const SESSION_COOKIE = '__Host-ProjectTemplate.Web.Authentication'

/** The session value of a Cookie header (or a bare cookie value). */
export function sessionValueOf (cookie: string, name = SESSION_COOKIE): string {
  if (!cookie.includes('=')) return cookie
  const pair = cookie.split('; ').find((part) => part.startsWith(`${name}=`))
  return pair === undefined ? '' : pair.slice(name.length + 1)
}

/** The stored session a cookie refers to, read from the app's state store as another instance would. */
export async function storedSession (app: FastifyInstance, keyRing: KeyRing, cookie: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<AuthenticationTicket | undefined> {
  const sessionId = openSessionReference(sessionValueOf(cookie), keyRing)
  const sealed = sessionId === undefined ? undefined : await app.state.get(`session:${sessionId}`)
  return sealed === undefined ? undefined : openTicket(sealed, keyRing, nowSeconds)
}

/**
 * Opens the starter page with a session cookie: the anti-forgery token it carries and the Cookie
 * header with the anti-forgery cookie added, ready for a POST to /Account/Logout and the like.
 */
export async function antiforgeryFor (app: FastifyInstance, cookie: string): Promise<{ token: string, cookie: string }> {
  const page = await app.inject({ url: '/', headers: { cookie } })
  if (page.statusCode !== 200) throw new Error(`the starter page answered ${page.statusCode}`)
  const token = antiforgeryTokenIn(page.body)
  if (token === undefined) throw new Error('the starter page carries no anti-forgery token')
  const secret = cookieHeaderFrom(page)
  return { token, cookie: secret === '' ? cookie : `${cookie}; ${secret}` }
}
