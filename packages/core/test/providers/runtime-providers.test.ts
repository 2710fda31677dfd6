/**
 * Providers added at runtime (issue 28), with real components: two app instances sharing one real
 * redis-server, each reading the same provider source (an array standing in for the app's
 * database). A runtime OpenID Provider (oidc-provider) and a runtime SAML IdP (the
 * TestIdentityProvider) are added while the apps serve; the reload on A reaches B within 2 s and
 * users sign in on B. An invalid definition is refused with its problems (the planted secret never
 * in the result or the logs), a configured scheme wins, a verified domain claimed twice goes to
 * one owner by a rule independent of row order (the other row keeps its provider), and a removal ends new challenges, closes the callback and (asked) the sessions.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'
import { storedSession } from '../helpers/app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'
import { readAuthnRequest, TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { withSingleLogoutService } from '../helpers/saml2/samlify.js'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'
import { tenantPolicy } from '../../src/authorization/tenants.js'
import type { FastifyInstance } from 'fastify'

const SECRET = 'runtime-oidc-secret-PLANTED-4411'
const SP = 'http://127.0.0.1/sp-runtime'
const server = new RedisServer()
const keyRing = createKeyRing([randomBytes(32)])
/** The app's "database" of customer providers, shared by both instances. */
let definitions: RuntimeProviderDefinition[] = []
/** Makes the source throw, as a database that is down would. */
let sourceDown = false

