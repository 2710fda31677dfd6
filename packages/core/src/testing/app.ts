/**
 * Building an app for `inject` in its own tests: real configuration loading (settings become
 * environment variables, the path operators use) over the closed-by-default posture, an in-memory
 * state store, a fresh key ring, pino's lines captured, and a signed-in session for any claims
 * through a test-only route this module registers (never part of the app itself).
 */
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { ApplicationParts, CreateAppOptions } from '../create-app.js'
import { applicationDiscriminatorOf, createKeyRing, loadKeyRing, type KeyRing } from '../data-protection/key-ring.js'
import type { LoadedConfiguration } from '../providers/application-schema.js'
import { loadConfigurationWithoutEnvironmentFiles } from '../configuration.js'
import { rootKeyOf } from '../application-name.js'
import { createLogger } from '../logger.js'
import type { AuthenticationProof } from '../session/authentication-proof.js'
import type { Claim } from '../session/principal.js'
import type { StateStore } from '../state/state-store.js'

/** Collects pino's JSON lines (pass it to `createLogger`, or read `TestApp.logs`). @public @experimental */
export class LogCapture extends Writable {
  readonly lines: string[] = []

  override _write (chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') this.lines.push(line)
    callback()
  }

  /** Every line, as written. */
  text (): string {
    return this.lines.join('\n')
  }

  records (): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  }

  /** The records whose `event` is `event`. */
  events (event: string): Array<Record<string, unknown>> {
    return this.records().filter((record) => record.event === event)
  }
}

/** Settings under the app's root key, as nested objects: `{ Authentication: { Enabled: false } }`. @public @experimental */
export type TestSettings = { [key: string]: string | number | boolean | string[] | TestSettings[] | TestSettings }

/**
 * `{ Authentication: { Enabled: false } }` -> `{ ProjectTemplate__Authentication__Enabled: 'false' }` (arrays by index),
 * under `prefix` (none: the default application's root key, {@link rootKeyOf}).
 *
 * @public @experimental
 */
export function settingsToEnv (settings: TestSettings, prefix?: string): Record<string, string> {
  const env: Record<string, string> = {}
  const root = rootKeyOf(prefix)
  for (const [key, value] of Object.entries(settings)) {
    const name = `${root}__${key}`
    if (Array.isArray(value)) value.forEach((item: string | TestSettings, index) => { if (typeof item === 'object') Object.assign(env, settingsToEnv(item, `${name}__${index}`)); else env[`${name}__${index}`] = item })
    else if (typeof value === 'object') Object.assign(env, settingsToEnv(value, name))
    else env[name] = String(value)
  }
  return env
}

/**
 * The closed-by-default posture, applied under every test's own settings so that a suite means
 * the same thing whichever posture the app's appsettings.json was generated with.
 *
 * @public @experimental
 */
export const CLOSED_POSTURE: TestSettings = {
  Authentication: { Enabled: true, Cookie: { Enabled: true } },
  Authorization: { RequireAuthenticatedUserByDefault: true }
}

/**
 * The state store in memory unless a test asks for the file (`State:Embedded:Persist`): tests
 * share the app's root and must not leave or share a `.state/state.sqlite` in it.
 *
 * @public @experimental
 */
export const EPHEMERAL_STATE: TestSettings = { State: { Embedded: { Persist: false } } }

/** Where the app is and what it is called. @public @experimental */
export interface TestAppLocation {
  /** The app's root: its appsettings*.json, package.json and public/. */
  readonly contentRoot: string
  /** The configuration root key (the app's `application-name.ts`); none: the default application's ({@link rootKeyOf}). */
  readonly applicationName?: string
}

/** Configuration for a test: {@link CLOSED_POSTURE} (unless `closedPosture: false`), {@link EPHEMERAL_STATE}, then `settings`. @public @experimental */
export interface TestConfigurationOptions extends TestAppLocation {
  /** Settings under the root key, applied as environment variables over the closed posture. */
  readonly settings?: TestSettings
  /**
   * NODE_ENV (default unset: Production): the rules of that environment apply, but its
   * `appsettings.<Environment>.json` is not read ({@link loadTestConfiguration}).
   */
  readonly nodeEnv?: string
  /**
   * Applies {@link CLOSED_POSTURE} under `settings`. Default true; false tests the posture the
   * app's appsettings.json ships with.
   */
  readonly closedPosture?: boolean
}

/**
 * Loads the app's configuration as startup does from its `appsettings.json`, with the test's
 * settings as environment variables. Never read: `appsettings.<Environment>.json` (a developer's
 * Development settings, a deployment's Production file), user secrets and `.env`, so that a test
 * sees the same configuration on every machine; a test that needs a setting gives it in `settings`.
 *
 * @public @experimental
 */
export function loadTestConfiguration (options: TestConfigurationOptions): LoadedConfiguration {
  const rootKey = rootKeyOf(options.applicationName)
  const env: NodeJS.ProcessEnv = {
    ...(options.closedPosture === false ? {} : settingsToEnv(CLOSED_POSTURE, rootKey)),
    ...settingsToEnv(EPHEMERAL_STATE, rootKey),
    ...settingsToEnv(options.settings ?? {}, rootKey),
    XDG_CONFIG_HOME: '/nonexistent-test-config'
  }
  if (options.nodeEnv !== undefined) env.NODE_ENV = options.nodeEnv
  return loadConfigurationWithoutEnvironmentFiles({ env, contentRoot: options.contentRoot, applicationName: rootKey })
}

