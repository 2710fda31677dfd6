/**
 * Keys shared between environments (issue 13, "Keys"): with the same DataProtection:Keys, a
 * session ticket or correlation cookie sealed by a Development instance never opens in Production,
 * and the anti-forgery key differs; the application discriminator (default: the environment name)
 * is part of every key derived from the ring. Controls: a second instance of the same environment,
 * or an explicitly shared ApplicationDiscriminator, opens them.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { openBytes, sealBytes } from '../../src/data-protection/authenticated-encryption.js'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { antiforgeryKeyOf } from '../../src/plugins/csrf.js'
import { buildTestApp, cookieHeaderFrom, signIn, standardUser, testStateStore, type TestApp } from '../helpers/app.js'
import { registerTestProvider, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'

const KEYS = [randomBytes(32).toString('base64')]
const API = '/api/application-information'
// One state store for every instance, as instances sharing Redis have: only the keys tell them apart.
const store = testStateStore()

async function instance (nodeEnv: string, discriminator?: string): Promise<TestApp> {
  return await buildTestApp({
    nodeEnv,
    stateStore: store,
    settings: { DataProtection: { Keys: KEYS, ...(discriminator === undefined ? {} : { ApplicationDiscriminator: discriminator }) } },
    configure: (app) => { registerTestProvider(app) }
  })
}

describe('application discriminator', () => {
  test('a session ticket sealed under Development does not open under Production with the same keys', async () => {
    const development = await instance('development')
    const otherDevelopment = await instance('development')
    const production = await instance('production')
    try {
      const cookie = await signIn(development.app, standardUser())
      assert.equal((await otherDevelopment.app.inject({ url: API, headers: { cookie } })).statusCode, 200, 'control: another Development instance opens it')
      const response = await production.app.inject({ url: API, headers: { cookie } })
      assert.equal(response.statusCode, 401)
    } finally {
      await Promise.all([development.app.close(), otherDevelopment.app.close(), production.app.close()])
    }
  })

  test('a configured ApplicationDiscriminator decides instead of the environment', async () => {
    const staging = await instance('staging', 'orders-app')
    const production = await instance('production', 'orders-app')
    const otherApplication = await instance('production', 'billing-app')
    try {
      const cookie = await signIn(staging.app, standardUser())
      assert.equal((await production.app.inject({ url: API, headers: { cookie } })).statusCode, 200, 'same discriminator: opens')
      assert.equal((await otherApplication.app.inject({ url: API, headers: { cookie } })).statusCode, 401, 'another application: does not open')
    } finally {
      await Promise.all([staging.app.close(), production.app.close(), otherApplication.app.close()])
    }
  })

  test('a correlation cookie from a Development challenge fails correlation in Production', async () => {
    const development = await instance('development')
    const otherDevelopment = await instance('development')
    const production = await instance('production')
    try {
      const challenge = await development.app.inject({ url: `/External/Challenge?provider=${TEST_PROVIDER}&returnUrl=%2Forders` })
      assert.equal(challenge.statusCode, 302)
      const state = new URL(String(challenge.headers.location)).searchParams.get('state') ?? ''
      const cookie = cookieHeaderFrom(challenge)
      const callback = `${TEST_PROVIDER_CALLBACK}?state=${state}`
      const inProduction = await production.app.inject({ url: callback, headers: { cookie } })
      assert.equal(inProduction.headers.location, '/Account/Login?failure=correlation')
      const control = await otherDevelopment.app.inject({ url: callback, headers: { cookie } })
      assert.equal(control.headers.location, '/orders', 'control: another Development instance completes the flow')
    } finally {
      await Promise.all([development.app.close(), otherDevelopment.app.close(), production.app.close()])
    }
  })

  test('every purpose derived from the ring differs by discriminator: sealing keys, key ids, anti-forgery keys', () => {
    const material = randomBytes(32)
    const development = createKeyRing([material], 'Development')
    const production = createKeyRing([material], 'Production')
    const productionAgain = createKeyRing([material], 'Production')
    assert.ok(!development.sealing.key.equals(production.sealing.key))
    assert.notEqual(development.sealing.id, production.sealing.id)
    assert.ok(!antiforgeryKeyOf(development).equals(antiforgeryKeyOf(production)))
    assert.ok(antiforgeryKeyOf(production).equals(antiforgeryKeyOf(productionAgain)), 'control: deterministic per discriminator')
    const purpose = Buffer.from('any purpose')
    const sealed = sealBytes('value', development, purpose)
    assert.equal(openBytes(sealed, production, purpose, 4096), undefined)
    assert.equal(openBytes(sealed, createKeyRing([material], 'Development'), purpose, 4096)?.toString(), 'value')
  })
})
