/**
 * The app's OpenID Connect sign-in with pushed authorization requests (issue 36, item 4) and
 * private_key_jwt (item 2), end to end against oidc-provider on loopback: the browser's
 * authorization request carries only client_id and request_uri; the default (Never) does not push
 * even against a provider that requires it; Require against a provider without a PAR endpoint
 * keeps the provider unavailable with one log line naming the key; a refused push is the login
 * page's failure with the class pushed_authorization and no session; the private key never
 * reaches the log.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { calculateJwkThumbprint, exportJWK } from 'jose'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { startOidcPair, type OidcPair, type OidcPairOptions } from '../helpers/providers/oidc-pair.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp } from '../helpers/providers/provider-app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { waitFor } from '../helpers/wait.js'

const P = 'ProjectTemplate:Authentication:Providers:OpenIdConnect'
const CLIENT_ID = 'federation-app'
const CLIENT_SECRET = 'PLANTED-federation-app-secret-5512'
const ACCOUNTS = { ada: { name: 'Ada' } }
const clientKey = createSigningKey('federation-app')

const closers: Array<() => Promise<void>> = []
after(async () => { for (const close of closers) await close() })

async function pair (options: OidcPairOptions): Promise<OidcPair> {
  const started = await startOidcPair(options)
  closers.push(async () => { await started.app.close(); await started.idp.close() })
  return started
}

describe('PushedAuthorization Require with private_key_jwt at a provider that requires PAR', () => {
  test('the browser carries only client_id and request_uri; the sign-in completes with assertions; the key is never logged', async () => {
    const jwk = await exportJWK(clientKey.certificate.publicKey)
    const started = await pair({
      idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, pushedAuthorization: 'required', tokenEndpointAuthMethod: 'private_key_jwt', clientJwks: { keys: [{ ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'RS256', use: 'sig' }] } },
      openIdConnect: { ClientSecret: '', TokenEndpointAuthMethod: 'private_key_jwt', ClientAssertionKeys: [clientKey.privateKeyPem], ClientAssertionCertificates: [clientKey.certificatePem], PushedAuthorization: 'Require' }
    })
    const session = new HttpSession()
    const start = await session.request(`${started.app.origin}/External/Challenge?provider=OpenIdConnect`)
    assert.equal(start.response.status, 302)
    assert.equal(start.location?.origin, started.idp.issuer)
    assert.deepEqual([...start.location!.searchParams.keys()].sort(), ['client_id', 'request_uri'])
    const callback = await session.request(await throughIdpLogin(session, start.location!, started.app.origin, 'ada'))
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.equal(started.idp.pushedAuthorizationRequests, 1)
    assert.equal(started.idp.clientAssertions.length, 2)
    const keyLines = clientKey.privateKeyPem.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'))
    assert.deepEqual(findPlanted(started.app.logs.text(), [...keyLines, ...started.idp.clientAssertions]), [])
  })
})

test('PushedAuthorization unset (Never) against a provider that requires PAR: the app does not push; the full request goes through the browser', async () => {
  const started = await pair({ idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, pushedAuthorization: 'required' } })
  const start = await new HttpSession().request(`${started.app.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.location?.searchParams.get('request_uri'), null)
  assert.equal(start.location?.searchParams.get('code_challenge_method'), 'S256')
  assert.equal(started.idp.pushedAuthorizationRequests, 0)
})

test('a push the provider refuses (wrong client secret): the login page\'s failure, one log line with the class pushed_authorization, no session', async () => {
  const started = await pair({ idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, pushedAuthorization: 'required' }, openIdConnect: { ClientSecret: 'PLANTED-wrong-secret-0291', PushedAuthorization: 'IfAvailable' } })
  const start = await new HttpSession().request(`${started.app.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.location?.pathname + (start.location?.search ?? ''), '/Account/Login?failure=failed')
  assert.deepEqual(sessionCookiesSet(start.response), [])
  const lines = started.app.logs.events('external.sign_in.failed')
  assert.equal(lines.length, 1)
  assert.equal(lines[0]?.failure, 'pushed_authorization')
  assert.equal(lines[0]?.oauthError, 'invalid_client')
  assert.deepEqual(findPlanted(started.app.logs.text(), ['PLANTED-wrong-secret-0291', CLIENT_SECRET]), [])
})

test('PushedAuthorization Require at a provider without a PAR endpoint: not ready, one log line naming the key, the challenge answers the unavailable page', async () => {
  const idp = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, pushedAuthorization: 'disabled' })
  const app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, PushedAuthorization: 'Require' } } } })
  closers.push(async () => { await app.close(); await idp.close() })
  await idp.configure(`${app.origin}/signin-oidc`)
  await waitFor(() => app.logs.events('external.metadata.failed').length > 0, 'the metadata failure', 10_000)
  const line = app.logs.events('external.metadata.failed')[0]
  assert.equal(line?.setting, `${P}:PushedAuthorization`)
  assert.equal(line?.errorCode, 'PAR_ENDPOINT_MISSING')
  assert.equal(line?.reason, 'metadata_invalid')
  const ready = await fetch(`${app.origin}/health/ready`)
  assert.equal(ready.status, 503)
  const health = await ready.json() as { checks: { providers: { reasons: string[] } } }
  assert.deepEqual(health.checks.providers.reasons, ['metadata_invalid'])
  const start = await new HttpSession().request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.response.status, 503)
  assert.equal(start.location, undefined)
  assert.match(start.body, /Sign-in provider unavailable/)
})
