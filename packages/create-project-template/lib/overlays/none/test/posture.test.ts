/**
 * The posture appsettings.json ships with: generated with `--authProvider none`
 * (auth-contract.md, "Authentication" rule 7, "States and transitions" rule 2). Authentication,
 * the cookie session and the authenticated fallback are off, so unannotated routes are public and
 * one warning is logged at startup. Every other test applies the closed posture itself
 * (helpers/app.ts CLOSED_POSTURE), so this file alone reads the shipped file, loaded as in
 * production. To return to the closed posture, see README.md.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AUTHENTICATION_DISABLED_MESSAGE, buildApp } from '../src/app.js'
import { loadConfiguration } from '../src/config/load.js'
import { ROOT_KEY } from '../src/config/schema.js'
import { createLogger } from '../src/logger.js'
import { LogCapture, TEMPLATE_ROOT, testKeyRing } from './helpers/app.js'

interface ShippedPosture {
  Authentication: { Enabled?: boolean, Cookie?: { Enabled?: boolean } }
  Authorization: { RequireAuthenticatedUserByDefault?: boolean }
}

const shipped = (JSON.parse(readFileSync(join(TEMPLATE_ROOT, 'appsettings.json'), 'utf8')) as Record<string, ShippedPosture>)[ROOT_KEY]

test('appsettings.json turns authentication, the cookie session and the authenticated fallback off', () => {
  assert.ok(shipped !== undefined, `appsettings.json has a ${ROOT_KEY} section`)
  assert.equal(shipped.Authentication.Enabled, false)
  assert.equal(shipped.Authentication.Cookie?.Enabled, false)
  assert.equal(shipped.Authorization.RequireAuthenticatedUserByDefault, false)
})

test('with the shipped settings, / is public and the authentication-disabled warning is logged exactly once', async () => {
  const loaded = loadConfiguration({ env: { XDG_CONFIG_HOME: '/nonexistent-test-config' }, contentRoot: TEMPLATE_ROOT })
  assert.deepEqual(loaded.errors, [])
  assert.equal(loaded.config.Authentication.Enabled, false)
  const logs = new LogCapture()
  const app = await buildApp({
    config: loaded.config,
    environmentName: loaded.environmentName,
    contentRoot: TEMPLATE_ROOT,
    logger: createLogger('debug', logs),
    keyRing: testKeyRing()
  })
  try {
    const response = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 200)
    const warnings = logs.events('authentication.disabled')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.level, 40)
    assert.equal(warnings[0]?.key, `${ROOT_KEY}:Authentication:Enabled`)
    assert.equal(warnings[0]?.msg, AUTHENTICATION_DISABLED_MESSAGE)
  } finally {
    await app.close()
  }
})
