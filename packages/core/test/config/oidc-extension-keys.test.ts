/**
 * Startup validation of the OpenID Connect extension keys added for issue 11: BackChannelLogoutPath
 * follows the callback-path rules (local, unreserved characters, no collision) only when
 * BackChannelLogout is on, and ResponseMode accepts only query and form_post, naming the key.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadTestConfiguration } from '../helpers/app.js'

const P = 'ProjectTemplate:Authentication:Providers:OpenIdConnect'
const OIDC_VALID = { Enabled: true, Authority: 'https://idp.example.test', ClientId: 'client', ClientSecret: 'secret-value' }

function errorsOf (oidc: Record<string, string | boolean>): string[] {
  const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, ...oidc } } } } })
  return loaded.errors.map((problem) => problem.message)
}

describe('OpenID Connect extension keys', () => {
  test('BackChannelLogout with the default path, and ResponseMode form_post, are valid', () => {
    assert.deepEqual(errorsOf({ BackChannelLogout: true }), [])
    assert.deepEqual(errorsOf({ ResponseMode: 'form_post' }), [])
  })

  test('BackChannelLogoutPath must be local, and may not collide with CallbackPath or an application route', () => {
    assert.deepEqual(errorsOf({ BackChannelLogout: true, BackChannelLogoutPath: '//evil.example/logout' }),
      [`${P}:BackChannelLogoutPath must start with a single / and contain only unreserved URL characters.`])
    assert.deepEqual(errorsOf({ BackChannelLogout: true, BackChannelLogoutPath: '/SIGNIN-OIDC' }),
      [`${P}:BackChannelLogoutPath collides with ${P}:CallbackPath.`])
    assert.deepEqual(errorsOf({ BackChannelLogout: true, BackChannelLogoutPath: '/Account/backchannel' }),
      [`${P}:BackChannelLogoutPath collides with a route of the application.`])
  })

  test('BackChannelLogoutPath is not checked while BackChannelLogout is off', () => {
    assert.deepEqual(errorsOf({ BackChannelLogoutPath: '/signin-oidc' }), [])
  })

  test('ResponseMode accepts only query and form_post, naming the key', () => {
    const errors = errorsOf({ ResponseMode: 'fragment' })
    assert.equal(errors.length, 1)
    assert.ok(errors[0]?.startsWith(`${P}:ResponseMode`), errors[0])
  })
})
