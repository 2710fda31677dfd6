/**
 * The posture appsettings.json ships with (auth-contract.md, "Authentication" rules 1 and 7;
 * "States and transitions" rule 2), read from the shipped file and loaded as in production. Every
 * other test applies the closed posture itself (CLOSED_POSTURE of `@project-template/core/testing`), so this file alone
 * follows the shipped file. It is one of the two postures create-project-template offers:
 * - closed (the template, `--authProvider cookie`): authentication, the cookie session and the
 *   authenticated fallback on; an anonymous browser is sent to the login page, no warning;
 * - open (`--authProvider none`): all three off; unannotated routes are public and one warning is
 *   logged at startup.
 * A mix of the two fails here. The generator checks that the template itself ships closed.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { authenticationDisabledMessage } from '@project-template/core'
import { APPLICATION_NAME as ROOT_KEY } from '../src/application-name.js'
import { APP_ROOT, build } from './helpers/app.js'

interface ShippedPosture {
  Authentication: { Enabled?: boolean, Cookie?: { Enabled?: boolean } }
  Authorization: { RequireAuthenticatedUserByDefault?: boolean }
}

const shipped = (JSON.parse(readFileSync(join(APP_ROOT, 'appsettings.json'), 'utf8')) as Record<string, ShippedPosture>)[ROOT_KEY]
/** `--authProvider none` writes Authentication:Enabled false; the closed posture leaves it true. */
const open = shipped?.Authentication.Enabled === false

test(open
  ? 'appsettings.json turns authentication, the cookie session and the authenticated fallback off'
  : 'appsettings.json enables authentication, the cookie session and the authenticated fallback', () => {
  assert.ok(shipped !== undefined, `appsettings.json has a ${ROOT_KEY} section`)
  assert.equal(shipped.Authentication.Enabled, !open)
  if (open) assert.equal(shipped.Authentication.Cookie?.Enabled, false)
  else assert.notEqual(shipped.Authentication.Cookie?.Enabled, false)
  assert.equal(shipped.Authorization.RequireAuthenticatedUserByDefault, !open)
})

test(open
  ? 'with the shipped settings, / is public and the authentication-disabled warning is logged exactly once'
  : 'with the shipped settings, / redirects an anonymous browser to the login page and no authentication-disabled warning is logged', async (context) => {
  // The shipped settings, but the state store in memory: no .state file left in the app root.
  const { app, logs, loaded } = await build(context, { closedPosture: false, testSignIn: false })
  assert.equal(loaded.config.Authentication.Enabled, !open)
  const response = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } })
  const warnings = logs.events('authentication.disabled')
  if (open) {
    assert.equal(response.statusCode, 200)
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.level, 40)
    assert.equal(warnings[0]?.key, `${ROOT_KEY}:Authentication:Enabled`)
    assert.equal(warnings[0]?.msg, authenticationDisabledMessage(ROOT_KEY))
  } else {
    assert.equal(response.statusCode, 302)
    assert.match(String(response.headers.location), /^\/Account\/Login(\?|$)/)
    assert.equal(warnings.length, 0)
  }
})
