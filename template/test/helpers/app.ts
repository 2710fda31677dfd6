/**
 * Test helpers for the app's own tests: build this app (core + routes, src/app.ts) from real
 * configuration loading (settings become environment variables, the path operators use), capture
 * its log lines, and sign a user in through a test-only flow the test registers (never shipped).
 */
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { dirname, resolve } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { createKeyRing, createLogger, loadConfiguration, type Claim, type LoadedConfiguration } from '@project-template/core'
import { buildApp } from '../../src/app.js'
import { APPLICATION_NAME } from '../../src/application-name.js'

/** The app's root: its appsettings*.json, package.json and public/. */
export const APP_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Collects pino's JSON lines. */
export class LogCapture extends Writable {
  readonly lines: string[] = []

  override _write (chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') this.lines.push(line)
    callback()
  }

  records (): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  }

  events (event: string): Array<Record<string, unknown>> {
    return this.records().filter((record) => record.event === event)
  }
}

export type Settings = { [key: string]: string | number | boolean | string[] | Settings }

/** `{ Authentication: { Enabled: false } }` -> `ProjectTemplate__Authentication__Enabled=false`. */
export function settingsToEnv (settings: Settings, prefix = APPLICATION_NAME): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(settings)) {
    const name = `${prefix}__${key}`
    if (Array.isArray(value)) value.forEach((item, index) => { env[`${name}__${index}`] = item })
    else if (typeof value === 'object') Object.assign(env, settingsToEnv(value, name))
    else env[name] = String(value)
  }
  return env
}

/**
 * The closed-by-default posture, applied under every test's own settings so the suite means the
 * same whichever posture appsettings.json was generated with (posture.test.ts reads the file).
 */
export const CLOSED_POSTURE: Settings = {
  Authentication: { Enabled: true, Cookie: { Enabled: true } },
  Authorization: { RequireAuthenticatedUserByDefault: true }
}

export interface TestAppOptions {
  /** Settings under `ProjectTemplate`, applied as environment variables over the closed posture. */
  readonly settings?: Settings
  /** NODE_ENV (default unset: Production). */
  readonly nodeEnv?: string
  /** Registers the test-only sign-in route. Default true. */
  readonly testSignIn?: boolean
}

export interface TestApp {
  readonly app: FastifyInstance
  readonly logs: LogCapture
  readonly loaded: LoadedConfiguration
}

export const TEST_SIGN_IN_PATH = '/test-only/sign-in'

/**
 * The state store in memory unless a test asks for the file (`State:Embedded:Persist`): the
 * tests share this app's root and must not leave or share a `.state/state.sqlite` in it.
 */
export const EPHEMERAL_STATE: Settings = { State: { Embedded: { Persist: false } } }

export function loadTestConfiguration (options: Pick<TestAppOptions, 'settings' | 'nodeEnv'> = {}): LoadedConfiguration {
  const env: NodeJS.ProcessEnv = { ...settingsToEnv(CLOSED_POSTURE), ...settingsToEnv(EPHEMERAL_STATE), ...settingsToEnv(options.settings ?? {}), XDG_CONFIG_HOME: '/nonexistent-test-config' }
  if (options.nodeEnv !== undefined) env.NODE_ENV = options.nodeEnv
  return loadConfiguration({ env, contentRoot: APP_ROOT, applicationName: APPLICATION_NAME })
}

/** Builds this app with test settings (not listening) and closes it when the test ends. */
export async function build (context: Pick<TestContext, 'after'>, options: TestAppOptions = {}): Promise<TestApp> {
  const loaded = loadTestConfiguration(options)
  if (loaded.errors.length > 0) throw new Error(`test configuration invalid: ${loaded.errors.map((e) => e.message).join(' ')}`)
  const logs = new LogCapture()
  const app = await buildApp({
    config: loaded.config,
    environmentName: loaded.environmentName,
    contentRoot: APP_ROOT,
    logger: createLogger('debug', logs),
    keyRing: createKeyRing([randomBytes(32)], '', APPLICATION_NAME)
  })
  context.after(async () => { await app.close() })
  if (options.testSignIn !== false) {
    app.post<{ Body: { claims: Claim[] } }>(TEST_SIGN_IN_PATH, { config: { allowAnonymous: true } }, async (request, reply) => {
      await reply.signIn({ scheme: 'TestFlow', claims: request.body.claims })
      return reply.code(204).send()
    })
  }
  await app.ready()
  return { app, logs, loaded }
}

/** Cookies from Set-Cookie headers whose value is non-empty, as a Cookie header value. */
export function cookieHeaderFrom (response: LightMyRequestResponse): string {
  return response.cookies.filter((cookie) => cookie.value !== '').map((cookie) => `${cookie.name}=${cookie.value}`).join('; ')
}

export const claim = (type: string, value: string, issuer = 'TestFlow'): Claim => ({ type, value, issuer })

/** Signs a principal in through the test-only flow; returns its Cookie header. */
export async function signIn (app: FastifyInstance, claims: Claim[]): Promise<string> {
  const response = await app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims } })
  if (response.statusCode !== 204) throw new Error(`test sign-in failed with ${response.statusCode}`)
  return cookieHeaderFrom(response)
}

const reader = (): Claim[] => [
  claim('application:subject', 'user-1'),
  claim('application:name', 'Ada Lovelace'),
  claim('application:email', 'ada@example.test'),
  claim('application:role', 'Reader'),
  claim('application:permission', 'application.read')
]

/** A reader, and the same user with the administrator role or the manage-application permission. */
export const PRINCIPALS = {
  reader,
  admin: (): Claim[] => [...reader(), claim('application:role', 'Administrator')],
  manager: (): Claim[] => [...reader(), claim('application:permission', 'application.manage')]
} as const
