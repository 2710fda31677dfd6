/**
 * A `private_key_jwt` assertion can be redeemed only by the server it was signed for (issue 40,
 * item 18; the OpenID Foundation's 2025 private_key_jwt advisory): its `aud` is the provider's
 * issuer identifier as one string, so a hostile provider whose discovery names another server's
 * token endpoint receives, at its own PAR endpoint, an assertion that other server refuses. The
 * attack is played with a real `oidc-provider` (the victim, which has the same client and key
 * registered) and a hostile issuer on loopback. `ClientAssertionAudience: Endpoint` (configured
 * providers only) names the one endpoint each assertion is sent to. For a provider from the
 * provider source, a discovery naming an endpoint off the issuer's origin is refused.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { calculateJwkThumbprint, decodeJwt, exportJWK, type JWK } from 'jose'
import { HttpSession } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startHostileIssuer, type HostileIssuer } from '../helpers/providers/hostile-issuer.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { Secret } from '../../src/config/secret.js'
import { buildAuthorizationRequest, completeAuthorizationCodeFlow, discoverProvider, EndpointOriginError, newCorrelationValues, OpenIdConnectError, readClientAssertionKeys, type OpenIdConnectSettings } from '../../src/oidc/relying-party.js'
import { ProviderKeys } from '../../src/oidc/provider-keys.js'

const CLIENT_ID = 'shared-client'
const APP_ORIGIN = 'http://127.0.0.1:9'
const REDIRECT_URI = `${APP_ORIGIN}/signin-oidc`
const key = createSigningKey('client-shared-key')
const keys = readClientAssertionKeys(key.privateKeyPem, key.certificatePem, { keys: 'ClientAssertionKeys', certificates: 'ClientAssertionCertificates' })

async function registeredJwk (): Promise<JWK> {
  const jwk = await exportJWK(key.certificate.publicKey)
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'RS256', use: 'sig' }
}

function settingsFor (authority: string, extra: Partial<OpenIdConnectSettings> = {}): OpenIdConnectSettings {
  return { authority, clientId: CLIENT_ID, clientSecret: new Secret(''), idTokenSignedResponseAlg: 'RS256', allowInsecureRequests: true, tokenEndpointAuthMethod: 'private_key_jwt', clientAssertionKeys: keys, pushedAuthorization: 'Require', ...extra }
}

async function pushedRequest (settings: OpenIdConnectSettings): Promise<URL> {
  const config = await discoverProvider(settings)
  const { nonce, codeVerifier } = newCorrelationValues()
  return await buildAuthorizationRequest(config, { redirectUri: REDIRECT_URI, scopes: ['openid'], state: 'state-1', nonce, codeVerifier, pushedAuthorization: 'Require' })
}

/** What the hostile server does with an assertion it received: push an authorization request as the app at the victim. */
async function replayAtVictim (victim: OidcIdp, assertion: string): Promise<number> {
  const discovery = await (await fetch(`${victim.issuer}/.well-known/openid-configuration`)).json() as { pushed_authorization_request_endpoint: string }
  const response = await fetch(discovery.pushed_authorization_request_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: CLIENT_ID,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256'
    })
  })
  await response.arrayBuffer()
  return response.status
}

describe('one key at two providers, one of them hostile', () => {
  let victim: OidcIdp
  let hostile: HostileIssuer
  before(async () => {
    victim = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: 'unused-secret', accounts: { ada: {} }, pushedAuthorization: 'enabled', tokenEndpointAuthMethod: 'private_key_jwt', clientJwks: { keys: [await registeredJwk()] } })
    await victim.configure(REDIRECT_URI)
    hostile = await startHostileIssuer()
  })
  after(async () => { await victim?.close(); await hostile?.close() })

  test('the hostile discovery names the victim\'s token endpoint: the assertion pushed to the hostile PAR endpoint names the hostile issuer, one string, and the victim refuses it', async () => {
    hostile.document = { token_endpoint: `${victim.issuer}/token` }
    const url = await pushedRequest(settingsFor(hostile.issuer))
    assert.equal(url.searchParams.get('request_uri'), 'urn:ietf:params:oauth:request_uri:hostile')
    const assertion = hostile.pushed.at(-1)?.get('client_assertion') ?? ''
    assert.equal(decodeJwt(assertion).aud, hostile.issuer)
    assert.equal(await replayAtVictim(victim, assertion), 401)
  })

  test('a provider from the provider source with that discovery: refused before any request to its endpoints, naming token_endpoint', async () => {
    hostile.document = { token_endpoint: `${victim.issuer}/token` }
    const before = hostile.pushed.length
    await assert.rejects(discoverProvider(settingsFor(hostile.issuer, { sameOriginEndpoints: true })), (error: unknown) => {
      assert.ok(error instanceof EndpointOriginError)
      assert.equal(error.code, 'ENDPOINT_OFF_ISSUER_ORIGIN')
      assert.equal(error.endpoint, 'token_endpoint')
      assert.ok(!error.message.includes(victim.issuer))
      return true
    })
    assert.equal(hostile.pushed.length, before)
  })

  test('from the provider source: keys, PAR or logout endpoints elsewhere are refused too; a userinfo endpoint elsewhere is left unused and said', async () => {
    for (const member of ['jwks_uri', 'pushed_authorization_request_endpoint', 'end_session_endpoint', 'authorization_endpoint', 'introspection_endpoint']) {
      hostile.document = { [member]: `${victim.issuer}/elsewhere` }
      await assert.rejects(discoverProvider(settingsFor(hostile.issuer, { sameOriginEndpoints: true })), (error: unknown) => error instanceof EndpointOriginError && error.endpoint === member)
    }
    hostile.document = { userinfo_endpoint: 'https://graph.example.test/oidc/userinfo' }
    const ignored: string[] = []
    const config = await discoverProvider(settingsFor(hostile.issuer, { sameOriginEndpoints: true, onEndpointIgnored: (endpoint) => { ignored.push(endpoint) } }))
    assert.deepEqual(ignored, ['userinfo_endpoint'])
    assert.equal(config.serverMetadata().userinfo_endpoint, undefined)
    assert.equal(config.serverMetadata().token_endpoint, `${hostile.issuer}/token`)
  })

  test('a configured provider keeps its discovery as it is (endpoints on other hosts are the operator\'s choice)', async () => {
    hostile.document = { userinfo_endpoint: 'https://graph.example.test/oidc/userinfo' }
    const config = await discoverProvider(settingsFor(hostile.issuer))
    assert.equal(config.serverMetadata().userinfo_endpoint, 'https://graph.example.test/oidc/userinfo')
  })
})

