/**
 * Pushed authorization requests (issue 36, item 4; RFC 9126) and `private_key_jwt` (item 2; RFC
 * 7523) against oidc-provider on loopback, at the protocol layer (src/oidc/): `Never` never pushes,
 * even when discovery names the endpoint and the provider requires PAR; `IfAvailable` pushes when
 * the endpoint exists and not otherwise; with PAR the browser's request carries only `client_id`
 * and `request_uri`, and the whole code flow completes; `Require` without the endpoint makes the
 * discovered metadata unusable, naming the setting; a pushed request the provider refuses is
 * `pushed_authorization`. The client authenticates with a signed assertion at the PAR and token
 * endpoints; a key the provider does not know is refused.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, exportJWK, jwtVerify, type JWK } from 'jose'
import { createHash } from 'node:crypto'
import { HttpSession } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp, type OidcIdpOptions } from '../helpers/providers/oidc-idp.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { Secret } from '../../src/config/secret.js'
import { buildAuthorizationRequest, completeAuthorizationCodeFlow, discoverProvider, newCorrelationValues, OpenIdConnectError, ProviderMetadata, PushedAuthorizationUnsupportedError, readClientAssertionKeys, type OpenIdConnectSettings, type PushedAuthorization } from '../../src/oidc/relying-party.js'
import { ProviderKeys } from '../../src/oidc/provider-keys.js'

const CLIENT_ID = 'federation-client'
const CLIENT_SECRET = 'PLANTED-federation-secret-7731'
// The app is never reached: the IdP's redirect back to it is where the browser part ends.
const APP_ORIGIN = 'http://127.0.0.1:9'
const REDIRECT_URI = `${APP_ORIGIN}/signin-oidc`
const SETTING = 'ProjectTemplate:Authentication:Providers:OpenIdConnect:PushedAuthorization'
const ACCOUNTS = { ada: { name: 'Ada' } }
const KEY_SETTINGS = { keys: 'ClientAssertionKeys', certificates: 'ClientAssertionCertificates' }

const idps: OidcIdp[] = []
after(async () => { for (const idp of idps) await idp.close() })

async function startIdp (options: Partial<OidcIdpOptions> = {}): Promise<OidcIdp> {
  const idp = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, ...options })
  idps.push(idp)
  await idp.configure(REDIRECT_URI)
  return idp
}

function settingsFor (idp: OidcIdp, extra: Partial<OpenIdConnectSettings> = {}): OpenIdConnectSettings {
  return { authority: idp.issuer, clientId: CLIENT_ID, clientSecret: new Secret(CLIENT_SECRET), idTokenSignedResponseAlg: 'RS256', allowInsecureRequests: true, pushedAuthorizationSetting: SETTING, ...extra }
}

/** The browser's authorization request for `pushed`, with the flow's values. */
async function authorizationRequest (settings: OpenIdConnectSettings, pushed: PushedAuthorization): Promise<{ url: URL, config: Awaited<ReturnType<typeof discoverProvider>>, state: string, nonce: string, codeVerifier: string }> {
  const config = await discoverProvider({ ...settings, pushedAuthorization: pushed })
  const { nonce, codeVerifier } = newCorrelationValues()
  const state = `state-${nonce.slice(0, 8)}`
  const url = await buildAuthorizationRequest(config, { redirectUri: REDIRECT_URI, scopes: ['openid', 'profile'], state, nonce, codeVerifier, pushedAuthorization: pushed, pushedAuthorizationSetting: SETTING })
  return { url, config, state, nonce, codeVerifier }
}

/** The browser through the IdP's login and back; then the callback at the protocol layer. */
async function signIn (settings: OpenIdConnectSettings, pushed: PushedAuthorization): Promise<{ sub: string, url: URL }> {
  const request = await authorizationRequest(settings, pushed)
  const callback = await throughIdpLogin(new HttpSession(), request.url, APP_ORIGIN, 'ada')
  const keys = new ProviderKeys({ jwksUri: request.config.serverMetadata().jwks_uri!, allowInsecureRequests: true, timeoutMs: 5000 })
  const result = await completeAuthorizationCodeFlow(request.config, callback, request, { keys, algorithm: 'RS256', clockToleranceSeconds: 60 })
  return { sub: result.providerSession.sub, url: request.url }
}

