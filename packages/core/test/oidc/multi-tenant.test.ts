/**
 * Entra ID multi-tenant (issue 36, item 1), against a provider on loopback whose discovery issuer is
 * the template `<origin>/{tenantid}/v2.0` (test/helpers/providers/token-idp.ts, jose): an allowed
 * tenant signs in with its own issuer in the user's identity and its mapped application:tenant;
 * a tenant not on the allow-list, a missing tid, an iss that does not match the tid, the template
 * itself as iss, and a tid that tries to bend the issuer are each refused with the login page's
 * failure and one log line with a failure class, never a session. Startup refuses a multi-tenant
 * Authority without AllowedTenants, and a template discovered without it keeps the provider
 * unavailable with a log line naming the key. SaveTokens refresh expects the tenant's own issuer.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { JWTPayload } from 'jose'
import { HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { loadTestConfiguration, storedSession, testKeyRing } from '../helpers/app.js'
import { waitFor } from '../helpers/wait.js'
import { Secret } from '../../src/config/secret.js'
import { discoverProvider, readAllowedTenants, refreshTokens } from '../../src/oidc/relying-party.js'
import { ProviderKeys } from '../../src/oidc/provider-keys.js'
import { TokenRefreshError } from '../../src/session/token-refresh.js'

const P = 'ProjectTemplate:Authentication:Providers:OpenIdConnect'
const CLIENT_ID = 'saas-app'
const CLIENT_SECRET = 'PLANTED-multi-tenant-secret-4410'
const CONTOSO = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const FABRIKAM = '0b6a0f2e-3c1d-4b8e-9d7a-5e4f3c2b1a09'
const NORTHWIND = 'c3d2e1f0-aaaa-4bbb-8ccc-dddddddddddd'

/**
 * Issue 40, item 11: a tenant not allowed gets a page of its own at the callback (403), saying the
 * organisation is not set up, with the request id of the refusal's log line and of the callback's
 * completion line.
 */
async function assertOrganisationRefused (callback: Exchange, failed: ReadonlyArray<Record<string, unknown>>, completed: () => ReadonlyArray<Record<string, unknown>>): Promise<void> {
  assert.equal(callback.response.status, 403)
  assert.equal(callback.response.headers.get('cache-control'), 'no-store')
  assert.match(callback.body, /your organisation is not set up to use this application/)
  assert.doesNotMatch(callback.body, /Please try again/)
  const shown = /<code id="request-id">([^<]+)<\/code>/.exec(callback.body)?.[1]
  assert.ok(shown !== undefined && shown.length > 0, 'the page shows a request id')
  assert.equal(failed.length, 1)
  assert.equal(failed[0]?.reqId, shown)
  await waitFor(() => completed().some((line) => line.reqId === shown), 'the callback\'s completion line', 5_000)
  assert.deepEqual(completed().filter((line) => line.reqId === shown).map((line) => [line.path, line.statusCode]), [['/signin-oidc', 403]])
}

