/**
 * The one place a configured provider's routes are registered (plugins/external-providers.ts,
 * registerProviderEndpoints): each endpoint the provider declares becomes one anonymous route with
 * the declared method, path, body limit and rate-limit group, in declaration order, and the
 * provider is in the scheme registry afterwards. Checked on the route options Fastify receives,
 * on the reviewed anonymous inventory, and by behaviour (the handler answers its method only, a
 * body over the limit is 413, each group counts apart under its own limit).
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, type TestApp } from '../helpers/app.js'
import { registerProviderEndpoints } from '../../src/plugins/external-providers.js'
import { endpointPathsOf, type AuthenticationProvider, type ProviderEndpoint } from '../../src/providers/provider.js'

const BODY_LIMIT = 512
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/** A provider of three endpoints whose handlers answer with their kind and count their calls. */
function probeProvider (): { provider: AuthenticationProvider, calls: Record<string, number> } {
  const calls: Record<string, number> = { callback: 0, logout: 0, metadata: 0 }
  const answer = (kind: string): ProviderEndpoint['handle'] => (_request, reply) => { calls[kind]! += 1; return reply.send(kind) }
  const endpoints: ProviderEndpoint[] = [
    { method: 'GET', path: '/probe/callback', kind: 'callback', rateLimitBucket: 'callback', handle: answer('callback') },
    { method: 'POST', path: '/probe/logout', kind: 'logout', bodyLimit: BODY_LIMIT, rateLimitBucket: 'logout-receiver', handle: answer('logout') },
    { method: 'GET', path: '/probe/metadata', kind: 'metadata', handle: answer('metadata') }
  ]
  const provider: AuthenticationProvider = {
    scheme: 'Probe',
    displayName: 'Probe',
    paths: endpointPathsOf(endpoints),
    endpoints,
    challenge: (_request, reply) => reply.code(204).send(),
    status: () => ({ available: true })
  }
  return { provider, calls }
}

interface SeenRoute { method: unknown, url: string, bodyLimit: unknown, config: unknown }

async function buildWithProbe (context: Parameters<typeof build>[0]): Promise<{ t: TestApp, seen: SeenRoute[], calls: Record<string, number>, provider: AuthenticationProvider }> {
  const { provider, calls } = probeProvider()
  const seen: SeenRoute[] = []
  const t = await build(context, {
    testSignIn: false,
    settings: { RateLimits: { CallbackPerWindow: 1, LogoutReceiverPerWindow: 2 } },
    configure: (app: FastifyInstance) => {
      app.addHook('onRoute', (route) => {
        if (!route.url.startsWith('/probe/') || route.method === 'HEAD') return
        const { allowAnonymous, rateLimitBucket } = route.config ?? {}
        seen.push({ method: route.method, url: route.url, bodyLimit: route.bodyLimit, config: { allowAnonymous, rateLimitBucket } })
      })
      registerProviderEndpoints(app, provider)
    }
  })
  return { t, seen, calls, provider }
}

describe('registerProviderEndpoints', () => {
  test('registers each declared endpoint once, in order, with its method, path, body limit and rate-limit group, anonymous', async (context) => {
    const { t, seen, provider } = await buildWithProbe(context)
    assert.deepEqual(seen, [
      { method: 'GET', url: '/probe/callback', bodyLimit: undefined, config: { allowAnonymous: true, rateLimitBucket: 'callback' } },
      { method: 'POST', url: '/probe/logout', bodyLimit: BODY_LIMIT, config: { allowAnonymous: true, rateLimitBucket: 'logout-receiver' } },
      { method: 'GET', url: '/probe/metadata', bodyLimit: undefined, config: { allowAnonymous: true, rateLimitBucket: undefined } }
    ])
    assert.deepEqual(t.app.authorization.anonymousRoutes().filter((route) => route.includes('/probe/')), [
      'GET /probe/callback',
      'GET /probe/metadata',
      'POST /probe/logout'
    ])
    assert.equal(t.app.authentication.providers.get('Probe'), provider)
    assert.deepEqual(provider.paths, ['/probe/callback', '/probe/logout', '/probe/metadata'])
  })

  test('each route runs its endpoint\'s handler for its own method only', async (context) => {
    const { t, calls } = await buildWithProbe(context)
    const callback = await t.app.inject({ url: '/probe/callback', remoteAddress: '10.2.0.1' })
    assert.equal(callback.statusCode, 200)
    assert.equal(callback.body, 'callback')
    const metadata = await t.app.inject({ method: 'HEAD', url: '/probe/metadata', remoteAddress: '10.2.0.2' })
    assert.equal(metadata.statusCode, 200, 'HEAD mirrors the GET endpoint')
    const wrongMethod = await t.app.inject({ method: 'GET', url: '/probe/logout', remoteAddress: '10.2.0.3', headers: { accept: 'application/json' } })
    assert.notEqual(wrongMethod.statusCode, 200)
    const posted = await t.app.inject({ method: 'POST', url: '/probe/callback', remoteAddress: '10.2.0.4', headers: { ...FORM, accept: 'application/json' }, payload: 'a=1' })
    assert.notEqual(posted.statusCode, 200)
    assert.deepEqual(calls, { callback: 1, logout: 0, metadata: 1 })
  })

  test('a body up to the declared limit reaches the handler; one byte more is 413', async (context) => {
    const { t, calls } = await buildWithProbe(context)
    const fits = await t.app.inject({ method: 'POST', url: '/probe/logout', remoteAddress: '10.3.0.1', headers: FORM, payload: `a=${'x'.repeat(BODY_LIMIT - 2)}` })
    assert.equal(fits.statusCode, 200)
    assert.equal(fits.body, 'logout')
    const over = await t.app.inject({ method: 'POST', url: '/probe/logout', remoteAddress: '10.3.0.2', headers: FORM, payload: `a=${'x'.repeat(BODY_LIMIT - 1)}` })
    assert.equal(over.statusCode, 413)
    assert.equal(calls.logout, 1)
  })

  test('each endpoint counts in its declared group: callback after 1, logout-receiver after 2, metadata never', async (context) => {
    const { t } = await buildWithProbe(context)
    const statuses = async (method: 'GET' | 'POST', url: string, times: number): Promise<number[]> => {
      const codes: number[] = []
      for (let index = 0; index < times; index++) {
        codes.push((await t.app.inject({ method, url, remoteAddress: '10.4.0.1', ...(method === 'POST' ? { headers: FORM, payload: 'a=1' } : {}) })).statusCode)
      }
      return codes
    }
    assert.deepEqual(await statuses('GET', '/probe/callback', 2), [200, 429])
    assert.deepEqual(await statuses('POST', '/probe/logout', 3), [200, 200, 429])
    assert.deepEqual(await statuses('GET', '/probe/metadata', 4), [200, 200, 200, 200])
  })
})
