/**
 * ID token validation at the OpenID Connect callback, against a provider whose token endpoint the
 * test controls (tokens minted with jose). Every hostile token is refused with its failure class
 * and no session cookie; a valid token from the same provider signs in (the control that gives
 * the table its teeth). No log line carries the secret, the code or a token.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { storedSession } from '../helpers/app.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenAnswer, type TokenIdp } from '../helpers/providers/token-idp.js'
import { closedPort } from '../helpers/ports.js'

const CLIENT_ID = 'id-token-client'
const CLIENT_SECRET = 'oidc-secret-PLANTED-31d0aa'
const codes: string[] = []

let idp: TokenIdp
let app: ListeningApp

// Basic credentials set explicitly, so that the token request below is checked as Basic whatever
// the automatic choice (test/oidc/client-authentication.test.ts).
function oidcSettings (authority: string, extra: Record<string, string | boolean> = {}) {
  return { Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: authority, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, TokenEndpointAuthMethod: 'client_secret_basic', ...extra } } } }
}

before(async () => {
  idp = await startTokenIdp(CLIENT_ID)
  app = await startProviderApp(oidcSettings(idp.issuer))
  await waitUntilReady(app.origin)
})

after(async () => {
  await app?.close()
  await idp?.close()
})

/** Starts a flow, lets the IdP answer the token request with `answer(nonce)`, and calls back. */
async function callbackWith (target: ListeningApp, provider: TokenIdp, answer: (nonce: string) => Promise<TokenAnswer> | TokenAnswer) {
  const session = new HttpSession()
  const start = await session.request(`${target.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.response.status, 302)
  const authorize = start.location!
  const nonce = authorize.searchParams.get('nonce') ?? ''
  const state = authorize.searchParams.get('state') ?? ''
  provider.answer = async () => await answer(nonce)
  const code = `code-${randomBytes(12).toString('hex')}`
  codes.push(code)
  const callback = await session.request(`${target.origin}/signin-oidc?code=${code}&state=${state}`)
  return { session, callback, authorize, code }
}

function lastFailure (target: ListeningApp): Record<string, unknown> | undefined {
  return target.logs.events('external.sign_in.failed').at(-1)
}

function assertNoSecretsLogged (target: ListeningApp, provider: TokenIdp): void {
  assert.deepEqual(findPlanted(target.logs.text(), [CLIENT_SECRET, ...codes, ...provider.planted]), [])
}

const now = (): number => Math.floor(Date.now() / 1000)

describe('OpenID Connect ID token validation', () => {
  test('a valid ID token signs in; the token request carries the code, the PKCE verifier and client_secret_basic', async () => {
    const { callback, authorize, code } = await callbackWith(app, idp, async (nonce) => await idp.validAnswer(nonce))
    assert.equal(callback.response.status, 302)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const request = idp.tokenRequests.at(-1)!
    assert.equal(request.body.get('grant_type'), 'authorization_code')
    assert.equal(request.body.get('code'), code)
    assert.equal(request.body.get('redirect_uri'), `${app.origin}/signin-oidc`)
    const verifier = request.body.get('code_verifier') ?? ''
    const { createHash } = await import('node:crypto')
    assert.equal(createHash('sha256').update(verifier).digest('base64url'), authorize.searchParams.get('code_challenge'))
    // RFC 6749 section 2.3.1: both parts are percent-encoded inside the Basic credentials.
    const [scheme, credentials] = (request.authorization ?? '').split(' ')
    assert.equal(scheme, 'Basic')
    const decoded = Buffer.from(credentials ?? '', 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part.replace(/\+/g, ' ')))
    assert.deepEqual(decoded, [CLIENT_ID, CLIENT_SECRET])
    assert.equal(request.body.get('client_secret'), null)
    assertNoSecretsLogged(app, idp)
  })

  const hostile: Array<{ name: string, failure: string, answer: (nonce: string) => Promise<TokenAnswer> }> = [
    { name: 'a nonce mismatch', failure: 'nonce', answer: async () => await idp.validAnswer('another-nonce-value-0123456789') },
    {
      name: 'an ID token whose kid the provider does not publish (keys refetched, still unknown)',
      failure: 'unknown_key',
      answer: async (nonce) => ({ body: { access_token: 'at-unknown-key-000001', token_type: 'Bearer', id_token: await idp.mintIdToken(nonce, {}, { key: idp.unknownKey, kid: 'unknown' }) } })
    },
    {
      name: 'an ID token signed with an unknown key under the known kid',
      failure: 'signature',
      answer: async (nonce) => ({ body: { access_token: 'at-forged-kid-000002', token_type: 'Bearer', id_token: await idp.mintIdToken(nonce, {}, { key: idp.unknownKey }) } })
    },
    {
      name: 'alg none',
      failure: 'signature',
      answer: async (nonce) => ({ body: { access_token: 'at-alg-none-00000003', token_type: 'Bearer', id_token: await idp.mintIdToken(nonce, {}, { alg: 'none' }) } })
    },
    { name: 'a wrong audience', failure: 'audience', answer: async (nonce) => await idp.validAnswer(nonce, { aud: 'someone-else' }) },
    { name: 'a wrong issuer', failure: 'issuer', answer: async (nonce) => await idp.validAnswer(nonce, { iss: 'http://localhost:1/evil' }) },
    { name: 'an expired token', failure: 'expired', answer: async (nonce) => await idp.validAnswer(nonce, { iat: now() - 7200, exp: now() - 3600 }) },
    { name: 'an iat far in the future', failure: 'id_token', answer: async (nonce) => await idp.validAnswer(nonce, { iat: now() + 3600, exp: now() + 7200 }) },
    { name: 'no ID token at all', failure: 'id_token', answer: async () => ({ body: { access_token: 'at-no-id-token-00004', token_type: 'Bearer' } }) },
    { name: 'a token endpoint error', failure: 'token', answer: async () => ({ status: 400, body: { error: 'invalid_grant' } }) }
  ]
  for (const { name, failure, answer } of hostile) {
    test(`${name} is refused (${failure}) and sets no session cookie`, async () => {
      const { callback } = await callbackWith(app, idp, answer)
      assert.equal(callback.response.status, 302)
      assert.deepEqual(sessionCookiesSet(callback.response), [])
      assert.equal(callback.location?.pathname, '/Account/Login')
      assert.equal(callback.location?.search, '?failure=failed')
      const logged = lastFailure(app)
      assert.equal(logged?.provider, 'OpenIdConnect')
      assert.equal(logged?.failure, failure)
      assertNoSecretsLogged(app, idp)
    })
  }

  test('userinfo whose sub differs from the ID token is refused (userinfo) without a session', async () => {
    idp.userInfo = { sub: 'somebody-else', roles: ['Administrator'] }
    try {
      const { callback } = await callbackWith(app, idp, async (nonce) => await idp.validAnswer(nonce))
      assert.deepEqual(sessionCookiesSet(callback.response), [])
      assert.equal(lastFailure(app)?.failure, 'userinfo')
    } finally {
      idp.userInfo = { sub: 'user-1' }
    }
    assertNoSecretsLogged(app, idp)
  })
})

describe('OpenID Connect options and outages', () => {
  test('SaveTokens true stores the tokens in the sealed ticket', async (context) => {
    const saving = await startProviderApp(oidcSettings(idp.issuer, { SaveTokens: true }))
    context.after(async () => { await saving.close() })
    await waitUntilReady(saving.origin)
    const { session, callback } = await callbackWith(saving, idp, async (nonce) => await idp.validAnswer(nonce))
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const origin = new URL(saving.origin)
    const ticket = await storedSession(saving.app, saving.keyRing, session.jar.get(origin, '__Host-ProjectTemplate.Web.Authentication') ?? '')
    const tokenRequest = idp.tokenRequests.at(-1)
    assert.ok(tokenRequest !== undefined)
    assert.equal(typeof ticket?.tokens?.id_token, 'string')
    assert.match(ticket?.tokens?.access_token ?? '', /^at-/)
    assertNoSecretsLogged(saving, idp)
  })

  test('an unreachable token endpoint is a token failure without a session', async (context) => {
    const deadPort = await closedPort()
    const deadIdp = await startTokenIdp(CLIENT_ID, { tokenEndpoint: `http://localhost:${deadPort}/token` })
    const target = await startProviderApp(oidcSettings(deadIdp.issuer))
    context.after(async () => { await target.close(); await deadIdp.close() })
    await waitUntilReady(target.origin)
    const { callback } = await callbackWith(target, deadIdp, async (nonce) => await deadIdp.validAnswer(nonce))
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    assert.equal(lastFailure(target)?.failure, 'token')
    assertNoSecretsLogged(target, deadIdp)
  })

  test('unloadable discovery: the app starts, /health/ready is 503 naming the provider, the login page marks it unavailable', async (context) => {
    const deadPort = await closedPort()
    const target = await startProviderApp(oidcSettings(`http://localhost:${deadPort}`))
    context.after(async () => { await target.close() })
    const deadline = Date.now() + 10_000
    while (target.logs.events('external.metadata.failed').length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    const failed = target.logs.events('external.metadata.failed')[0]
    assert.equal(failed?.provider, 'OpenIdConnect')
    assert.equal(failed?.reason, 'metadata_unreachable')

    const ready = await fetch(`${target.origin}/health/ready`)
    assert.equal(ready.status, 503)
    assert.deepEqual((await ready.json() as { checks: { providers: unknown } }).checks.providers, { OpenIdConnect: { status: 'Unhealthy', reason: 'metadata_unreachable' } })
    const login = await (await fetch(`${target.origin}/Account/Login`)).text()
    assert.match(login, /<span class="provider unavailable" data-provider="OpenIdConnect">OpenID Connect \(unavailable\)<\/span>/)
    const challenge = await fetch(`${target.origin}/External/Challenge?provider=OpenIdConnect`, { redirect: 'manual' })
    assert.equal(challenge.status, 503)
    assert.deepEqual(findPlanted(target.logs.text(), [CLIENT_SECRET]), [])
  })
})