describe('PushedAuthorization against a provider that requires PAR', () => {
  test('Require: the browser carries only client_id and request_uri, and the sign-in completes', async () => {
    const idp = await startIdp({ pushedAuthorization: 'required' })
    const { sub, url } = await signIn(settingsFor(idp), 'Require')
    assert.equal(sub, 'ada')
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri'])
    assert.equal(url.searchParams.get('client_id'), CLIENT_ID)
    assert.match(url.searchParams.get('request_uri') ?? '', /^urn:ietf:params:oauth:request_uri:/)
    assert.equal(idp.pushedAuthorizationRequests, 1)
  })

  test('IfAvailable pushes when discovery names the endpoint', async () => {
    const idp = await startIdp({ pushedAuthorization: 'required' })
    const { url } = await signIn(settingsFor(idp), 'IfAvailable')
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri'])
    assert.equal(idp.pushedAuthorizationRequests, 1)
  })

  test('Never does not push although discovery names the endpoint: the full request goes through the browser (and this provider refuses it)', async () => {
    const idp = await startIdp({ pushedAuthorization: 'required' })
    const discovery = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json() as Record<string, unknown>
    assert.equal(typeof discovery.pushed_authorization_request_endpoint, 'string')
    assert.equal(discovery.require_pushed_authorization_requests, true)
    const { url } = await authorizationRequest(settingsFor(idp), 'Never')
    assert.equal(url.searchParams.get('request_uri'), null)
    assert.equal(url.searchParams.get('redirect_uri'), REDIRECT_URI)
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256')
    assert.equal(idp.pushedAuthorizationRequests, 0)
    const answer = await new HttpSession().request(url)
    assert.equal(answer.location?.origin, APP_ORIGIN)
    assert.equal(answer.location?.searchParams.get('error'), 'invalid_request')
  })
})

describe('PushedAuthorization against a provider without PAR', () => {
  test('IfAvailable does not push and the sign-in completes', async () => {
    const idp = await startIdp({ pushedAuthorization: 'disabled' })
    const { sub, url } = await signIn(settingsFor(idp), 'IfAvailable')
    assert.equal(sub, 'ada')
    assert.equal(url.searchParams.get('request_uri'), null)
    assert.equal(url.searchParams.get('scope'), 'openid profile')
  })

  test('Require: discovery fails with PAR_ENDPOINT_MISSING naming the setting, and the metadata stays unavailable', async () => {
    const idp = await startIdp({ pushedAuthorization: 'disabled' })
    await assert.rejects(discoverProvider({ ...settingsFor(idp), pushedAuthorization: 'Require' }), (error: unknown) => {
      assert.ok(error instanceof PushedAuthorizationUnsupportedError)
      assert.equal(error.code, 'PAR_ENDPOINT_MISSING')
      assert.equal(error.setting, SETTING)
      return true
    })
    const failures: string[] = []
    const metadata = new ProviderMetadata(async () => await discoverProvider({ ...settingsFor(idp), pushedAuthorization: 'Require' }), { onFailure: (reason) => { failures.push(reason) } })
    await metadata.refresh()
    metadata.stop()
    assert.deepEqual(metadata.status(), { available: false, reason: 'metadata_invalid' })
    assert.deepEqual(failures, ['metadata_invalid'])
  })
})

test('a pushed request the provider refuses (wrong client secret): pushed_authorization with the HTTP status and OAuth error, never the secret', async () => {
  const idp = await startIdp({ pushedAuthorization: 'required' })
  await assert.rejects(authorizationRequest(settingsFor(idp, { clientSecret: new Secret('PLANTED-wrong-secret') }), 'Require'), (error: unknown) => {
    assert.ok(error instanceof OpenIdConnectError)
    assert.equal(error.failure, 'pushed_authorization')
    assert.equal(error.diagnostics.httpStatus, 401)
    assert.equal(error.diagnostics.oauthError, 'invalid_client')
    assert.ok(!JSON.stringify(error.diagnostics).includes('PLANTED'))
    return true
  })
})