describe('providers from the provider source, two instances sharing Redis', () => {
  let idp: OidcIdp
  const saml = new TestIdentityProvider('http://localhost/idp-runtime')
  const spKey = createSigningKey('runtime-sp-signing')
  let a: ListeningApp
  let b: ListeningApp

  before(async () => {
    await server.start()
    idp = await startOidcIdp({ clientId: 'contoso-app', clientSecret: SECRET, accounts: { ada: { name: 'Ada at Contoso' } } })
    await saml.start()
    saml.users.set('bob', { nameId: 'bob', attributes: {} })
    saml.documents.set('/metadata-slo', () => withSingleLogoutService(saml.metadata(), `${saml.origin}/slo`))
    saml.nextUser = 'bob'
    const settings = {
      State: { Provider: 'Redis', Redis: { ConnectionString: server.connectionString, TimeoutMilliseconds: 500 } },
      Authentication: { Schemes: { Configured: { Type: 'Saml2', EntityId: 'http://127.0.0.1/sp-configured', MetadataUrl: saml.metadataUrl } } }
    }
    const source = async (): Promise<RuntimeProviderDefinition[]> => {
      if (sourceDown) throw new Error(`database down ${SECRET}`)
      return definitions
    }
    // Customer Contoso's data: a route behind a policy requiring Contoso's tenant.
    const configure = (app: FastifyInstance): void => {
      app.authorization.addPolicy(tenantPolicy('contoso.Orders', 'tenant-contoso'))
      app.get('/tenants/contoso/orders', { config: { authorize: 'contoso.Orders' } }, async () => ({ orders: [] }))
    }
    a = await startProviderApp(settings, configure, { providerSource: source, keyRing })
    b = await startProviderApp(settings, configure, { providerSource: source, keyRing })
    for (const app of [a, b]) await waitFor(() => app.app.state.status().available, 'the Redis state store', 10_000, 20)
    await idp.configure(`${b.origin}/signin-contoso`)
  })
  after(async () => {
    await a?.close()
    await b?.close()
    await idp?.close()
    await saml.stop()
    await server.dispose()
  })

  const contoso = (): RuntimeProviderDefinition => ({
    scheme: 'Contoso',
    settings: { Type: 'OpenIdConnect', DisplayName: 'Contoso SSO', Authority: idp.issuer, ClientId: 'contoso-app', ClientSecret: SECRET, Scopes: ['openid', 'profile'], BackChannelLogout: true },
    domains: [{ name: 'contoso.example', verified: true }],
    tenant: 'tenant-contoso'
  })
  const fabrikam = (): RuntimeProviderDefinition => ({
    scheme: 'Fabrikam',
    settings: { Type: 'Saml2', EntityId: SP, MetadataUrl: `${saml.origin}/metadata-slo`, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true },
    domains: [{ name: 'fabrikam.example', verified: false }],
    tenant: 'tenant-fabrikam'
  })

  async function challengeStatus (app: ListeningApp, query: string): Promise<number> {
    const response = await fetch(`${app.origin}/External/Challenge?${query}`, { redirect: 'manual' })
    await response.arrayBuffer()
    return response.status
  }

  test('before the source names it, the scheme is unknown: its callback fails as a lost correlation, its metadata is the 404 problem', async () => {
    assert.equal(await challengeStatus(a, 'provider=Contoso'), 400)
    const callback = await fetch(`${b.origin}/signin-contoso?code=x&state=y`, { redirect: 'manual' })
    assert.equal(callback.status, 302)
    assert.equal(callback.headers.get('location'), '/Account/Login?failure=correlation')
    const metadata = await fetch(`${b.origin}/Saml2/Contoso/Metadata`, { headers: { accept: 'application/json' } })
    assert.equal(metadata.status, 404)
    assert.equal(((await metadata.json()) as { code?: string }).code, 'APP_ERR_NOT_FOUND')
  })

  test('the parametric routes have the body limits of the configured endpoints: 16 KB for a form_post callback, 256 KB for the ACS', async () => {
    const post = async (path: string, bytes: number): Promise<number> => {
      const response = await fetch(`${a.origin}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `state=${'x'.repeat(bytes - 6)}` })
      await response.arrayBuffer()
      return response.status
    }
    assert.equal(await post('/signin-contoso', 16 * 1024 + 1), 413)
    assert.equal(await post('/signin-contoso', 16 * 1024), 302)
    assert.equal(await post('/Saml2/Contoso/Acs', 16 * 1024 + 1), 302)
    assert.equal(await post('/Saml2/Contoso/Acs', 256 * 1024 + 1), 413)
  })

  test('an OpenID Connect and a SAML2 provider added on A sign users in on B within 2 s, with their tenant', async () => {
    definitions = [contoso(), fabrikam()]
    const result = await a.app.authentication.reloadProviders()
    assert.deepEqual(result, { added: ['Contoso', 'Fabrikam'], removed: [], refused: [], refusedDomains: [] })
    assert.equal(await challengeStatus(a, 'provider=Contoso'), 302)
    const started = Date.now()
    await waitFor(() => b.app.authentication.providers.has('Contoso') && b.app.authentication.providers.has('Fabrikam'), 'B to reload', 2_000, 10)
    assert.ok(Date.now() - started < 2_000)

    const oidcUser = new HttpSession()
    const start = await oidcUser.request(`${b.origin}/External/Challenge?provider=Contoso`)
    assert.equal(start.response.status, 302)
    const callback = await oidcUser.request(await throughIdpLogin(oidcUser, start.location!, b.origin, 'ada'))
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const ticket = await storedSession(b.app, keyRing, oidcUser.jar.header(new URL(b.origin)))
    assert.equal(ticket?.scheme, 'Contoso')
    assert.deepEqual(ticket?.claims.filter((claim) => claim.type === 'application:tenant').map((claim) => claim.value), ['tenant-contoso'])

    const samlUser = new HttpSession()
    const samlStart = await samlUser.request(`${b.origin}/External/Challenge?provider=Fabrikam`)
    assert.equal(samlStart.response.status, 302)
    const seen = readAuthnRequest(samlStart.location!.href)
    assert.equal(seen.acsUrl, `${b.origin}/Saml2/Fabrikam/Acs`)
    const SAMLResponse = saml.buildResponse({ acsUrl: seen.acsUrl, audience: SP, user: { nameId: 'bob', attributes: { 'application:tenant': ['tenant-contoso'] } }, inResponseTo: seen.id })
    const acs = await samlUser.request(seen.acsUrl, { method: 'POST', form: { SAMLResponse, RelayState: seen.relayState ?? '' } })
    assert.equal(sessionCookiesSet(acs.response).length, 1)
    const samlTicket = await storedSession(b.app, keyRing, samlUser.jar.header(new URL(b.origin)))
    assert.equal(samlTicket?.scheme, 'Fabrikam')
    // The IdP's own tenant claim is dropped: only the source speaks for the tenant.
    assert.deepEqual(samlTicket?.claims.filter((claim) => claim.type === 'application:tenant').map((claim) => claim.value), ['tenant-fabrikam'])

    // A user of Fabrikam's IdP never passes Contoso's tenant policy; Contoso's user does.
    const orders = async (user: HttpSession): Promise<number> => (await user.request(`${b.origin}/tenants/contoso/orders`, { accept: 'application/json' })).response.status
    assert.equal(await orders(oidcUser), 200)
    assert.equal(await orders(samlUser), 403)

    const metadata = await fetch(`${b.origin}/Saml2/Fabrikam/Metadata`)
    assert.equal(metadata.status, 200)
    const document = await metadata.text()
    assert.match(document, new RegExp(`entityID="${SP}"`))
    assert.match(document, new RegExp(`SingleLogoutService[^>]+Location="${b.origin}/Saml2/Fabrikam/Logout"`))

    // SAML Single Logout: the IdP's LogoutRequest on A ends the Fabrikam session signed in on B.
    const samlApi = async (): Promise<number> => (await samlUser.request(`${b.origin}/api/application-information`, { accept: 'application/json' })).response.status
    assert.equal(await samlApi(), 200)
    const built = saml.buildLogoutRequest({ destination: `${a.origin}/Saml2/Fabrikam/Logout`, nameId: 'bob' })
    const logout = await fetch(`${a.origin}${built.redirectPath}`, { redirect: 'manual' })
    assert.equal(logout.status, 302)
    assert.ok(logout.headers.get('location')?.startsWith(`${saml.origin}/slo?`), 'the LogoutResponse goes back to the IdP')
    await waitFor(async () => await samlApi() === 401, 'the SAML session to end on B', 2_000, 20)
  })

  /** Ada signed in through Contoso on B; `api()` is her status on B's protected API (200 while signed in). */
  async function signedInAtContoso (): Promise<{ api: () => Promise<number> }> {
    const user = new HttpSession()
    const start = await user.request(`${b.origin}/External/Challenge?provider=Contoso`)
    const done = await user.request(await throughIdpLogin(user, start.location!, b.origin, 'ada'))
    assert.equal(sessionCookiesSet(done.response).length, 1)
    const api = async (): Promise<number> => (await user.request(`${b.origin}/api/application-information`, { accept: 'application/json' })).response.status
    assert.equal(await api(), 200)
    return { api }
  }

  test('back-channel logout at the runtime provider\'s endpoint on A ends its session on B', async () => {
    const { api } = await signedInAtContoso()
    const token = await idp.sign({ iss: idp.issuer, aud: 'contoso-app', iat: Math.floor(Date.now() / 1000), jti: `jti-${Date.now()}`, events: { 'http://schemas.openid.net/event/backchannel-logout': {} }, sub: 'ada' }, { typ: 'logout+jwt' })
    const post = async (path: string): Promise<number> => (await fetch(`${a.origin}${path}`, { method: 'POST', body: new URLSearchParams({ logout_token: token }), signal: AbortSignal.timeout(10_000) })).status
    assert.equal(await post('/backchannel-logout-nobody'), 400)
    assert.equal(await post('/backchannel-logout-contoso'), 200)
    await waitFor(async () => await api() === 401, 'the session to end on B', 2_000, 20)
  })

  test('discovery by e-mail uses verified domains only; an unverified one still works through provider=', async () => {
    // The login page offers the e-mail field but never lists the customers' providers.
    const login = await (await fetch(`${b.origin}/Account/Login`)).text()
    assert.match(login, /data-provider="Configured"/)
    assert.doesNotMatch(login, /Contoso|Fabrikam/)
    assert.match(login, /type="email"/)
    assert.equal(await challengeStatus(b, 'email=ada%40contoso.example'), 302)
    assert.notEqual(await challengeStatus(b, 'email=bob%40fabrikam.example'), 302)
    assert.equal(await challengeStatus(b, 'provider=Fabrikam'), 302)
  })

  test('an invalid definition, a configured name and a domain claimed twice are refused; the others keep working', async () => {
    const before = a.logs.lines.length
    definitions = [
      contoso(),
      fabrikam(),
      { scheme: 'Broken', settings: { Type: 'OpenIdConnect', Authority: 'http://idp.invalid', ClientSecret: SECRET } },
      { scheme: 'Configured', settings: { Type: 'OpenIdConnect', Authority: idp.issuer, ClientId: 'c', ClientSecret: SECRET } },
      { scheme: 'Thief', settings: { Type: 'OpenIdConnect', Authority: idp.issuer, ClientId: 'c', ClientSecret: SECRET }, domains: [{ name: 'contoso.example', verified: true }] },
      // Its paths would be /Saml2/configured/...: the configured scheme's, in another case.
      { scheme: 'configured', settings: { Type: 'Saml2', EntityId: SP, MetadataUrl: saml.metadataUrl } }
    ]
    const result = await a.app.authentication.reloadProviders()
    // The second claim on a verified domain loses that domain only (issue 33, item 3): Thief is in
    // use without it, and Contoso (undated, the earlier scheme name) keeps it.
    assert.deepEqual(result.added, ['Thief'])
    assert.deepEqual(result.removed, [])
    assert.deepEqual(result.refused.map((refusal) => refusal.scheme), ['Broken', 'Configured', 'configured'])
    assert.deepEqual(result.refused[2]!.problems.map((problem) => problem.key), ['ProjectTemplate:Authentication:Schemes:configured'])
    assert.deepEqual(result.refusedDomains.map(({ scheme, domain, key }) => [scheme, domain, key]), [['Thief', 'contoso.example', 'ProjectTemplate:Authentication:Schemes:Thief:Domains']])
    const keysOf = (scheme: string): string[] => result.refused.find((refusal) => refusal.scheme === scheme)!.problems.map((problem) => problem.key)
    assert.ok(keysOf('Broken').includes('ProjectTemplate:Authentication:Schemes:Broken:ClientId'), keysOf('Broken').join())
    assert.ok(keysOf('Broken').includes('ProjectTemplate:Authentication:Schemes:Broken:Authority'), keysOf('Broken').join())
    assert.deepEqual(keysOf('Configured'), ['ProjectTemplate:Authentication:Schemes:Configured'])
    // The admin form's check before saving gives the same problems.
    const checked = a.app.authentication.validateProvider(definitions[2]!)
    assert.equal(checked.ok, false)
    if (!checked.ok) assert.deepEqual(checked.problems, result.refused[0]!.problems)
    assert.equal(a.app.authentication.providers.get('Configured')?.runtime, undefined)
    assert.deepEqual(a.app.authentication.providers.get('Thief')?.domains, [])
    assert.ok(!a.app.authentication.providers.has('Broken'))
    assert.equal(await challengeStatus(a, 'email=ada%40contoso.example'), 302)
    assert.ok(!JSON.stringify(result).includes(SECRET))
    const logged = a.logs.lines.slice(before).join('\n')
    assert.match(logged, /external\.runtime_provider\.refused/)
    assert.match(logged, /external\.runtime_provider\.domain_refused/)
    assert.ok(!logged.includes(SECRET))
  })

  test('a replaced definition with revokeSessions: a new display name keeps the sessions, a new tenant ends them on every instance', async () => {
    const { api } = await signedInAtContoso()

    const renamed = { ...contoso(), settings: { ...contoso().settings, DisplayName: 'Contoso (renamed)' } }
    definitions = [renamed, fabrikam()]
    assert.deepEqual((await a.app.authentication.reloadProviders({ revokeSessions: true })).added, ['Contoso'])
    await waitFor(() => b.app.authentication.providers.get('Contoso')?.displayName === 'Contoso (renamed)', 'B to replace Contoso', 2_000, 10)
    assert.equal(await api(), 200)

    definitions = [{ ...renamed, tenant: 'tenant-contoso-moved' }, fabrikam()]
    const moved = await a.app.authentication.reloadProviders({ revokeSessions: true })
    assert.deepEqual([moved.added, moved.removed], [['Contoso'], []])
    await waitFor(async () => await api() === 401, 'the session of the old tenant to be refused on B', 2_000, 20)
    definitions = [contoso(), fabrikam()]
    await a.app.authentication.reloadProviders()
    await waitFor(() => b.app.authentication.providers.get('Contoso')?.displayName === 'Contoso SSO', 'B to restore Contoso', 2_000, 10)
  })

  test('a removal ends new challenges and the callback at once, and with revokeSessions the sessions on every instance', async () => {
    const user = new HttpSession()
    const start = await user.request(`${b.origin}/External/Challenge?provider=Contoso`)
    const callbackUrl = await throughIdpLogin(user, start.location!, b.origin, 'ada')
    const done = await user.request(callbackUrl)
    assert.equal(sessionCookiesSet(done.response).length, 1)
    const api = async (): Promise<number> => (await user.request(`${b.origin}/api/application-information`, { accept: 'application/json' })).response.status
    assert.equal(await api(), 200)
    // An in-flight sign-in: challenged before the removal, called back after it.
    const pending = new HttpSession()
    const pendingStart = await pending.request(`${b.origin}/External/Challenge?provider=Contoso`)
    const pendingCallback = await throughIdpLogin(pending, pendingStart.location!, b.origin, 'ada')

    definitions = [fabrikam()]
    const result = await a.app.authentication.reloadProviders({ revokeSessions: true })
    assert.deepEqual(result.removed, ['Contoso'])
    assert.equal(await challengeStatus(a, 'provider=Contoso'), 400)
    await waitFor(() => !b.app.authentication.providers.has('Contoso'), 'B to remove Contoso', 2_000, 10)
    assert.equal(await challengeStatus(b, 'provider=Contoso'), 400)
    const late = await pending.request(pendingCallback)
    assert.equal(late.response.status, 302)
    assert.equal(late.location?.pathname + (late.location?.search ?? ''), '/Account/Login?failure=correlation')
    assert.equal(sessionCookiesSet(late.response).length, 0)
    await waitFor(async () => await api() === 401, 'the revoked session to be refused on B', 2_000, 20)
  })

  test('a runtime provider whose discovery is unreachable is unhealthy in the details; the app stays ready', async () => {
    definitions = [fabrikam(), { scheme: 'Down', settings: { Type: 'OpenIdConnect', Authority: 'http://127.0.0.1:9/down', ClientId: 'c', ClientSecret: SECRET } }]
    const result = await a.app.authentication.reloadProviders()
    assert.deepEqual(result.added, ['Down'])
    // The first challenge opens it (waits for discovery, which fails): the login page's safe failure, not a 500.
    const first = await fetch(`${a.origin}/External/Challenge?provider=Down`, { redirect: 'manual' })
    assert.equal(first.status, 302)
    assert.match(first.headers.get('location') ?? '', /^\/Account\/Login\?failure=[a-z_]+$/)
    // From then on it is known to be down: the challenge answers 503 before leaving.
    assert.equal(await challengeStatus(a, 'provider=Down'), 503)
    const ready = await fetch(`${a.origin}/health/ready`)
    assert.equal(ready.status, 200)
    const body = await ready.json() as { checks: { providers: Record<string, { status: string, reason?: string }> } }
    assert.deepEqual(body.checks.providers.Down, { status: 'Unhealthy', reason: 'metadata_unreachable' })
  })

  test('a source that throws rejects the call and keeps the providers in use; Enabled false removes', async () => {
    definitions = [fabrikam()]
    await a.app.authentication.reloadProviders()
    sourceDown = true
    const before = a.logs.lines.length
    await assert.rejects(a.app.authentication.reloadProviders(), /database down/)
    sourceDown = false
    assert.ok(a.app.authentication.providers.has('Fabrikam'))
    assert.equal(await challengeStatus(a, 'provider=Fabrikam'), 302)
    assert.ok(!a.logs.lines.slice(before).join('\n').includes(SECRET))
    definitions = [{ ...fabrikam(), settings: { ...fabrikam().settings, Enabled: false } }]
    const result = await a.app.authentication.reloadProviders()
    assert.deepEqual(result, { added: [], removed: ['Fabrikam'], refused: [], refusedDomains: [] })
    assert.equal(await challengeStatus(a, 'provider=Fabrikam'), 400)
  })
})
