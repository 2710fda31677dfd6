/**
 * SaveTokens on a provider from the provider source (issue 28): against oidc-provider on loopback,
 * an access token expiring within the skew is refreshed with the refresh token through
 * `app.session.accessToken`, as for a configured scheme; once the provider is removed its
 * refresher is gone and the session keeps only what it holds (no refresh grant).
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'
import { addTokenRoute, getToken } from '../helpers/providers/access-token-route.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'

const SECRET = 'runtime-refresh-secret-PLANTED-58'
let definitions: RuntimeProviderDefinition[] = []

describe('SaveTokens on a runtime provider', () => {
  let idp: OidcIdp
  let app: ListeningApp

  before(async () => {
    idp = await startOidcIdp({ clientId: 'tokens-app', clientSecret: SECRET, accounts: { ada: { name: 'Ada' } }, refreshTokens: { accessTokenTtlSeconds: 30, refreshedAccessTokenTtlSeconds: 3600 } })
    app = await startProviderApp({}, addTokenRoute, { providerSource: async () => definitions })
    await idp.configure(`${app.origin}/signin-tokens`)
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  test('the access token is refreshed through the runtime provider; after its removal the session keeps the token it holds', async () => {
    definitions = [{ scheme: 'Tokens', settings: { Type: 'OpenIdConnect', Authority: idp.issuer, ClientId: 'tokens-app', ClientSecret: SECRET, SaveTokens: true, Scopes: ['openid', 'profile'] } }]
    assert.deepEqual((await app.app.authentication.reloadProviders()).added, ['Tokens'])
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=Tokens`)
    const callback = await session.request(await throughIdpLogin(session, start.location!, app.origin, 'ada'))
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const cookie = session.jar.header(new URL(app.origin))
    const grantsBefore = idp.grants.refresh_token ?? 0
    const refreshed = await getToken(app.origin, cookie)
    assert.equal(refreshed.status, 200)
    assert.equal((idp.grants.refresh_token ?? 0) - grantsBefore, 1, 'one refresh grant at the provider')

    definitions = []
    assert.deepEqual((await app.app.authentication.reloadProviders()).removed, ['Tokens'])
    const afterRemoval = await getToken(app.origin, cookie)
    assert.equal(afterRemoval.status, 200, 'the refreshed token is valid for an hour: handed out as stored')
    assert.equal(afterRemoval.token, refreshed.token)
    assert.equal((idp.grants.refresh_token ?? 0) - grantsBefore, 1, 'no further grant')
    assert.ok(!app.logs.text().includes(SECRET))
  })
})