/** A key ring of one fresh random key: sessions sealed by one test app open in no other. @public @experimental */
export function testKeyRing (applicationName?: string): KeyRing {
  return createKeyRing([randomBytes(32)], '', applicationName)
}

/** The app's own composition function (`buildApp` of its src/app.ts): the core and its routes, not listening. @public @experimental */
export type AppBuilder = (options: Omit<CreateAppOptions, keyof ApplicationParts> & Pick<ApplicationParts, 'signInHook' | 'providerSource'>) => Promise<FastifyInstance>

/** @public @experimental */
export interface TestAppOptions extends TestConfigurationOptions {
  /** The app's `buildApp`. */
  readonly buildApp: AppBuilder
  /** Default: `DataProtection:Keys` when configured, else {@link testKeyRing}. */
  readonly keyRing?: KeyRing
  /** Registers the test-only sign-in route that {@link signIn} posts to. Default true. */
  readonly testSignIn?: boolean
  /** Milliseconds since the epoch, for session lifetime tests. */
  readonly now?: () => number
  /** A state store shared with other apps (the caller closes it). */
  readonly stateStore?: StateStore
  /** Called with the app before ready() (register routes, policies, evaluators). */
  readonly configure?: (app: FastifyInstance) => void | Promise<void>
  /** A sign-in hook replacing the app's own (`ApplicationParts.signInHook`). */
  readonly signInHook?: ApplicationParts['signInHook']
  /** The app's provider source (`ApplicationParts.providerSource`; providers added at runtime). */
  readonly providerSource?: ApplicationParts['providerSource']
}

/** @public @experimental */
export interface TestApp {
  /** The ready app, for `app.inject(...)`. */
  readonly app: FastifyInstance
  readonly logs: LogCapture
  readonly loaded: LoadedConfiguration
  readonly keyRing: KeyRing
}

/** The test-only route {@link signIn} posts to (anonymous; registered by {@link buildTestApp} only). @public @experimental */
export const TEST_SIGN_IN_PATH = '/test-only/sign-in'

/** Builds and readies the app; the caller closes it. A configuration error throws, naming every problem. @public @experimental */
export async function buildTestApp (options: TestAppOptions): Promise<TestApp> {
  const loaded = loadTestConfiguration(options)
  if (loaded.errors.length > 0) throw new Error(`test configuration invalid: ${loaded.errors.map((e) => e.message).join(' ')}`)
  const logs = new LogCapture()
  const dataProtection = loaded.config.DataProtection
  // Keys configured as DataProtection:Keys go through the same loader as production.
  const keyRing = options.keyRing ?? (dataProtection.Keys.length > 0
    ? loadKeyRing(dataProtection.Keys, dataProtection.KeyDirectory, options.contentRoot,
      applicationDiscriminatorOf(dataProtection.ApplicationDiscriminator, loaded.environmentName), loaded.applicationName).ring
    : testKeyRing(loaded.applicationName))
  const app = await options.buildApp({
    config: loaded.config,
    environmentName: loaded.environmentName,
    contentRoot: options.contentRoot,
    logger: createLogger('debug', logs),
    keyRing,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.stateStore === undefined ? {} : { stateStore: options.stateStore }),
    ...(options.signInHook === undefined ? {} : { signInHook: options.signInHook }),
    ...(options.providerSource === undefined ? {} : { providerSource: options.providerSource })
  })
  if (options.testSignIn !== false) {
    // `authentication`: what a provider proved (auth_time...), for routes with a step-up policy.
    app.post<{ Body: { claims: Claim[], scheme?: string, indexKeys?: string[], authentication?: AuthenticationProof } }>(TEST_SIGN_IN_PATH, { config: { allowAnonymous: true } }, async (request, reply) => {
      const { scheme, claims, indexKeys, authentication } = request.body
      await reply.signIn({ scheme: scheme ?? 'TestFlow', claims, ...(indexKeys === undefined ? {} : { indexKeys }), ...(authentication === undefined ? {} : { authentication }) })
      return reply.code(204).send()
    })
  }
  await options.configure?.(app)
  await app.ready()
  return { app, logs, loaded, keyRing }
}

/**
 * Builds the app for one test and closes it when that test ends (`t.after`), as fastify/demo's
 * `build(t)` does: `const { app } = await build(t, { buildApp, contentRoot, settings })`.
 *
 * @public @experimental
 */
export async function build (context: { after: (fn: () => Promise<void>) => void }, options: TestAppOptions): Promise<TestApp> {
  const built = await buildTestApp(options)
  context.after(async () => { await built.app.close() })
  return built
}

/** Cookies from Set-Cookie headers whose value is non-empty, as a Cookie header value. @public @experimental */
export function cookieHeaderFrom (response: LightMyRequestResponse): string {
  return response.cookies.filter((cookie) => cookie.value !== '').map((cookie) => `${cookie.name}=${cookie.value}`).join('; ')
}

/** One claim (issuer `TestFlow` unless given). @public @experimental */
export const claim = (type: string, value: string, issuer = 'TestFlow'): Claim => ({ type, value, issuer })

/**
 * Signs a principal with these claims in (through the test-only route of {@link buildTestApp})
 * and returns its Cookie header: `await app.inject({ url, headers: { cookie } })`.
 *
 * @public @experimental
 */
export async function signIn (app: FastifyInstance, claims: Claim[]): Promise<string> {
  const response = await app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims } })
  if (response.statusCode !== 204) throw new Error(`test sign-in failed with ${response.statusCode}`)
  return cookieHeaderFrom(response)
}