describe('a multi-tenant provider with AllowedTenants', () => {
  const keyRing = testKeyRing()
  let idp: TokenIdp
  let app: ListeningApp
  before(async () => {
    idp = await startTokenIdp(CLIENT_ID, { multiTenant: true })
    app = await startProviderApp({
      Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, AllowedTenants: [`${CONTOSO}=contoso`, FABRIKAM] } } }
    }, undefined, { keyRing })
    await waitUntilReady(app.origin)
  })
  after(async () => { await app?.close(); await idp?.close() })

  /** A sign-in whose ID token carries `claims` (merged over valid defaults). */
  async function signIn (claims: JWTPayload): Promise<{ session: HttpSession, callback: Exchange }> {
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    assert.equal(start.response.status, 302)
    const nonce = start.location?.searchParams.get('nonce') ?? ''
    idp.answer = async () => await idp.validAnswer(nonce, claims)
    const callback = await session.request(`${app.origin}/signin-oidc?code=c-${randomBytes(8).toString('hex')}&state=${start.location?.searchParams.get('state') ?? ''}`)
    return { session, callback }
  }

  test('the discovery document is a template on loopback, not at Microsoft', async () => {
    const discovery = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json() as { issuer: string }
    assert.equal(discovery.issuer, idp.discoveryIssuer)
    assert.match(discovery.issuer, /^http:\/\/localhost:\d+\/\{tenantid\}\/v2\.0$/)
  })

  test('an allowed tenant signs in: its own issuer in the identity, its mapped application:tenant the only tenant claim', async () => {
    const { session, callback } = await signIn({ iss: idp.tenantIssuer(CONTOSO), tid: CONTOSO, 'application:tenant': 'forged-by-idp' })
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const ticket = await storedSession(app.app, keyRing, session.jar.header(new URL(app.origin)))
    assert.equal(ticket?.scheme, 'OpenIdConnect')
    assert.deepEqual(ticket?.claims.filter((claim) => claim.type === 'application:tenant').map((claim) => claim.value), ['contoso'])
    const subject = ticket?.claims.find((claim) => claim.type === 'application:subject')
    assert.equal(subject?.value, 'user-1')
    assert.equal(subject?.issuer, idp.tenantIssuer(CONTOSO))
  })

  test('an allowed tenant without a mapping: signs in, no tenant claim at all', async () => {
    const { session, callback } = await signIn({ iss: idp.tenantIssuer(FABRIKAM), tid: FABRIKAM, 'application:tenant': 'forged-by-idp' })
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const ticket = await storedSession(app.app, keyRing, session.jar.header(new URL(app.origin)))
    assert.deepEqual(ticket?.claims.filter((claim) => claim.type === 'application:tenant'), [])
    assert.equal(ticket?.claims.find((claim) => claim.type === 'application:subject')?.issuer, idp.tenantIssuer(FABRIKAM))
  })

  const refusals: Array<{ name: string, claims: (idp: TokenIdp) => JWTPayload, failure: string, errorCode: string, tenantId?: string }> = [
    { name: 'a tenant not on the allow-list (its tid logged for the operator)', claims: (p) => ({ iss: p.tenantIssuer(NORTHWIND), tid: NORTHWIND }), failure: 'tenant', errorCode: 'ID_TOKEN_TENANT_NOT_ALLOWED', tenantId: NORTHWIND },
    { name: 'a missing tid', claims: (p) => ({ iss: p.tenantIssuer(CONTOSO) }), failure: 'tenant', errorCode: 'ID_TOKEN_TENANT_MISSING' },
    { name: 'a tid that is not a string', claims: (p) => ({ iss: p.tenantIssuer(CONTOSO), tid: 42 }), failure: 'tenant', errorCode: 'ID_TOKEN_TENANT_MISSING' },
    { name: 'an iss of another allowed tenant than its tid', claims: (p) => ({ iss: p.tenantIssuer(FABRIKAM), tid: CONTOSO }), failure: 'issuer', errorCode: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' },
    { name: 'an allowed tid with the iss of a tenant not allowed', claims: (p) => ({ iss: p.tenantIssuer(NORTHWIND), tid: CONTOSO }), failure: 'issuer', errorCode: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' },
    { name: 'the template itself as iss', claims: (p) => ({ iss: p.discoveryIssuer, tid: CONTOSO }), failure: 'issuer', errorCode: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' },
    // Issue 40, item 21: the tid's spelling goes into the user's issuer, so another spelling of an allowed tenant would be a second identity of the same person.
    { name: 'an allowed tid in upper case with the issuer in upper case', claims: (p) => ({ iss: p.tenantIssuer(CONTOSO.toUpperCase()), tid: CONTOSO.toUpperCase() }), failure: 'tenant', errorCode: 'ID_TOKEN_TENANT_NOT_CANONICAL' },
    { name: 'an allowed tid in mixed case with the issuer in lower case', claims: (p) => ({ iss: p.tenantIssuer(CONTOSO), tid: `${CONTOSO.slice(0, 8).toUpperCase()}${CONTOSO.slice(8)}` }), failure: 'tenant', errorCode: 'ID_TOKEN_TENANT_NOT_CANONICAL' },
    { name: 'an allowed tid wrapped in spaces', claims: (p) => ({ iss: p.tenantIssuer(` ${CONTOSO} `), tid: ` ${CONTOSO} ` }), failure: 'tenant', errorCode: 'ID_TOKEN_TENANT_NOT_CANONICAL' },
    { name: 'a tid that bends the issuer path', claims: (p) => ({ iss: p.tenantIssuer(`${CONTOSO}/../x`), tid: `${CONTOSO}/../x` }), failure: 'tenant', errorCode: 'ID_TOKEN_TENANT_NOT_ALLOWED' },
    { name: 'an allowed tenant\'s token with another nonce', claims: (p) => ({ iss: p.tenantIssuer(CONTOSO), tid: CONTOSO, nonce: 'replayed-nonce' }), failure: 'nonce', errorCode: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' },
    { name: 'an allowed tenant\'s expired token', claims: (p) => ({ iss: p.tenantIssuer(CONTOSO), tid: CONTOSO, exp: Math.floor(Date.now() / 1000) - 3600 }), failure: 'expired', errorCode: 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' },
    { name: 'an allowed tenant\'s token for another client', claims: (p) => ({ iss: p.tenantIssuer(CONTOSO), tid: CONTOSO, aud: 'another-client' }), failure: 'audience', errorCode: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' }
  ]
  for (const refusal of refusals) {
    test(`${refusal.name}: refused as ${refusal.failure}, one log line, no session`, async () => {
      const before = app.logs.events('external.sign_in.failed').length
      const { callback } = await signIn(refusal.claims(idp))
      if (refusal.failure === 'tenant') await assertOrganisationRefused(callback, app.logs.events('external.sign_in.failed').slice(before), () => app.logs.events('request.completed'))
      else assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
      assert.deepEqual(sessionCookiesSet(callback.response), [])
      const lines = app.logs.events('external.sign_in.failed').slice(before)
      assert.equal(lines.length, 1)
      assert.equal(lines[0]?.failure, refusal.failure)
      assert.equal(lines[0]?.errorCode, refusal.errorCode)
      if (refusal.tenantId !== undefined) assert.equal(lines[0]?.tenantId, refusal.tenantId)
      assert.ok(!app.logs.text().includes(CLIENT_SECRET))
    })
  }

  test('an allowed tenant\'s token signed by a key the provider never published: unknown_key, no session', async () => {
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    const nonce = start.location?.searchParams.get('nonce') ?? ''
    idp.answer = async () => ({ body: { access_token: 'at-unknown-key', token_type: 'Bearer', id_token: await idp.mintIdToken(nonce, { iss: idp.tenantIssuer(CONTOSO), tid: CONTOSO }, { key: idp.unknownKey, kid: 'invented' }) } })
    const callback = await session.request(`${app.origin}/signin-oidc?code=c-unknown&state=${start.location?.searchParams.get('state') ?? ''}`)
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    assert.equal(app.logs.events('external.sign_in.failed').at(-1)?.failure, 'unknown_key')
  })
})

describe('startup and discovery without AllowedTenants', () => {
  test('a multi-tenant Authority (organizations) without AllowedTenants: startup refuses, naming the key', () => {
    for (const segment of ['organizations', 'common', 'consumers']) {
      const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: `https://login.microsoftonline.com/${segment}/v2.0`, ClientId: 'c', ClientSecret: 's' } } } } })
      assert.deepEqual(loaded.errors.map((problem) => problem.message), [`${P}:AllowedTenants is required with a multi-tenant Authority (common, organizations or consumers): list the tenant ids allowed to sign in.`])
    }
  })

  test('AllowedTenants entries that are not canonical tenant ids: every one refused at once, naming its index, never the value', () => {
    const entries = [CONTOSO, 'PLANTED tenant/..', FABRIKAM.toUpperCase(), ` ${NORTHWIND}`, 'planted-contoso.onmicrosoft.com=contoso', `${NORTHWIND}= planted`, CONTOSO]
    const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: 'https://login.microsoftonline.com/organizations/v2.0', ClientId: 'c', ClientSecret: 's', AllowedTenants: entries } } } } })
    assert.deepEqual(loaded.errors.map((problem) => [problem.key, problem.message]), [
      [`${P}:AllowedTenants:1`, `${P}:AllowedTenants:1 must be a tenant id (a lower-case GUID), optionally followed by =<application tenant>.`],
      [`${P}:AllowedTenants:2`, `${P}:AllowedTenants:2 must be a tenant id in lower case without spaces (a GUID as Entra ID writes it in tid), optionally followed by =<application tenant>.`],
      [`${P}:AllowedTenants:3`, `${P}:AllowedTenants:3 must be a tenant id in lower case without spaces (a GUID as Entra ID writes it in tid), optionally followed by =<application tenant>.`],
      [`${P}:AllowedTenants:4`, `${P}:AllowedTenants:4 looks like a domain name: give the tenant id (a GUID: Entra ID, Overview, Tenant ID), optionally followed by =<application tenant>.`],
      [`${P}:AllowedTenants:5`, `${P}:AllowedTenants:5 must have an application tenant after = without spaces around it.`],
      [`${P}:AllowedTenants:6`, `${P}:AllowedTenants:6 repeats a tenant id listed before.`]
    ])
    assert.ok(!JSON.stringify(loaded.errors).includes('PLANTED') && !JSON.stringify(loaded.errors).includes('planted'))
  })

  test('a discovered {tenantid} template without AllowedTenants: not ready, one log line naming the key', async () => {
    // An Authority whose path does not say multi-tenant: only the discovery document does.
    const idp = await startTokenIdp(CLIENT_ID, { multiTenant: true, authorityPath: '/all-customers/v2.0' })
    const app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } } } })
    try {
      await waitFor(() => app.logs.events('external.metadata.failed').length > 0, 'the metadata failure', 10_000)
      const line = app.logs.events('external.metadata.failed')[0]
      assert.equal(line?.setting, `${P}:AllowedTenants`)
      assert.equal(line?.errorCode, 'ALLOWED_TENANTS_REQUIRED')
      assert.equal((await fetch(`${app.origin}/health/ready`)).status, 503)
    } finally {
      await app.close()
      await idp.close()
    }
  })
})

