/**
 * The posture appsettings.json ships with (auth-contract.md, "Authentication" rules 1 and 7):
 * closed by default. Every other test applies the closed posture itself (helpers/app.ts
 * CLOSED_POSTURE), so this file alone reads the shipped file, loaded as in production.
 * create-project-template replaces this file when it generates with `--authProvider none`.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfiguration } from '../src/config/load.js'
import { ROOT_KEY } from '../src/config/schema.js'
import { createLogger } from '../src/logger.js'
import { LogCapture, TEMPLATE_ROOT, testKeyRing } from './helpers/app.js'

interface ShippedPosture {
  Authentication: { Enabled?: boolean, Cookie?: { Enabled?: boolean } }
  Authorization: { RequireAuthenticatedUserByDefault?: boolean }
}

const shipped = (JSON.parse(readFileSync(join(TEMPLATE_ROOT, 'appsettings.json'), 'utf8')) as Record<string, ShippedPosture>)[ROOT_KEY]

test('appsettings.json enables authentication, the cookie session and the authenticated fallback', () => {
  assert.ok(shipped !== undefined, `appsettings.json has a ${ROOT_KEY} section`)
  assert.equal(shipped.Authentication.Enabled, true)
  assert.notEqual(shipped.Authentication.Cookie?.Enabled, false)
  assert.equal(shipped.Authorization.RequireAuthenticatedUserByDefault, true)
})

test('with the shipped settings, / redirects an anonymous browser to the login page and no authentication-disabled warning is logged', async (context) => {
  const loaded = loadConfiguration({ env: { XDG_CONFIG_HOME: '/nonexistent-test-config' }, contentRoot: TEMPLATE_ROOT })
  assert.deepEqual(loaded.errors, [])
  assert.equal(loaded.config.Authentication.Enabled, true)
  const logs = new LogCapture()
  const app = await buildApp({
    config: loaded.config,
    environmentName: loaded.environmentName,
    contentRoot: TEMPLATE_ROOT,
    logger: createLogger('debug', logs),
    keyRing: testKeyRing()
  })
  context.after(async () => { await app.close() })
  const response = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } })
  assert.equal(response.statusCode, 302)
  assert.match(String(response.headers.location), /^\/Account\/Login(\?|$)/)
  assert.equal(logs.events('authentication.disabled').length, 0)
})
