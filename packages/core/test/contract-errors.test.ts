/**
 * One test per row of the contract's Errors table (auth-contract.md, "Errors"), end to end.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createLogger } from '../src/logger.js'
import { reportConfiguration } from '../src/startup.js'
import { build, cookieHeaderFrom, LogCapture, loadTestConfiguration, signIn, standardUser } from './helpers/app.js'

const PLANTED = 'PLANTED-SECRET-7f3a9c'

describe('contract Errors table', () => {
  test('provider enabled with a missing required value: startup fails, the message names the key, no secret is logged', () => {
    const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: 'https://idp.example.test', ClientSecret: PLANTED } } } } })
    const logs = new LogCapture()
    assert.equal(reportConfiguration(loaded, createLogger('info', logs)), false)
    const [line] = logs.events('configuration.invalid')
    assert.deepEqual(line?.errors, ['ProjectTemplate:Authentication:Providers:OpenIdConnect:ClientId is required when the provider is enabled.'])
    assert.ok(!logs.text().includes(PLANTED))
  })

  test('authentication disabled while the authenticated fallback is enabled: startup validation rejects it', () => {
    const loaded = loadTestConfiguration({ settings: { Authentication: { Enabled: false, Cookie: { Enabled: false } } } })
    assert.deepEqual(loaded.errors.map((problem) => problem.key), ['ProjectTemplate:Authentication:Enabled'])
    assert.match(loaded.errors[0]?.message ?? '', /ProjectTemplate:Authorization:RequireAuthenticatedUserByDefault/)
  })

  test('/External/Challenge with an unknown provider scheme: rejected safely, without a challenge', async (context) => {
    const t = await build(context)
    const response = await t.app.inject({ url: '/External/Challenge?provider=Unknown&returnUrl=%2F' })
    assert.equal(response.statusCode, 400)
    assert.equal(response.headers.location, undefined)
    assert.equal(response.headers['set-cookie'], undefined)
  })

  test('/External/Challenge with a non-local returnUrl: not followed', async (context) => {
    const t = await build(context, {
      configure: (app) => {
        app.authentication.registerProvider({ scheme: 'Probe', displayName: 'Probe', paths: [], status: () => ({ available: true }), challenge: (_request, reply) => reply.redirect('https://idp.example.test/', 302) })
      }
    })
    const response = await t.app.inject({ url: '/External/Challenge?provider=Probe&returnUrl=https%3A%2F%2Fevil.example%2F' })
    assert.equal(response.statusCode, 400)
    assert.equal(response.headers.location, undefined)
  })

  test('authenticated user lacks a required policy: redirected to /Account/AccessDenied, which renders safely and does not loop', async (context) => {
    const t = await build(context, { configure: (app) => { app.get('/admin', { config: { authorize: 'application.Role.Administrator' } }, async () => 'admin') } })
    const cookie = await signIn(t.app, standardUser())
    const first = await t.app.inject({ url: '/admin', headers: { cookie } })
    assert.equal(first.statusCode, 302)
    assert.equal(first.headers.location, '/Account/AccessDenied?ReturnUrl=%2Fadmin')
    const denied = await t.app.inject({ url: String(first.headers.location), headers: { cookie } })
    assert.equal(denied.statusCode, 403)
    assert.equal(denied.headers.location, undefined)
  })

  test('anonymous request to a protected endpoint: challenged with the default challenge scheme (Cookies: the login page)', async (context) => {
    const t = await build(context)
    const response = await t.app.inject({ url: '/api/v1/application-information', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 401, 'API paths get the JSON form of the challenge')
    const page = await t.app.inject({ url: '/', headers: { accept: 'text/html' } })
    assert.equal(page.statusCode, 302)
    assert.equal(page.headers.location, '/Account/Login?ReturnUrl=%2F')
  })

  test('logout without a valid anti-forgery token: rejected', async (context) => {
    const t = await build(context)
    const session = await signIn(t.app, standardUser())
    const page = await t.app.inject({ url: '/', headers: { cookie: session } })
    const response = await t.app.inject({
      method: 'POST',
      url: '/Account/Logout',
      payload: '__RequestVerificationToken=forged',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${session}; ${cookieHeaderFrom(page)}` }
    })
    assert.equal(response.statusCode, 400)
    assert.equal((await t.app.inject({ url: '/api/application-information', headers: { cookie: session } })).statusCode, 200)
  })
})
