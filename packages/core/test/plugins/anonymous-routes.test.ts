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

  test('a new public route shows up in the inventory (the pin has teeth)', async (context) => {
    const t = await build(context, { testSignIn: false, configure: (app) => { app.get('/status', { config: { allowAnonymous: true } }, async () => 'ok') } })
    assert.deepEqual(t.app.authorization.anonymousRoutes(), [...REVIEWED_ANONYMOUS_ROUTES, 'GET /status'].sort())
  })

  test('a route with no metadata is not anonymous while the fallback is on', async (context) => {
    const t = await build(context, { testSignIn: false, configure: (app) => { app.get('/reports', async () => 'ok') } })
    assert.deepEqual(t.app.authorization.anonymousRoutes(), REVIEWED_ANONYMOUS_ROUTES)
  })
})
