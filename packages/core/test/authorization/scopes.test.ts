/**
 * Scopes are not permissions (issue 40, item 2). The starter app (template/src/app.ts) with JwtBearer
 * schemes against real issuers on loopback: oidc-provider issuing a client-credentials token for
 * the scope `application.manage`, and an issuer whose user tokens jose mints (a user with no role
 * who asked for that scope). Neither passes the template's ManageApplicationPermission route; a
 * scope policy still passes the scope; an explicit ClaimMappings entry (`scope` -> `permission`)
 * brings back the old mapping for an app that wants it.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT } from 'jose'
import { scopePolicy } from '../../src/authorization/scopes.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { buildBearerApp, who } from '../helpers/bearer-app.js'
import type { TestSettings } from '../../src/testing/app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const RESOURCE = 'https://api.example.test/'
const PARTNER_AUDIENCE = 'api://orders'
const MANAGEMENT = '/api/application-information/management'

describe('a token granting the scope application.manage', () => {
  let resourceIdp: ResourceIdp
  let partnerIdp: TokenIdp
  const apps: TestApp[] = []

  before(async () => {
    resourceIdp = await startResourceIdp({ resource: RESOURCE, scopes: ['application.manage', 'orders.read'], clients: { 'reporting-tool': 'reporting-secret' } })
    partnerIdp = await startTokenIdp('unused')
  })
  after(async () => {
    for (const built of apps) await built.app.close()
    await resourceIdp?.close()
    await partnerIdp?.close()
  })

  /** The starter app with the two JwtBearer schemes; `claimMappings` for both. */
  async function starterApp (claimMappings: Record<string, string> = {}): Promise<TestApp> {
    const schemes: TestSettings = {
      Api: { Type: 'JwtBearer', Authority: resourceIdp.issuer, Audiences: [RESOURCE], ClaimMappings: claimMappings },
      Partner: { Type: 'JwtBearer', Issuer: partnerIdp.issuer, JwksUri: `${partnerIdp.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE], ClaimMappings: claimMappings }
    }
    const built = await buildTestApp({ nodeEnv: 'Development', settings: { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: schemes } } })
    apps.push(built)
    return built
  }

  /** A user with no role who asked the IdP for the scope (`scp`, as Entra ID and Okta send it). */
  async function userToken (): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ iss: partnerIdp.issuer, aud: PARTNER_AUDIENCE, sub: 'eve', azp: 'spa-client', iat: now, exp: now + 300, scp: 'application.manage' })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(partnerIdp.signingKey)
  }

  const get = async (built: TestApp, url: string, token: string): Promise<number> =>
    (await built.app.inject({ url, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })).statusCode

  test('is refused (403) by the starter app\'s ManageApplicationPermission route, from a client and from a user with no role', async () => {
    const built = await starterApp()
    const clientToken = await resourceIdp.clientCredentialsToken('reporting-tool', 'application.manage')
    const user = await userToken()
    assert.equal(await get(built, '/api/application-information', clientToken), 200, 'the token itself is valid')
    assert.equal(await get(built, MANAGEMENT, clientToken), 403, 'a client granted the scope is not given the permission')
    assert.equal(await get(built, '/api/application-information', user), 200)
    assert.equal(await get(built, MANAGEMENT, user), 403, 'a user who asked for the scope is not given the permission')
    const refused = await built.app.inject({ url: MANAGEMENT, headers: { authorization: `Bearer ${user}` } })
    assert.equal(refused.json().code, 'APP_ERR_BEARER_SCOPE')
  })

  test('an explicit ClaimMappings entry (scope and scp -> permission) brings the old mapping back', async () => {
    const built = await starterApp({ scope: 'permission', scp: 'permission' })
    assert.equal(await get(built, MANAGEMENT, await resourceIdp.clientCredentialsToken('reporting-tool', 'orders.read application.manage')), 200)
    assert.equal(await get(built, MANAGEMENT, await userToken()), 200)
    assert.equal(await get(built, MANAGEMENT, await resourceIdp.clientCredentialsToken('reporting-tool', 'orders.read')), 403, 'only the mapped value')
  })

  test('a scope policy still passes the scope, read from the principal\'s application:scope claims', async () => {
    const built = await buildBearerApp({
      schemes: { Api: { Authority: resourceIdp.issuer, Audiences: [RESOURCE] } },
      policies: [scopePolicy('app.Manage', 'application.manage')],
      routes: (app) => {
        app.get('/api/manage', { config: { authorize: 'app.Manage' } }, async (request) => ({
          ...who(request),
          scopeClaims: request.user?.claims.filter((claim) => claim.type === 'application:scope').map((claim) => claim.value),
          permissions: request.user?.claims.filter((claim) => claim.type === 'application:permission').map((claim) => claim.value)
        }))
      }
    })
    apps.push(built)
    const granted = await built.app.inject({ url: '/api/manage', headers: { authorization: `Bearer ${await resourceIdp.clientCredentialsToken('reporting-tool', 'orders.read application.manage')}` } })
    assert.equal(granted.statusCode, 200)
    assert.deepEqual(granted.json().scopeClaims, ['orders.read', 'application.manage'])
    assert.deepEqual(granted.json().permissions, [])
    const without = await built.app.inject({ url: '/api/manage', headers: { authorization: `Bearer ${await resourceIdp.clientCredentialsToken('reporting-tool', 'orders.read')}` } })
    assert.equal(without.statusCode, 403)
    assert.equal(without.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="application.manage", resource_metadata="http://localhost:80/.well-known/oauth-protected-resource"')
  })
})
