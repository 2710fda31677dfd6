/**
 * Only a runtime definition's `tenant` speaks for its users (issue 40, items 18 to 20), with the
 * real app, its provider source and a multi-tenant provider on loopback (a `{tenantid}` issuer
 * template, test/helpers/providers/token-idp.ts): an `AllowedTenants` entry mapped to another
 * customer's tenant is refused at reload naming the entry; an unmapped entry's users carry the
 * definition's tenant; an Entra tenant id a second customer lists is refused to it at reload (the
 * earlier row keeps it); a customer's discovery naming its token endpoint on another origin keeps
 * the provider unavailable, with a log line naming the member.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { JWTPayload } from 'jose'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { storedSession, testKeyRing } from '../helpers/app.js'
import { waitFor } from '../helpers/wait.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'

const CLIENT_ID = 'saas-app'
const SECRET = 'PLANTED-runtime-tenant-secret-5521'
const X_TID = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const Y_TID = '0b6a0f2e-3c1d-4b8e-9d7a-5e4f3c2b1a09'
const SECTION = 'ProjectTemplate:Authentication:Schemes'

describe('runtime providers and their tenants', () => {
  const keyRing = testKeyRing()
  let idp: TokenIdp
  let app: ListeningApp
  let definitions: RuntimeProviderDefinition[] = []
  before(async () => {
    idp = await startTokenIdp(CLIENT_ID, { multiTenant: true })
    app = await startProviderApp({}, undefined, { keyRing, providerSource: () => definitions })
  })
  after(async () => { await app?.close(); await idp?.close() })

  const customer = (scheme: string, tenant: string, allowedTenants: string[], extra: Partial<RuntimeProviderDefinition> = {}): RuntimeProviderDefinition => ({
    scheme,
    settings: { Type: 'OpenIdConnect', Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: SECRET, AllowedTenants: allowedTenants },
    tenant,
    ...extra
  })

  /** A sign-in through `scheme` whose ID token carries `claims`; the application:tenant claims of the session it opened. */
  async function tenantsAfterSignIn (scheme: string, claims: JWTPayload): Promise<string[] | undefined> {
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=${scheme}`)
    assert.equal(start.response.status, 302)
    const nonce = start.location?.searchParams.get('nonce') ?? ''
    idp.answer = async () => await idp.validAnswer(nonce, claims)
    const callback = await session.request(`${app.origin}/signin-${scheme.toLowerCase()}?code=c-${randomBytes(8).toString('hex')}&state=${start.location?.searchParams.get('state') ?? ''}`)
    if (sessionCookiesSet(callback.response).length === 0) return undefined
    const ticket = await storedSession(app.app, keyRing, session.jar.header(new URL(app.origin)))
    return ticket?.claims.filter((claim) => claim.type === 'application:tenant').map((claim) => claim.value)
  }

  test('customer X maps its tenant id to customer Y\'s application tenant: refused at reload naming the entry, with the refusal event; nothing signs in through it', async () => {
    definitions = [customer('CustomerX', 't-x', [X_TID, `${Y_TID}=t-y`])]
    const events = app.logs.events('external.runtime_provider.refused').length
    const result = await app.app.authentication.reloadProviders()
    assert.deepEqual(result.added, [])
    assert.deepEqual(result.refused.map((refusal) => [refusal.scheme, refusal.problems.map((problem) => problem.key)]), [['CustomerX', [`${SECTION}:CustomerX:AllowedTenants:1`]]])
    const lines = app.logs.events('external.runtime_provider.refused').slice(events)
    assert.equal(lines.length, 1)
    assert.equal(lines[0]?.provider, 'CustomerX')
    assert.ok(!app.logs.text().includes('t-y') && !app.logs.text().includes(SECRET))
    assert.equal((await fetch(`${app.origin}/External/Challenge?provider=CustomerX`, { redirect: 'manual' })).status, 400)
  })

  test('an unmapped entry (and one mapped to the definition\'s own tenant): the users carry the definition\'s tenant, the only tenant claim', async () => {
    definitions = [customer('CustomerX', 't-x', [X_TID, `${Y_TID}=t-x`])]
    assert.deepEqual((await app.app.authentication.reloadProviders()).added, ['CustomerX'])
    assert.deepEqual(await tenantsAfterSignIn('CustomerX', { iss: idp.tenantIssuer(X_TID), tid: X_TID, 'application:tenant': 't-forged' }), ['t-x'])
    assert.deepEqual(await tenantsAfterSignIn('CustomerX', { iss: idp.tenantIssuer(Y_TID), tid: Y_TID }), ['t-x'])
  })

  test('customer Z lists customer X\'s Entra tenant: Z is refused at reload naming the entry (X was created earlier), X keeps its users', async () => {
    definitions = [
      customer('CustomerZ', 't-z', [Y_TID, X_TID], { createdAt: '2026-05-01T00:00:00Z' }),
      customer('CustomerX', 't-x', [X_TID], { createdAt: '2025-01-01T00:00:00Z' })
    ]
    const events = app.logs.events('external.runtime_provider.refused').length
    const result = await app.app.authentication.reloadProviders()
    assert.deepEqual(result.refused.map((refusal) => [refusal.scheme, refusal.problems.map((problem) => problem.key)]), [['CustomerZ', [`${SECTION}:CustomerZ:AllowedTenants:1`]]])
    assert.equal(app.logs.events('external.runtime_provider.refused').slice(events)[0]?.provider, 'CustomerZ')
    assert.equal((await fetch(`${app.origin}/External/Challenge?provider=CustomerZ`, { redirect: 'manual' })).status, 400)
    assert.deepEqual(await tenantsAfterSignIn('CustomerX', { iss: idp.tenantIssuer(X_TID), tid: X_TID }), ['t-x'])
  })

  test('a customer whose discovery names its token endpoint on another origin: unavailable, one log line naming token_endpoint, no token request', async () => {
    const elsewhere = await startTokenIdp(CLIENT_ID, { tokenEndpoint: `${idp.issuer.replace('localhost', '127.0.0.1')}/token` })
    const tokenRequests = idp.tokenRequests.length
    try {
      definitions = [{ scheme: 'Elsewhere', settings: { Type: 'OpenIdConnect', Authority: elsewhere.issuer, ClientId: CLIENT_ID, ClientSecret: SECRET }, tenant: 't-e' }]
      assert.deepEqual((await app.app.authentication.reloadProviders()).added, ['Elsewhere'])
      const failures = app.logs.events('external.metadata.failed').length
      const start = await fetch(`${app.origin}/External/Challenge?provider=Elsewhere`, { redirect: 'manual' })
      await start.arrayBuffer()
      await waitFor(() => app.logs.events('external.metadata.failed').length > failures, 'the metadata failure', 10_000)
      const line = app.logs.events('external.metadata.failed').at(-1)
      assert.equal(line?.errorCode, 'ENDPOINT_OFF_ISSUER_ORIGIN')
      assert.equal(line?.endpoint, 'token_endpoint')
      assert.notEqual(start.headers.get('location')?.startsWith(elsewhere.issuer), true)
      assert.equal(idp.tokenRequests.length, tokenRequests)
      assert.equal(elsewhere.tokenRequests.length, 0)
    } finally {
      await elsewhere.close()
    }
  })
})