describe('SaveTokens refresh under a {tenantid} template', () => {
  let idp: TokenIdp
  before(async () => { idp = await startTokenIdp(CLIENT_ID, { multiTenant: true }) })
  after(async () => { await idp?.close() })

  async function refresh (newIdToken: JWTPayload): Promise<Record<string, string>> {
    const tenants = readAllowedTenants([CONTOSO, FABRIKAM])
    assert.ok('tenants' in tenants)
    const config = await discoverProvider({ authority: idp.issuer, clientId: CLIENT_ID, clientSecret: new Secret(CLIENT_SECRET), idTokenSignedResponseAlg: 'RS256', allowInsecureRequests: true, allowedTenants: tenants.tenants })
    const stored = { refresh_token: 'rt-1', id_token: await idp.mintIdToken('n-1', { iss: idp.tenantIssuer(CONTOSO), tid: CONTOSO }) }
    idp.answer = async () => ({ body: { access_token: 'at-2', token_type: 'Bearer', expires_in: 300, refresh_token: 'rt-2', id_token: await idp.mintIdToken('n-1', newIdToken) } })
    const keys = new ProviderKeys({ jwksUri: `${idp.issuer}/jwks`, allowInsecureRequests: true, timeoutMs: 5000 })
    return await refreshTokens(config, stored, { keys, algorithm: 'RS256' })
  }

  test('a new ID token with the tenant\'s own issuer: refreshed', async () => {
    const tokens = await refresh({ iss: idp.tenantIssuer(CONTOSO), tid: CONTOSO })
    assert.equal(tokens.access_token, 'at-2')
    assert.equal(tokens.refresh_token, 'rt-2')
  })

  test('a new ID token with another tenant\'s issuer: refused as id_token', async () => {
    await assert.rejects(refresh({ iss: idp.tenantIssuer(FABRIKAM), tid: FABRIKAM }), (error: unknown) => error instanceof TokenRefreshError && error.failure === 'id_token')
  })
})
