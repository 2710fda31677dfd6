/**
 * `applicationName` (src/application-name.ts): an app named `Contoso` has its configuration under
 * `Contoso:` (environment `Contoso__`), its cookies named `__Host-Contoso.*`, its purposes and its
 * page titles after the name, and its messages naming `Contoso:` keys; the default stays
 * `ProjectTemplate`, and error codes carry no name.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  applicationNaming, authenticationDisabledMessage, AUTHENTICATION_DISABLED_MESSAGE, createApp, createKeyRing,
  createLogger, loadConfiguration, renderJsonSchema, type Claim
} from '../src/index.js'
import { COOKIE_NAMES, PURPOSES } from '../src/application-name.js'
import { sealSessionReference, openSessionReference } from '../src/session/ticket.js'
import { LogCapture } from './helpers/app.js'

const root = mkdtempSync(join(tmpdir(), 'core-name-'))
mkdirSync(join(root, 'public'))
writeFileSync(join(root, 'appsettings.json'), JSON.stringify({ Contoso: { Logging: { Level: 'info' } } }))
after(() => { rmSync(root, { recursive: true, force: true }) })

const closed = { Contoso__Authentication__Enabled: 'true', XDG_CONFIG_HOME: '/nonexistent-test-config' }

describe('the names of an application', () => {
  test('the default application is ProjectTemplate, exactly as before', () => {
    const naming = applicationNaming()
    assert.equal(naming.rootKey, 'ProjectTemplate')
    assert.equal(naming.kebabName, 'project-template')
    assert.deepEqual(naming.cookieNames, COOKIE_NAMES)
    assert.deepEqual(naming.purposes, PURPOSES)
    assert.equal(AUTHENTICATION_DISABLED_MESSAGE, authenticationDisabledMessage('ProjectTemplate'))
  })

  test('Contoso: cookie names, purposes and the user-secrets directory follow the name', () => {
    const naming = applicationNaming('Contoso')
    assert.deepEqual({ ...naming.cookieNames }, { session: 'Contoso.Web.Authentication', antiforgery: 'Contoso.Antiforgery', correlation: 'Contoso.Correlation.' })
    assert.equal(naming.kebabName, 'contoso')
    assert.equal(applicationNaming('OrdersApi').kebabName, 'orders-api')
    for (const [use, purpose] of Object.entries(naming.purposes)) assert.equal(purpose, PURPOSES[use as keyof typeof PURPOSES].replace(/^ProjectTemplate\./, 'Contoso.'))
  })

  test('a name that cannot be a configuration key or a cookie name is refused', () => {
    for (const name of ['', 'contoso', 'Con-toso', 'Con toso', 'Contoso.Web', 'Ünïcode', `A${'b'.repeat(50)}`]) {
      assert.throws(() => applicationNaming(name), { name: 'TypeError', message: /^applicationName must be PascalCase/ }, name)
    }
  })

  test('a ring of one application does not open what another sealed with the same key', () => {
    const material = randomBytes(32)
    const contoso = createKeyRing([material], '', 'Contoso')
    const fabrikam = createKeyRing([material], '', 'Fabrikam')
    const sessionId = randomUUID()
    const sealed = sealSessionReference(sessionId, contoso)
    assert.equal(openSessionReference(sealed, contoso), sessionId)
    assert.equal(openSessionReference(sealed, fabrikam), undefined)
    assert.equal(openSessionReference(sealed, createKeyRing([material])), undefined)
  })
})

describe('configuration under the application name', () => {
  test('Contoso__ variables bind, ProjectTemplate__ variables do not', () => {
    const loaded = loadConfiguration({
      env: { ...closed, Contoso__Logging__Level: 'debug', ProjectTemplate__Logging__Level: 'error' },
      contentRoot: root,
      applicationName: 'Contoso'
    })
    assert.deepEqual(loaded.errors, [])
    assert.equal(loaded.applicationName, 'Contoso')
    assert.equal(loaded.config.Logging.Level, 'debug')
    assert.equal(loaded.config.State.Redis.KeyPrefix, 'Contoso:')
    assert.equal(loadConfiguration({ env: closed, contentRoot: root }).config.State.Redis.KeyPrefix, 'ProjectTemplate:')
  })

  test('validation names Contoso: keys and keeps its error codes', () => {
    const loaded = loadConfiguration({ env: { ...closed, Contoso__Authentication__Enabled: 'false' }, contentRoot: root, applicationName: 'Contoso' })
    assert.deepEqual(loaded.errors.map((problem) => problem.key), ['Contoso:Authentication:Enabled'])
    assert.match(loaded.errors[0]?.message ?? '', /^Contoso:Authentication:Enabled is false while Contoso:Authorization:RequireAuthenticatedUserByDefault is true;/)
    assert.doesNotMatch(JSON.stringify(loaded.errors), /ProjectTemplate/)
  })

  test('appsettings.schema.json of Contoso has the Contoso root and title', () => {
    const schema = JSON.parse(renderJsonSchema('Contoso'))
    assert.equal(schema.title, 'Contoso application settings')
    assert.deepEqual(Object.keys(schema.properties), ['$schema', 'Contoso'])
    assert.equal(schema.properties.Contoso.properties.State.properties.Redis.properties.KeyPrefix.default, 'Contoso:')
    assert.equal(JSON.parse(renderJsonSchema()).properties.ProjectTemplate.properties.State.properties.Redis.properties.KeyPrefix.default, 'ProjectTemplate:')
  })
})

describe('createApp({ applicationName })', () => {
  async function contoso (settings: Record<string, string> = {}): Promise<{ app: Awaited<ReturnType<typeof createApp>>, logs: LogCapture }> {
    const loaded = loadConfiguration({ env: { ...closed, ...settings }, contentRoot: root, applicationName: 'Contoso' })
    assert.deepEqual(loaded.errors, [])
    const logs = new LogCapture()
    const app = await createApp({
      config: loaded.config,
      environmentName: loaded.environmentName,
      contentRoot: root,
      logger: createLogger('info', logs),
      keyRing: createKeyRing([randomBytes(32)], '', 'Contoso'),
      applicationName: 'Contoso',
      routes: async (instance) => {
        instance.post<{ Body: { claims: Claim[] } }>('/sign-in', { config: { allowAnonymous: true } }, async (request, reply) => {
          await reply.signIn({ scheme: 'TestFlow', claims: request.body.claims })
          return await reply.code(204).send()
        })
      }
    })
    await app.ready()
    return { app, logs }
  }

  test('the session cookie is __Host-Contoso.Web.Authentication, the pages say Contoso', async (t) => {
    const { app } = await contoso()
    t.after(async () => { await app.close() })
    const signIn = await app.inject({ method: 'POST', url: '/sign-in', payload: { claims: [{ type: 'application:subject', value: 'u1', issuer: 'TestFlow' }] } })
    assert.equal(signIn.statusCode, 204)
    assert.deepEqual(signIn.cookies.map((cookie) => cookie.name), ['__Host-Contoso.Web.Authentication'])
    const login = await app.inject({ method: 'GET', url: '/Account/Login' })
    assert.match(login.body, /<title>Sign in - Contoso<\/title>/)
  })

  test('an ApiKey scheme without a Prefix issues contoso_ keys, under Contoso\'s root', async (t) => {
    const { app } = await contoso({ Contoso__Authentication__Schemes__Keys__Type: 'ApiKey', 'Contoso__Authentication__Schemes__Keys__Scopes__orders.read': 'Read orders' })
    t.after(async () => { await app.close() })
    assert.equal(app.apiKeys?.scheme('Keys').settings.Prefix, 'contoso_')
  })

  test('authentication off: the one-time warning names Contoso:Authentication:Enabled', async (t) => {
    const { app, logs } = await contoso({ Contoso__Authentication__Enabled: 'false', Contoso__Authorization__RequireAuthenticatedUserByDefault: 'false' })
    t.after(async () => { await app.close() })
    const warnings = logs.events('authentication.disabled')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.key, 'Contoso:Authentication:Enabled')
    assert.equal(warnings[0]?.msg, authenticationDisabledMessage('Contoso'))
    assert.match(authenticationDisabledMessage('Contoso'), /^Application authentication is disabled \(Contoso:Authentication:Enabled is false\)\./)
  })
})
