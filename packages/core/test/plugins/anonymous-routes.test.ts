/**
 * The reviewed public surface: the anonymous-route inventory built at ready() is pinned, so a new
 * public route fails this test until someone reviews it and adds it here. Static files are served
 * ahead of routing and are not routes; HEAD routes mirror GET and are left out.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { build } from '../helpers/app.js'

const REVIEWED_ANONYMOUS_ROUTES = [
  'GET /Account/AccessDenied',
  'GET /Account/Login',
  'GET /External/Challenge',
  'GET /Home/Error/:statusCode?',
  'GET /health',
  'GET /health/live',
  'GET /health/ready'
]

describe('anonymous route inventory', () => {
  test('the shipped app exposes exactly the reviewed anonymous routes', async (context) => {
    const t = await build(context, { testSignIn: false })
    assert.deepEqual(t.app.authorization.anonymousRoutes(), REVIEWED_ANONYMOUS_ROUTES)
  })

  test('a JwtBearer scheme adds exactly the protected-resource metadata (RFC 9728), and that of each resource under a path its Audiences name', async (context) => {
    const t = await build(context, {
      testSignIn: false,
      settings: {
        Hosting: { PublicOrigin: 'https://app.example.test' },
        Authentication: { Schemes: { Api: { Type: 'JwtBearer', Authority: 'https://login.example.test/tenant/v2.0', Audiences: ['api://orders', 'https://app.example.test/mcp', 'https://other.example.test/mcp2'] } } }
      }
    })
    assert.deepEqual(t.app.authorization.anonymousRoutes(), [...REVIEWED_ANONYMOUS_ROUTES, 'GET /.well-known/oauth-protected-resource', 'GET /.well-known/oauth-protected-resource/mcp'].sort())
  })

  test('a provider source adds exactly the reviewed parametric provider endpoints', async (context) => {
    const t = await build(context, { testSignIn: false, providerSource: async () => [] })
    assert.deepEqual(t.app.authorization.anonymousRoutes(), [
      ...REVIEWED_ANONYMOUS_ROUTES,
      'GET /Saml2/:scheme/Logout',
      'GET /Saml2/:scheme/Metadata',
      'GET /signin-:scheme',
      'GET /signout-callback-:scheme',
      'POST /Saml2/:scheme/Acs',
      'POST /Saml2/:scheme/Logout',
      'POST /backchannel-logout-:scheme',
      'POST /signin-:scheme'
    ].sort())
  })

  test('provisioning adds exactly the reviewed SCIM endpoints, each authenticated by its connection token instead of a session (issue 41)', async (context) => {
    const t = await build(context, { testSignIn: false, settings: { Provisioning: { Enabled: true, Connections: { Contoso: { Tenant: 'contoso' } } } } })
    const scim = (method: string, path: string): string => `${method} /scim/v2/:connection${path}`
    const readOnly = ['/ServiceProviderConfig', '/ResourceTypes', '/Schemas'].flatMap((path) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => scim(method, path)))
    const unsupported = ['/Bulk', '/Me'].flatMap((path) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => scim(method, path)))
    const resources = ['/Users', '/Groups'].flatMap((path) => [scim('GET', path), scim('POST', path), ...['GET', 'PUT', 'PATCH', 'DELETE'].map((method) => scim(method, `${path}/:id`))])
    assert.deepEqual(t.app.authorization.anonymousRoutes(), [
      ...REVIEWED_ANONYMOUS_ROUTES, ...readOnly, ...unsupported, ...resources, scim('GET', '/ResourceTypes/:id'), scim('GET', '/Schemas/:id')
    ].sort())
    // Anonymous to the authorization layer only: the connection token check refuses everyone else.
    for (const route of t.app.authorization.anonymousRoutes().filter((entry) => entry.includes('/scim/'))) {
      const [method, path] = route.split(' ') as [string, string]
      const answer = await t.app.inject({ method: method as 'GET', url: path.replace(':connection', 'Contoso').replace(':id', 'x') })
      assert.equal(answer.statusCode, 401, route)
    }
  })

  test('a new public route shows up in the inventory (the pin has teeth)', async (context) => {
    const t = await build(context, { testSignIn: false, configure: (app) => { app.get('/status', { config: { allowAnonymous: true } }, async () => 'ok') } })
    assert.deepEqual(t.app.authorization.anonymousRoutes(), [...REVIEWED_ANONYMOUS_ROUTES, 'GET /status'].sort())
  })

  test('a route with no metadata is not anonymous while the fallback is on', async (context) => {
    const t = await build(context, { testSignIn: false, configure: (app) => { app.get('/reports', async () => 'ok') } })
    assert.deepEqual(t.app.authorization.anonymousRoutes(), REVIEWED_ANONYMOUS_ROUTES)
  })
})
