/**
 * Step-up authentication, the OpenID Connect protocol step (issue 36, item 3, first half;
 * src/oidc/step-up.ts): the request carries acr_values, max_age and, for a maximum age of 0,
 * prompt=login; the response must prove it. A missing or stale auth_time, an acr not requested or
 * absent, and a missing amr method are each refused with their failure class. Against
 * oidc-provider (prompt=login makes a signed-in user log in again; an acr the provider cannot give
 * is refused; pushed with PAR, the parameters still reach it) and a jose provider whose ID tokens
 * the test mints. Through policies and the app: test/oidc/step-up-sign-in.test.ts.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { JWTPayload } from 'jose'
import { HttpSession } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { Secret } from '../../src/config/secret.js'
import { buildAuthorizationRequest, checkAuthentication, completeAuthorizationCodeFlow, discoverProvider, newCorrelationValues, OpenIdConnectError, stepUpParameters, type AuthenticationRequirement } from '../../src/oidc/relying-party.js'
import { ProviderKeys } from '../../src/oidc/provider-keys.js'

const NOW = 1_800_000_000
const AT = { nowSeconds: NOW, requestedAtSeconds: NOW - 20, clockToleranceSeconds: 60 }

describe('the request parameters', () => {
  test('acr_values space-separated, max_age, and prompt=login for a maximum age of 0', () => {
    assert.deepEqual(stepUpParameters({ acrValues: ['urn:mfa', 'urn:hwk'], maxAgeSeconds: 300 }), { acr_values: 'urn:mfa urn:hwk', max_age: '300' })
    assert.deepEqual(stepUpParameters({ maxAgeSeconds: 0 }), { max_age: '0', prompt: 'login' })
    assert.deepEqual(stepUpParameters({ amr: ['mfa'] }), {})
  })
})

describe('the response checks', () => {
  const cases: Array<{ name: string, claims: Record<string, unknown>, requirement: AuthenticationRequirement, expected?: string }> = [
    { name: 'fresh auth_time within max_age', claims: { auth_time: NOW - 100 }, requirement: { maxAgeSeconds: 300 } },
    { name: 'no auth_time with max_age', claims: {}, requirement: { maxAgeSeconds: 300 }, expected: 'auth_time AUTH_TIME_MISSING' },
    { name: 'auth_time as a string', claims: { auth_time: String(NOW) }, requirement: { maxAgeSeconds: 300 }, expected: 'auth_time AUTH_TIME_MISSING' },
    { name: 'auth_time older than max_age and the skew', claims: { auth_time: NOW - 361 }, requirement: { maxAgeSeconds: 300 }, expected: 'auth_time AUTH_TIME_STALE' },
    { name: 'auth_time in the future beyond the skew', claims: { auth_time: NOW + 61 }, requirement: { maxAgeSeconds: 300 }, expected: 'auth_time AUTH_TIME_IN_FUTURE' },
    { name: 'max_age 0: auth_time after the request', claims: { auth_time: NOW - 5 }, requirement: { maxAgeSeconds: 0 } },
    { name: 'max_age 0: auth_time from before the request (an old session reused)', claims: { auth_time: NOW - 20 - 61 }, requirement: { maxAgeSeconds: 0 }, expected: 'auth_time AUTH_TIME_STALE' },
    { name: 'a requested acr', claims: { acr: 'urn:hwk' }, requirement: { acrValues: ['urn:mfa', 'urn:hwk'] } },
    { name: 'an acr not requested', claims: { acr: 'urn:pwd' }, requirement: { acrValues: ['urn:mfa'] }, expected: 'acr ACR_NOT_REQUESTED' },
    { name: 'no acr', claims: {}, requirement: { acrValues: ['urn:mfa'] }, expected: 'acr ACR_MISSING' },
    { name: 'every required amr method', claims: { amr: ['pwd', 'mfa', 'hwk'] }, requirement: { amr: ['mfa', 'hwk'] } },
    { name: 'a required amr method missing', claims: { amr: ['pwd'] }, requirement: { amr: ['mfa'] }, expected: 'amr AMR_MISSING_METHOD' },
    { name: 'amr as a string, not a list', claims: { amr: 'mfa' }, requirement: { amr: ['mfa'] }, expected: 'amr AMR_MISSING_METHOD' }
  ]
  for (const entry of cases) {
    test(`${entry.name}: ${entry.expected ?? 'accepted'}`, () => {
      const unmet = checkAuthentication(entry.claims, entry.requirement, AT)
      assert.equal(unmet === undefined ? undefined : `${unmet.failure} ${unmet.code}`, entry.expected)
    })
  }
})

describe('against a provider whose ID tokens the test mints', () => {
  let idp: TokenIdp
  before(async () => { idp = await startTokenIdp('step-up-client') })
  after(async () => { await idp?.close() })

  async function callback (claims: JWTPayload, requirement: AuthenticationRequirement): Promise<unknown> {
    const config = await discoverProvider({ authority: idp.issuer, clientId: 'step-up-client', clientSecret: new Secret('s'), idTokenSignedResponseAlg: 'RS256', allowInsecureRequests: true })
    const { nonce, codeVerifier } = newCorrelationValues()
    const url = await buildAuthorizationRequest(config, { redirectUri: 'http://127.0.0.1:9/signin-oidc', scopes: ['openid'], state: 'st-1', nonce, codeVerifier, stepUp: requirement })
    assert.equal(url.searchParams.get('acr_values'), requirement.acrValues?.join(' ') ?? null)
    idp.answer = async () => await idp.validAnswer(nonce, claims)
    const keys = new ProviderKeys({ jwksUri: `${idp.issuer}/jwks`, allowInsecureRequests: true, timeoutMs: 5000 })
    try {
      await completeAuthorizationCodeFlow(config, new URL('http://127.0.0.1:9/signin-oidc?code=c-1&state=st-1'), { state: 'st-1', nonce, codeVerifier, stepUp: { requirement, requestedAtSeconds: Math.floor(Date.now() / 1000) - 5 } }, { keys, algorithm: 'RS256', clockToleranceSeconds: 60 })
      return 'accepted'
    } catch (error) {
      assert.ok(error instanceof OpenIdConnectError)
      return `${error.failure} ${error.code ?? ''}`
    }
  }
  const now = (): number => Math.floor(Date.now() / 1000)
  const strong: AuthenticationRequirement = { acrValues: ['urn:example:loa:high'], amr: ['mfa'], maxAgeSeconds: 300 }

  test('acr, amr and a fresh auth_time as required: accepted', async () => {
    assert.equal(await callback({ acr: 'urn:example:loa:high', amr: ['pwd', 'mfa'], auth_time: now() - 10 }, strong), 'accepted')
  })
  test('no auth_time: auth_time', async () => {
    assert.equal(await callback({ acr: 'urn:example:loa:high', amr: ['mfa'] }, strong), 'auth_time AUTH_TIME_MISSING')
  })
  test('an older auth_time: auth_time', async () => {
    assert.equal(await callback({ acr: 'urn:example:loa:high', amr: ['mfa'], auth_time: now() - 3600 }, strong), 'auth_time AUTH_TIME_STALE')
  })
  test('an acr not requested: acr', async () => {
    assert.equal(await callback({ acr: 'urn:example:loa:low', amr: ['mfa'], auth_time: now() }, strong), 'acr ACR_NOT_REQUESTED')
  })
  test('no mfa in amr: amr', async () => {
    assert.equal(await callback({ acr: 'urn:example:loa:high', amr: ['pwd'], auth_time: now() }, strong), 'amr AMR_MISSING_METHOD')
  })
})

describe('against oidc-provider', () => {
  const APP = 'http://127.0.0.1:9'
  let idp: OidcIdp
  before(async () => {
    idp = await startOidcIdp({ clientId: 'step-up-rp', clientSecret: 'step-up-secret', accounts: { ada: { name: 'Ada' } }, acrValues: ['urn:example:loa:high'] })
    await idp.configure(`${APP}/signin-oidc`)
  })
  after(async () => { await idp?.close() })

  async function request (requirement?: AuthenticationRequirement, pushedAuthorization: 'Never' | 'Require' = 'Never'): Promise<{ url: URL, config: Awaited<ReturnType<typeof discoverProvider>>, state: string, nonce: string, codeVerifier: string }> {
    const config = await discoverProvider({ authority: idp.issuer, clientId: 'step-up-rp', clientSecret: new Secret('step-up-secret'), idTokenSignedResponseAlg: 'RS256', allowInsecureRequests: true })
    const { nonce, codeVerifier } = newCorrelationValues()
    const state = `st-${nonce.slice(0, 6)}`
    const url = await buildAuthorizationRequest(config, { redirectUri: `${APP}/signin-oidc`, scopes: ['openid', 'profile'], state, nonce, codeVerifier, pushedAuthorization, ...(requirement === undefined ? {} : { stepUp: requirement }) })
    return { url, config, state, nonce, codeVerifier }
  }

  /** Follows the IdP's redirects; the first page it shows (its prompt), or `back` when it returns to the app at once. */
  async function firstStop (session: HttpSession, start: URL): Promise<string> {
    let exchange = await session.request(start)
    for (let step = 0; step < 10 && exchange.location !== undefined; step++) {
      if (exchange.location.origin === APP) return 'back'
      exchange = await session.request(exchange.location)
    }
    return /name="prompt" value="([a-z]+)"/.exec(exchange.body)?.[1] ?? `status ${exchange.response.status}`
  }

  test('max_age 0 (prompt=login) makes a signed-in user log in again, and the fresh auth_time is accepted', async () => {
    const session = new HttpSession()
    const first = await request()
    await throughIdpLogin(session, first.url, APP, 'ada')
    // Control: the same browser is sent straight back without a step-up.
    assert.equal(await firstStop(session, (await request()).url), 'back')
    const stepUp = await request({ maxAgeSeconds: 0 })
    assert.equal(stepUp.url.searchParams.get('prompt'), 'login')
    assert.equal(stepUp.url.searchParams.get('max_age'), '0')
    assert.equal(await firstStop(session, stepUp.url), 'login')
    const requestedAtSeconds = Math.floor(Date.now() / 1000)
    const back = await throughIdpLogin(session, stepUp.url, APP, 'ada')
    const keys = new ProviderKeys({ jwksUri: stepUp.config.serverMetadata().jwks_uri!, allowInsecureRequests: true, timeoutMs: 5000 })
    const result = await completeAuthorizationCodeFlow(stepUp.config, back, { ...stepUp, stepUp: { requirement: { maxAgeSeconds: 0 }, requestedAtSeconds } }, { keys, algorithm: 'RS256', clockToleranceSeconds: 60 })
    assert.equal(result.providerSession.sub, 'ada')
  })

  test('pushed (PAR): the browser carries only client_id and request_uri, and the pushed max_age 0 still makes a signed-in user log in again', async () => {
    const session = new HttpSession()
    await throughIdpLogin(session, (await request()).url, APP, 'ada')
    const pushedBefore = idp.pushedAuthorizationRequests
    const stepUp = await request({ maxAgeSeconds: 0 }, 'Require')
    assert.deepEqual([...stepUp.url.searchParams.keys()].sort(), ['client_id', 'request_uri'])
    assert.equal(idp.pushedAuthorizationRequests, pushedBefore + 1)
    assert.equal(await firstStop(session, stepUp.url), 'login')
  })

  test('acr_values the provider\'s login cannot satisfy: the ID token has no acr and is refused as acr', async () => {
    const session = new HttpSession()
    const stepUp = await request({ acrValues: ['urn:example:loa:high'] })
    assert.equal(stepUp.url.searchParams.get('acr_values'), 'urn:example:loa:high')
    const back = await throughIdpLogin(session, stepUp.url, APP, 'ada')
    const keys = new ProviderKeys({ jwksUri: stepUp.config.serverMetadata().jwks_uri!, allowInsecureRequests: true, timeoutMs: 5000 })
    await assert.rejects(completeAuthorizationCodeFlow(stepUp.config, back, { ...stepUp, stepUp: { requirement: { acrValues: ['urn:example:loa:high'] }, requestedAtSeconds: Math.floor(Date.now() / 1000) } }, { keys, algorithm: 'RS256', clockToleranceSeconds: 60 }), (error: unknown) => {
      assert.ok(error instanceof OpenIdConnectError)
      assert.equal(error.failure, 'acr')
      assert.equal(error.code, 'ACR_MISSING')
      return true
    })
  })
})
