/**
 * Programming mistakes found while the app is built are coded errors from the catalogue, not bare
 * Errors: a policy or provider scheme registered twice, a route that is both anonymous and
 * protected. And a failed external sign-in logs the catalogued code of its login-page outcome.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { outcomeMessage, outcomeOf, SIGN_IN_OUTCOMES } from '../src/sign-in/sign-in-failure.js'
import { AppError, ERRORS, type ErrorCode } from '../src/errors.js'
import { build, buildTestApp } from './helpers/app.js'

function coded (code: ErrorCode, message: string): (error: unknown) => true {
  return (error) => {
    assert.ok(error instanceof AppError, String(error))
    assert.equal(error.code, code)
    assert.equal(error.message, message)
    return true
  }
}

const probeProvider = {
  scheme: 'Probe',
  displayName: 'Probe',
  paths: [],
  status: () => ({ available: true }),
  challenge: (_request: unknown, reply: { code: (status: number) => { send: () => unknown } }) => reply.code(204).send()
}

describe('startup misuse errors carry catalogue codes', () => {
  test('a route declaring both allowAnonymous and authorize: APP_ERR_ROUTE_ACCESS_CONFLICT', async () => {
    await assert.rejects(buildTestApp({ configure: (app) => { app.get('/probe/both', { config: { allowAnonymous: true, authorize: true } }, async () => 'x') } }),
      coded('APP_ERR_ROUTE_ACCESS_CONFLICT', 'Route GET /probe/both declares both allowAnonymous and authorize.'))
  })

  test('a policy name registered twice: APP_ERR_POLICY_DUPLICATE', async () => {
    await assert.rejects(buildTestApp({ configure: (app) => { app.authorization.addPolicy({ name: 'application.Role.Administrator' }) } }),
      coded('APP_ERR_POLICY_DUPLICATE', 'Authorization policy application.Role.Administrator is already registered.'))
  })

  test('a provider scheme registered twice: APP_ERR_PROVIDER_DUPLICATE', async () => {
    await assert.rejects(buildTestApp({
      configure: (app) => {
        app.authentication.registerProvider(probeProvider as never)
        app.authentication.registerProvider(probeProvider as never)
      }
    }), coded('APP_ERR_PROVIDER_DUPLICATE', 'Provider scheme Probe is already registered.'))
  })

  test('a token refresher registered twice for one scheme: APP_ERR_PROVIDER_DUPLICATE', async () => {
    const refresher = async (): Promise<Record<string, string>> => ({ access_token: 'never-used' })
    await assert.rejects(buildTestApp({
      configure: (app) => {
        app.session.registerTokenRefresher('Probe', refresher)
        app.session.registerTokenRefresher('Probe', refresher)
      }
    }), coded('APP_ERR_PROVIDER_DUPLICATE', 'Provider scheme Probe is already registered.'))
  })

  test('the startup codes are 500s', () => {
    for (const code of ['APP_ERR_ROUTE_ACCESS_CONFLICT', 'APP_ERR_POLICY_DUPLICATE', 'APP_ERR_PROVIDER_DUPLICATE'] as const) assert.equal(ERRORS[code].status, 500)
  })
})

describe('sign-in failure outcomes', () => {
  test('each failure class leads to one outcome; replay reads as correlation, protocol classes as failed', () => {
    assert.equal(outcomeOf('cancelled'), 'cancelled')
    assert.equal(outcomeOf('correlation'), 'correlation')
    assert.equal(outcomeOf('replay'), 'correlation')
    assert.equal(outcomeOf('unavailable'), 'unavailable')
    for (const failure of ['provider_error', 'claims', 'token', 'userinfo', 'signature', 'nonce', 'audience', 'malformed'] as const) assert.equal(outcomeOf(failure), 'failed', failure)
  })

  test('the correlation and provider failure codes are the ones logged', () => {
    assert.equal(SIGN_IN_OUTCOMES.correlation.code, 'APP_ERR_AUTH_CORRELATION_FAILED')
    assert.equal(SIGN_IN_OUTCOMES.failed.code, 'APP_ERR_AUTH_PROVIDER_FAILED')
    assert.equal(SIGN_IN_OUTCOMES.unavailable.code, 'APP_ERR_PROVIDER_UNAVAILABLE')
  })

  test('an unknown or inherited ?failure= value reads as failed', () => {
    for (const value of ['<script>', 'constructor', '__proto__', 'toString', '']) assert.equal(outcomeMessage(value), SIGN_IN_OUTCOMES.failed.message, value)
    assert.equal(outcomeMessage('cancelled'), 'Sign-in was cancelled.')
  })

  test('a failed callback logs the failure class with its code', async (context) => {
    const t = await build(context, {
      configure: (app) => {
        app.get('/probe/callback', { config: { allowAnonymous: true } }, async (request, reply) => await app.externalSignIn.fail(request, reply, 'Probe', 'replay'))
      }
    })
    const response = await t.app.inject({ url: '/probe/callback' })
    assert.equal(response.headers.location, '/Account/Login?failure=correlation')
    const line = t.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'replay')
    assert.equal(line?.code, 'APP_ERR_AUTH_CORRELATION_FAILED')
  })
})