describe('the audience at a real provider', () => {
  let idp: OidcIdp
  before(async () => {
    idp = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: 'unused-secret', accounts: { ada: {} }, pushedAuthorization: 'required', tokenEndpointAuthMethod: 'private_key_jwt', clientJwks: { keys: [await registeredJwk()] } })
    await idp.configure(REDIRECT_URI)
  })
  after(async () => { await idp?.close() })

  async function signIn (settings: OpenIdConnectSettings): Promise<void> {
    const config = await discoverProvider(settings)
    const { nonce, codeVerifier } = newCorrelationValues()
    const url = await buildAuthorizationRequest(config, { redirectUri: REDIRECT_URI, scopes: ['openid'], state: 'state-2', nonce, codeVerifier, pushedAuthorization: 'Require' })
    const callback = await throughIdpLogin(new HttpSession(), url, APP_ORIGIN, 'ada')
    const providerKeys = new ProviderKeys({ jwksUri: config.serverMetadata().jwks_uri!, allowInsecureRequests: true, timeoutMs: 5000 })
    const result = await completeAuthorizationCodeFlow(config, callback, { state: 'state-2', nonce, codeVerifier }, { keys: providerKeys, algorithm: 'RS256', clockToleranceSeconds: 60 })
    assert.equal(result.providerSession.sub, 'ada')
  }

  test('Issuer (the default): the PAR and token assertions each name the issuer as one string, with their own jti', async () => {
    const before = idp.clientAssertions.length
    await signIn(settingsFor(idp.issuer))
    const payloads = idp.clientAssertions.slice(before).map((assertion) => decodeJwt(assertion))
    assert.deepEqual(payloads.map((payload) => payload.aud), [idp.issuer, idp.issuer])
    assert.notEqual(payloads[0]?.jti, payloads[1]?.jti)
  })

  test('Endpoint (a configured provider\'s opt-in): the PAR assertion names the PAR endpoint, the token assertion the token endpoint', async () => {
    const before = idp.clientAssertions.length
    await signIn(settingsFor(idp.issuer, { clientAssertionAudience: 'Endpoint' }))
    const discovery = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json() as { pushed_authorization_request_endpoint: string, token_endpoint: string }
    assert.deepEqual(idp.clientAssertions.slice(before).map((assertion) => decodeJwt(assertion).aud), [discovery.pushed_authorization_request_endpoint, discovery.token_endpoint])
  })
})

describe('the PAR answer\'s request_uri (issue 40, item 21)', () => {
  let hostile: HostileIssuer
  before(async () => { hostile = await startHostileIssuer() })
  after(async () => { await hostile?.close() })

  const refused: Array<{ name: string, requestUri: unknown }> = [
    { name: '200,000 characters', requestUri: `urn:ietf:params:oauth:request_uri:${'a'.repeat(200_000)}` },
    { name: '1,025 characters', requestUri: `urn:ietf:params:oauth:request_uri:${'a'.repeat(1025 - 34)}` },
    { name: 'a space inside', requestUri: 'urn:ietf:params:oauth:request_uri:a b' },
    { name: 'a line break inside', requestUri: 'urn:ietf:params:oauth:request_uri:a\r\nSet-Cookie: x=1' },
    { name: 'no scheme', requestUri: 'request-reference-123' },
    { name: 'non-ASCII characters', requestUri: 'urn:ietf:params:oauth:request_uri:é' }
  ]
  for (const entry of refused) {
    test(`${entry.name}: refused as pushed_authorization, never copied into a redirect`, async () => {
      hostile.requestUri = entry.requestUri
      await assert.rejects(pushedRequest(settingsFor(hostile.issuer)), (error: unknown) => {
        assert.ok(error instanceof OpenIdConnectError)
        assert.equal(error.failure, 'pushed_authorization')
        assert.equal(error.code, 'PAR_REQUEST_URI_INVALID')
        return true
      })
    })
  }

  test('1,024 characters, and an https request_uri: accepted', async () => {
    for (const requestUri of [`urn:ietf:params:oauth:request_uri:${'a'.repeat(1024 - 34)}`, 'https://idp.example.test/par/requests/abc?x=1']) {
      hostile.requestUri = requestUri
      assert.equal((await pushedRequest(settingsFor(hostile.issuer))).searchParams.get('request_uri'), requestUri)
    }
  })
})
