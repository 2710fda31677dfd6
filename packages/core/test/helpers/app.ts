/**
 * Test helpers: build the real app from real configuration loading (settings become environment
 * variables, the same path operators use), capture its log lines, and sign a user in through a
 * test-only identity flow registered by the test itself (never shipped in the app).
 */
import { randomBytes } from 'node:crypto'
import { after, before, type TestContext } from 'node:test'
import { Writable } from 'node:stream'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../fixtures/app/src/app.js'
import { applicationDiscriminatorOf, createKeyRing, loadKeyRing, type KeyRing } from '../../src/data-protection/key-ring.js'
import type { Claim } from '../../src/session/principal.js'
import type { SignInHook } from '../../src/sign-in/sign-in-hook.js'
import { loadConfiguration, type LoadedConfiguration } from '../../src/config/load.js'
import { ROOT_KEY } from '../../src/config/schema.js'
import { createLogger } from '../../src/logger.js'
import { openSessionReference, openTicket } from '../../src/session/ticket.js'
import type { AuthenticationTicket } from '../../src/session/principal.js'
import type { StateStore } from '../../src/state/state-store.js'
import type { EmbeddedStateStore } from '../../src/state/embedded-store.js'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import { antiforgeryTokenIn } from './cookies.js'

/** The core package's root (its docs/, test/output/). */
export const CORE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The test app's root (test/fixtures/app): the content root of every app the tests build, and the cwd of the process tests. */
export const APP_ROOT = resolve(CORE_ROOT, 'test', 'fixtures', 'app')

/** Collects pino's JSON lines. */
export class LogCapture extends Writable {
  readonly lines: string[] = []

  override _write (chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') this.lines.push(line)
    callback()
  }

  text (): string {
    return this.lines.join('\n')
  }

  records (): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  }

  events (event: string): Array<Record<string, unknown>> {
    return this.records().filter((record) => record.event === event)
  }
}

type Settings = { [key: string]: string | number | boolean | string[] | Settings[] | Settings }

/** `{ Authentication: { Enabled: false } }` -> `ProjectTemplate__Authentication__Enabled=false`. */
export function settingsToEnv (settings: Settings, prefix = ROOT_KEY): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(settings)) {
    const name = `${prefix}__${key}`
    if (Array.isArray(value)) value.forEach((item: string | Settings, index) => { if (typeof item === 'object') Object.assign(env, settingsToEnv(item, `${name}__${index}`)); else env[`${name}__${index}`] = item })
    else if (typeof value === 'object') Object.assign(env, settingsToEnv(value, name))
    else env[name] = String(value)
  }
  return env
}

export interface TestAppOptions {
  /** Settings under `ProjectTemplate`, applied as environment variables. */
  readonly settings?: Settings
  /** NODE_ENV value (default: unset -> Production). */
  readonly nodeEnv?: string
  readonly keyRing?: KeyRing
  /** Registers the test-only sign-in route before ready(). Default true. */
  readonly testSignIn?: boolean
  /** Milliseconds since the epoch, for session lifetime tests. */
  readonly now?: () => number
  /** A state store shared with other apps (the caller closes it). */
  readonly stateStore?: StateStore
  /** Called with the app before ready() (register routes, policies, evaluators). */
  readonly configure?: (app: FastifyInstance) => void | Promise<void>
  /** The application's sign-in hook (createApp `signInHook`). */
  readonly signInHook?: SignInHook
}

export interface TestApp {
  readonly app: FastifyInstance
  readonly logs: LogCapture
  readonly loaded: LoadedConfiguration
  readonly keyRing: KeyRing
}

export const TEST_SIGN_IN_PATH = '/test-only/sign-in'

export function testKeyRing (): KeyRing {
  return createKeyRing([randomBytes(32)])
}

/**
 * The closed-by-default posture, applied under every test's own settings so that the suite means
 * the same thing whichever posture appsettings.json was generated with (test/posture.test.ts
 * checks the shipped file itself).
 */
export const CLOSED_POSTURE: Settings = {
  Authentication: { Enabled: true, Cookie: { Enabled: true } },
  Authorization: { RequireAuthenticatedUserByDefault: true }
}

/**
 * The state store in memory unless a test asks for the file (`State:Embedded:Persist`): test apps
 * and processes share test/fixtures/app as their root, and must not share one state file.
 */
export const EPHEMERAL_STATE: Settings = { State: { Embedded: { Persist: false } } }

export function loadTestConfiguration (options: Pick<TestAppOptions, 'settings' | 'nodeEnv'> = {}): LoadedConfiguration {
  const env: NodeJS.ProcessEnv = {
    ...settingsToEnv(CLOSED_POSTURE),
    ...settingsToEnv(EPHEMERAL_STATE),
    ...settingsToEnv(options.settings ?? {}),
    XDG_CONFIG_HOME: '/nonexistent-test-config'
  }
  if (options.nodeEnv !== undefined) env.NODE_ENV = options.nodeEnv
  return loadConfiguration({ env, contentRoot: APP_ROOT })
}

export async function buildTestApp (options: TestAppOptions = {}): Promise<TestApp> {
  const loaded = loadTestConfiguration(options)
  if (loaded.errors.length > 0) throw new Error(`test configuration invalid: ${loaded.errors.map((e) => e.message).join(' ')}`)
  const logs = new LogCapture()
  // Keys configured as DataProtection:Keys go through the same loader as production.
  const keyRing = options.keyRing ?? (loaded.config.DataProtection.Keys.length > 0
    ? loadKeyRing(loaded.config.DataProtection.Keys, loaded.config.DataProtection.KeyDirectory, APP_ROOT,
      applicationDiscriminatorOf(loaded.config.DataProtection.ApplicationDiscriminator, loaded.environmentName)).ring
    : testKeyRing())
  const app = await buildApp({
    config: loaded.config,
    environmentName: loaded.environmentName,
    contentRoot: APP_ROOT,
    logger: createLogger('debug', logs),
    keyRing,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.stateStore === undefined ? {} : { stateStore: options.stateStore }),
    ...(options.signInHook === undefined ? {} : { signInHook: options.signInHook })
  })
  if (options.testSignIn !== false) {
    app.post<{ Body: { claims: Claim[], scheme?: string, indexKeys?: string[] } }>(TEST_SIGN_IN_PATH, { config: { allowAnonymous: true } }, async (request, reply) => {
      const { scheme, claims, indexKeys } = request.body
      await reply.signIn({ scheme: scheme ?? 'TestFlow', claims, ...(indexKeys === undefined ? {} : { indexKeys }) })
      return reply.code(204).send()
    })
  }
  await options.configure?.(app)
  await app.ready()
  return { app, logs, loaded, keyRing }
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

/** Cookies from Set-Cookie headers whose value is non-empty, as a Cookie header value. */
export function cookieHeaderFrom (response: LightMyRequestResponse): string {
  return response.cookies.filter((cookie) => cookie.value !== '').map((cookie) => `${cookie.name}=${cookie.value}`).join('; ')
}

export const claim = (type: string, value: string, issuer = 'TestFlow'): Claim => ({ type, value, issuer })

/** Signs a principal in through the test-only flow and returns its Cookie header. */
export async function signIn (app: FastifyInstance, claims: Claim[]): Promise<string> {
  const response = await app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims } })
  if (response.statusCode !== 204) throw new Error(`test sign-in failed with ${response.statusCode}`)
  return cookieHeaderFrom(response)
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
