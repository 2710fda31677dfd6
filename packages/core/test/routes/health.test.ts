/**
 * Health probes: anonymous JSON; live answers while the process runs; ready reports configuration
 * and the enabled providers as an aggregate: 503 while a configured provider is unavailable,
 * Degraded (still 200) while only runtime providers are; no answer names a scheme.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { build } from '../helpers/app.js'
import type { AuthenticationProvider } from '../../src/providers/provider.js'

const HEALTHY_PROVIDERS = { status: 'Healthy', unavailable: { configured: 0, runtime: 0 } }

/** A provider registered by the test, down or up, configured or runtime. */
function probe (scheme: string, available: boolean, runtime = false): AuthenticationProvider {
  return {
    scheme,
    displayName: scheme,
    paths: [],
    ...(runtime ? { runtime: true } : {}),
    status: () => available ? { available: true } : { available: false, reason: runtime ? 'metadata_unreachable' : 'metadata_unavailable' },
    challenge: (_request, reply) => reply.code(500).send()
  }
}

describe('health probes', () => {
  test('all three answer anonymously with JSON and no session cookie', async (context) => {
    const t = await build(context)
    const expected: Record<string, unknown> = {
      '/health': { status: 'Healthy', checks: { configuration: { status: 'Healthy' }, state: { status: 'Healthy', provider: 'Embedded' }, providers: HEALTHY_PROVIDERS } },
      '/health/live': { status: 'Healthy' },
      '/health/ready': { status: 'Healthy', checks: { configuration: { status: 'Healthy' }, state: { status: 'Healthy', provider: 'Embedded' }, providers: HEALTHY_PROVIDERS } }
    }
    for (const [url, body] of Object.entries(expected)) {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, 200, url)
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8', url)
      assert.deepEqual(response.json(), body, url)
      assert.equal(response.headers['set-cookie'], undefined)
    }
  })

  test('ready and /health answer 503 while a configured provider is unavailable, without naming it, while live stays 200', async (context) => {
    const t = await build(context, { configure: (app) => { app.authentication.registerProvider(probe('Probe', false)) } })
    for (const url of ['/health', '/health/ready']) {
      const response = await t.app.inject({ url })
      assert.equal(response.statusCode, 503, url)
      assert.equal(response.headers['retry-after'], '5', url)
      assert.deepEqual(response.json(), { status: 'Unhealthy', checks: { configuration: { status: 'Healthy' }, state: { status: 'Healthy', provider: 'Embedded' }, providers: { status: 'Unhealthy', unavailable: { configured: 1, runtime: 0 }, reasons: ['metadata_unavailable'] } } }, url)
    }
    assert.equal((await t.app.inject({ url: '/health/live' })).statusCode, 200)
  })

  test('runtime providers down make the providers check Degraded and the app stays ready (200, no Retry-After)', async (context) => {
    const t = await build(context, {
      configure: (app) => {
        app.authentication.registerProvider(probe('Up', true))
        app.authentication.registerProvider(probe('CustomerA', false, true))
        app.authentication.registerProvider(probe('CustomerB', false, true))
      }
    })
    for (const url of ['/health', '/health/ready']) {
      const response = await t.app.inject({ url })
      assert.equal(response.statusCode, 200, url)
      assert.equal(response.headers['retry-after'], undefined, url)
      assert.deepEqual(response.json(), { status: 'Healthy', checks: { configuration: { status: 'Healthy' }, state: { status: 'Healthy', provider: 'Embedded' }, providers: { status: 'Degraded', unavailable: { configured: 0, runtime: 2 }, reasons: ['metadata_unreachable'] } } }, url)
    }
  })

  test('no anonymous health answer names any scheme, configured or runtime, up or down', async (context) => {
    // Distinctive names, so that a substring match cannot come from anything else in the body.
    const schemes = ['CfgUpQz7', 'CfgDownQz7', 'RtUpQz7', 'RtDownQz7']
    const t = await build(context, {
      configure: (app) => {
        app.authentication.registerProvider(probe('CfgUpQz7', true))
        app.authentication.registerProvider(probe('CfgDownQz7', false))
        app.authentication.registerProvider(probe('RtUpQz7', true, true))
        app.authentication.registerProvider(probe('RtDownQz7', false, true))
      }
    })
    for (const url of ['/health', '/health/ready', '/health/live']) {
      const body = (await t.app.inject({ url })).body
      for (const scheme of schemes) assert.ok(!body.toLowerCase().includes(scheme.toLowerCase()), `${url} names ${scheme}: ${body}`)
    }
    assert.deepEqual((await t.app.inject({ url: '/health/ready' })).json().checks.providers, { status: 'Unhealthy', unavailable: { configured: 1, runtime: 1 }, reasons: ['metadata_unavailable', 'metadata_unreachable'] })
  })
})