/** The client's public key as registered at the provider: its JWK with `kid` the RFC 7638 thumbprint the app sends. */
async function registeredJwk (key: ReturnType<typeof createSigningKey>): Promise<JWK> {
  const jwk = await exportJWK(key.certificate.publicKey)
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'RS256', use: 'sig' }
}

describe('private_key_jwt at a provider that registered the client\'s key', () => {
  const current = createSigningKey('client-current')
  const unregistered = createSigningKey('client-unregistered')

  async function keyIdp (): Promise<OidcIdp> {
    return await startIdp({ pushedAuthorization: 'required', tokenEndpointAuthMethod: 'private_key_jwt', clientJwks: { keys: [await registeredJwk(current)] } })
  }

  test('PAR and the token request are authenticated by assertions (x5t#S256, aud the issuer as one string, distinct jti); the sign-in completes', async () => {
    const idp = await keyIdp()
    const keys = readClientAssertionKeys(current.privateKeyPem, current.certificatePem, KEY_SETTINGS)
    const { sub } = await signIn(settingsFor(idp, { clientSecret: new Secret(''), tokenEndpointAuthMethod: 'private_key_jwt', clientAssertionKeys: keys }), 'Require')
    assert.equal(sub, 'ada')
    assert.equal(idp.clientAssertions.length, 2)
    const publicKeys = createLocalJWKSet({ keys: [await registeredJwk(current)] })
    const payloads = await Promise.all(idp.clientAssertions.map(async (assertion) => (await jwtVerify(assertion, publicKeys, { issuer: CLIENT_ID, subject: CLIENT_ID, audience: idp.issuer })).payload))
    assert.deepEqual(payloads.map((payload) => payload.aud), [idp.issuer, idp.issuer])
    assert.notEqual(payloads[0]?.jti, payloads[1]?.jti)
    for (const assertion of idp.clientAssertions) assert.equal(decodeProtectedHeader(assertion)['x5t#S256'], createHash('sha256').update(current.certificate.raw).digest('base64url'))
  })

  test('two keys, the newest (the later NotBefore) unknown to the provider: the push is refused as pushed_authorization invalid_client', async () => {
    const idp = await keyIdp()
    const newer = createSigningKey('client-newer', { notBefore: new Date(Date.now() - 1000), notAfter: new Date(Date.now() + 86_400_000) })
    const keys = readClientAssertionKeys(current.privateKeyPem + newer.privateKeyPem, current.certificatePem + newer.certificatePem, KEY_SETTINGS)
    await assert.rejects(authorizationRequest(settingsFor(idp, { tokenEndpointAuthMethod: 'private_key_jwt', clientAssertionKeys: keys }), 'Require'), (error: unknown) => {
      assert.ok(error instanceof OpenIdConnectError)
      assert.equal(error.failure, 'pushed_authorization')
      assert.equal(error.diagnostics.oauthError, 'invalid_client')
      return true
    })
  })

  test('a key the provider never registered: the token request is refused as token invalid_client (no PAR)', async () => {
    const idp = await startIdp({ tokenEndpointAuthMethod: 'private_key_jwt', clientJwks: { keys: [await registeredJwk(current)] } })
    const keys = readClientAssertionKeys(unregistered.privateKeyPem, '', KEY_SETTINGS)
    await assert.rejects(signIn(settingsFor(idp, { tokenEndpointAuthMethod: 'private_key_jwt', clientAssertionKeys: keys }), 'Never'), (error: unknown) => {
      assert.ok(error instanceof OpenIdConnectError)
      assert.equal(error.failure, 'token')
      assert.equal(error.diagnostics.oauthError, 'invalid_client')
      return true
    })
  })
})
