/**
 * Health probes: anonymous JSON; live answers while the process runs; ready reports configuration
 * and enabled providers, 503 naming an unavailable provider.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { build } from '../helpers/app.js'

describe('health probes', () => {
  test('all three answer anonymously with JSON and no session cookie', async (context) => {
    const t = await build(context)
    const expected: Record<string, unknown> = {
      '/health': { status: 'Healthy', checks: { configuration: { status: 'Healthy' }, state: { status: 'Healthy', provider: 'Embedded' }, providers: {} } },
      '/health/live': { status: 'Healthy' },
      '/health/ready': { status: 'Healthy', checks: { configuration: { status: 'Healthy' }, state: { status: 'Healthy', provider: 'Embedded' }, providers: {} } }
    }
    for (const [url, body] of Object.entries(expected)) {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, 200, url)
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8', url)
      assert.deepEqual(response.json(), body, url)
      assert.equal(response.headers['set-cookie'], undefined)
    }
  })

  test('ready and /health answer 503 naming an unavailable provider while live stays 200', async (context) => {
    const t = await build(context, {
      configure: (app) => {
        app.authentication.registerProvider({
          scheme: 'Probe',
          displayName: 'Probe',
          paths: [],
          status: () => ({ available: false, reason: 'metadata_unavailable' }),
          challenge: (_request, reply) => reply.code(500).send()
        })
      }
    })
    for (const url of ['/health', '/health/ready']) {
      const response = await t.app.inject({ url })
      assert.equal(response.statusCode, 503, url)
      assert.deepEqual(response.json(), { status: 'Unhealthy', checks: { configuration: { status: 'Healthy' }, state: { status: 'Healthy', provider: 'Embedded' }, providers: { Probe: { status: 'Unhealthy', reason: 'metadata_unavailable' } } } })
    }
    assert.equal((await t.app.inject({ url: '/health/live' })).statusCode, 200)
  })
})
