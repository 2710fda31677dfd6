/**
 * OpenID Connect client authentication (issue 23, item 5), against oidc-provider advertising only
 * client_secret_post and reading Basic credentials without form-decoding them, as LemonLDAP::NG
 * 2.16 does (the trap: a secret with `+`, `/` or `=` never matches after RFC 6749 section 2.3.1
 * encoding): with TokenEndpointAuthMethod unset the method comes from discovery's
 * token_endpoint_auth_methods_supported and the sign-in succeeds; set to client_secret_basic it
 * is refused, and the 401 whose `WWW-Authenticate: Basic realm=...` has no `error` is logged with
 * `oauthError: invalid_client` read from the JSON body. BackChannelLogout against a provider that
 * does not advertise back-channel logout logs a startup warning.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { findPlanted, HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { startOidcPair, type OidcPair, type OidcPairOptions } from '../helpers/providers/oidc-pair.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { waitFor } from '../helpers/wait.js'

// The characters LemonLDAP::NG 2.16 does not decode from Basic credentials.
const CLIENT_ID = 'lemon-client-id'
const CLIENT_SECRET = 'PLANTED-a+b/c=d-e+f/g=='
const ACCOUNTS = { ada: { name: 'Ada' } }
const POST_ONLY = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, tokenEndpointAuthMethod: 'client_secret_post', clientAuthMethods: ['client_secret_post'], basicCredentialsNotDecoded: true } as const

async function signIn (pair: OidcPair): Promise<Exchange> {
  const session = new HttpSession()
  const start = await session.request(`${pair.app.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.response.status, 302)
  return await session.request(await throughIdpLogin(session, start.location!, pair.app.origin, 'ada'))
}

describe('a provider that accepts only client_secret_post', () => {
  const pairs: OidcPair[] = []
  async function pair (options: Partial<OidcPairOptions> = {}): Promise<OidcPair> {
    const started = await startOidcPair({ idp: POST_ONLY, ...options })
    pairs.push(started)
    return started
  }
  after(async () => {
    for (const started of pairs) { await started.app.close(); await started.idp.close() }
  })

  test('TokenEndpointAuthMethod unset: client_secret_post is chosen from discovery and the sign-in succeeds', async () => {
    const chosen = await pair()
    const discovery = await (await fetch(`${chosen.idp.issuer}/.well-known/openid-configuration`)).json() as { token_endpoint_auth_methods_supported?: string[] }
    assert.deepEqual(discovery.token_endpoint_auth_methods_supported, ['client_secret_post'])
    const callback = await signIn(chosen)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.deepEqual(findPlanted(chosen.app.logs.text(), [CLIENT_SECRET]), [])
  })

  test('TokenEndpointAuthMethod client_secret_post set explicitly signs in', async () => {
    const explicit = await pair({ openIdConnect: { TokenEndpointAuthMethod: 'client_secret_post' } })
    const callback = await signIn(explicit)
    assert.equal(callback.location?.pathname, '/')
  })

  test('TokenEndpointAuthMethod client_secret_basic: refused as token with oauthError invalid_client and HTTP 401; no session', async () => {
    const basic = await pair({ openIdConnect: { TokenEndpointAuthMethod: 'client_secret_basic' } })
    const callback = await signIn(basic)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    const line = basic.app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'token')
    assert.equal(line?.oauthError, 'invalid_client')
    assert.equal(line?.httpStatus, 401)
    assert.equal(line?.errorCode, 'OAUTH_WWW_AUTHENTICATE_CHALLENGE')
    assert.deepEqual(findPlanted(basic.app.logs.text(), [CLIENT_SECRET]), [])
  })
})

describe('a 401 challenge without an error parameter (LemonLDAP::NG: WWW-Authenticate: Basic realm=...)', () => {
  let idp: TokenIdp
  let app: ListeningApp
  before(async () => {
    idp = await startTokenIdp(CLIENT_ID)
    app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } } } })
    await waitUntilReady(app.origin)
  })
  after(async () => { await app?.close(); await idp?.close() })

  test('the OAuth error code is read from the JSON body: oauthError invalid_client, never the description', async () => {
    idp.answer = () => ({ status: 401, headers: { 'www-authenticate': 'Basic realm="lemonldap"' }, body: { error: 'invalid_client', error_description: 'PLANTED-DESCRIPTION-91' } })
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    const state = start.location?.searchParams.get('state') ?? ''
    const callback = await session.request(`${app.origin}/signin-oidc?code=c-${randomBytes(8).toString('hex')}&state=${state}`)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
    const line = app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'token')
    assert.equal(line?.httpStatus, 401)
    assert.equal(line?.oauthError, 'invalid_client')
    assert.equal(line?.errorCode, 'OAUTH_WWW_AUTHENTICATE_CHALLENGE')
    assert.deepEqual(findPlanted(app.logs.text(), [CLIENT_SECRET, 'PLANTED-DESCRIPTION-91']), [])
  })
})

describe('BackChannelLogout and the provider\'s discovery', () => {
  const pairs: OidcPair[] = []
  after(async () => {
    for (const started of pairs) { await started.app.close(); await started.idp.close() }
  })

  test('a provider that does not advertise backchannel_logout_supported: one startup warning naming the setting', async () => {
    const started = await startOidcPair({ idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS }, openIdConnect: { BackChannelLogout: true } })
    pairs.push(started)
    await waitFor(() => started.app.logs.events('external.metadata.loaded').length > 0, 'metadata to load', 10_000)
    const warnings = started.app.logs.events('oidc.back_channel_logout.unsupported')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.level, 40)
    assert.equal(warnings[0]?.setting, 'ProjectTemplate:Authentication:Providers:OpenIdConnect:BackChannelLogout')
  })

  test('control: a provider advertising back-channel logout gets no warning', async () => {
    const started = await startOidcPair({
      idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, backChannelLogoutUri: (redirectUri) => redirectUri.replace('/signin-oidc', '/backchannel-logout-oidc') },
      openIdConnect: { BackChannelLogout: true }
    })
    pairs.push(started)
    await waitFor(() => started.app.logs.events('external.metadata.loaded').length > 0, 'metadata to load', 10_000)
    assert.equal(started.app.logs.events('oidc.back_channel_logout.unsupported').length, 0)
  })
})
