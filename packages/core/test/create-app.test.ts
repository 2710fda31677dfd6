/**
 * The authentication-disabled posture warning: logged exactly once at startup as a structured
 * event naming ProjectTemplate:Authentication:Enabled when authentication is off, never when on;
 * the enabled providers are logged by name only.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { AUTHENTICATION_DISABLED_MESSAGE } from '../src/create-app.js'
import { build } from './helpers/app.js'

const OPEN_POSTURE = { Authentication: { Enabled: false, Cookie: { Enabled: false } }, Authorization: { RequireAuthenticatedUserByDefault: false } }

describe('authentication-disabled warning', () => {
  test('is logged exactly once, as a warning with a stable event name and the key, when Authentication:Enabled is false', async (context) => {
    const t = await build(context, { settings: { ...OPEN_POSTURE, Authentication: { ...OPEN_POSTURE.Authentication, Providers: { OpenIdConnect: { ClientSecret: 'PLANTED-SECRET-7f3a9c' } } } }, testSignIn: false })
    for (let i = 0; i < 3; i++) await t.app.inject({ url: '/' })
    const warnings = t.logs.events('authentication.disabled')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.level, 40)
    assert.equal(warnings[0]?.key, 'ProjectTemplate:Authentication:Enabled')
    assert.equal(warnings[0]?.msg, AUTHENTICATION_DISABLED_MESSAGE)
    assert.match(AUTHENTICATION_DISABLED_MESSAGE, /ProjectTemplate:Authentication:Enabled/)
    assert.match(AUTHENTICATION_DISABLED_MESSAGE, /intentional and supported/)
    assert.match(AUTHENTICATION_DISABLED_MESSAGE, /Review network exposure and the authorization expectations/)
    assert.ok(!t.logs.text().includes('PLANTED-SECRET-7f3a9c'))
  })

  for (const nodeEnv of ['production', 'development']) {
    test(`is never logged when Authentication:Enabled is true (${nodeEnv})`, async (context) => {
      const t = await build(context, { nodeEnv })
      await t.app.inject({ url: '/' })
      assert.equal(t.logs.events('authentication.disabled').length, 0)
      assert.ok(!t.logs.text().includes('authentication is disabled'))
    })
  }

  test('startup logs the enabled providers by name (none by default)', async (context) => {
    const t = await build(context)
    assert.deepEqual(t.logs.events('authentication.providers').map((record) => record.enabled), [[]])
  })
})
