/**
 * A token goes to one issuer only (issue 40, items 1 and 5; src/bearer/scheme-routing.ts). The
 * attack run's shapes, against oidc-provider on loopback (customer B's issuer, opaque tokens
 * introspected) and a hostile introspection endpoint (customer A's, which answers `active: true`
 * for any token, naming another tenant, or never answers): B's token never reaches A's endpoint,
 * A's answer never makes a principal of B's tenant, A's silence does not hold up B's calls, two
 * schemes that could both be offered one token are refused (at startup, and at a reload naming
 * the key), an unknown opaque token costs no outbound call, a JWT naming an issuer the request's
 * path does not select fetches nothing, and a customer's unreachable issuer answers as an unknown
 * issuer does. The rules themselves as data.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT } from 'jose'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { tenantOf } from '../../src/authorization/tenants.js'
import { introspectingSchemeFor, routingConflictOf, routingSettingsProblems, runtimeRoutingProblems, type RoutingConflict, type RoutingFacts } from '../../src/bearer/scheme-routing.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'
import type { TestSettings } from '../../src/testing/app.js'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const OPAQUE_RESOURCE = 'https://opaque.example.test/'
const RESOURCE = 'https://api.example.test/'
const B_SECRET = 'PLANTED-customer-b-introspection-secret'

function facts (scheme: string, overrides: Partial<RoutingFacts> = {}): RoutingFacts {
  return { scheme, pathPrefixes: [], tokenPrefix: '', introspects: true, runtime: false, ...overrides }
}

describe('the routing rules, as data', () => {
  const conflicts: ReadonlyArray<{ name: string, a: Partial<RoutingFacts>, b: Partial<RoutingFacts>, conflict: RoutingConflict | undefined }> = [
    { name: 'both without TokenPrefix, same paths', a: {}, b: {}, conflict: 'no_token_prefix' },
    { name: 'both without TokenPrefix, disjoint PathPrefixes', a: { pathPrefixes: ['/api/a/'] }, b: { pathPrefixes: ['/api/b/'] }, conflict: undefined },
    { name: 'PathPrefixes nested', a: { pathPrefixes: ['/api/'] }, b: { pathPrefixes: ['/api/b/'] }, conflict: 'no_token_prefix' },
    { name: 'PathPrefixes differing in case only', a: { pathPrefixes: ['/api/B/'] }, b: { pathPrefixes: ['/api/b/'] }, conflict: 'no_token_prefix' },
    { name: 'the same TokenPrefix, same paths', a: { tokenPrefix: 'x_' }, b: { tokenPrefix: 'x_' }, conflict: 'same_token_prefix' },
    { name: 'the same TokenPrefix, disjoint paths (two customers of one vendor)', a: { tokenPrefix: 'x_', pathPrefixes: ['/api/a/'] }, b: { tokenPrefix: 'x_', pathPrefixes: ['/api/b/'] }, conflict: undefined },
    { name: 'nested TokenPrefixes, even on disjoint paths', a: { tokenPrefix: 'x_', pathPrefixes: ['/api/a/'] }, b: { tokenPrefix: 'x_b', pathPrefixes: ['/api/b/'] }, conflict: 'nested_token_prefix' },
    { name: 'distinct TokenPrefixes, same paths', a: { tokenPrefix: 'a_' }, b: { tokenPrefix: 'b_' }, conflict: undefined },
    { name: 'two configured schemes, one without TokenPrefix', a: { tokenPrefix: 'a_' }, b: {}, conflict: undefined },
    { name: 'a provider-source scheme with a TokenPrefix beside one without', a: { tokenPrefix: 'a_', runtime: true }, b: {}, conflict: 'no_token_prefix' },
    { name: 'a provider-source scheme without TokenPrefix beside one with', a: { runtime: true, pathPrefixes: ['/api/a/'] }, b: { tokenPrefix: 'b_' }, conflict: 'no_token_prefix' },
    { name: 'a scheme that does not introspect', a: {}, b: { introspects: false }, conflict: undefined }
  ]
  for (const { name, a, b, conflict } of conflicts) {
    test(`conflict: ${name} -> ${conflict ?? 'none'}`, () => {
      assert.equal(routingConflictOf(facts('A', a), facts('B', b)), conflict)
      assert.equal(routingConflictOf(facts('B', b), facts('A', a)), conflict)
    })
  }

  test('an opaque token goes to the candidate its TokenPrefix names, else the only one without; never to one without when it carries any TokenPrefix', () => {
    const a = facts('A', { tokenPrefix: 'a_' })
    const b = facts('B', { tokenPrefix: 'b_', pathPrefixes: ['/api/b/'] })
    const plain = facts('Plain')
    const jwtOnly = facts('Jwt', { introspects: false })
    assert.equal(introspectingSchemeFor('a_123', [a, plain, jwtOnly], [a, b, plain])?.scheme, 'A')
    assert.equal(introspectingSchemeFor('zz123', [a, plain], [a, b, plain])?.scheme, 'Plain')
    assert.equal(introspectingSchemeFor('b_123', [a, plain], [a, b, plain]), undefined, 'B\'s token on a path B does not serve: nobody\'s')
    assert.equal(introspectingSchemeFor('zz123', [a], [a, plain]), undefined)
    assert.equal(introspectingSchemeFor('zz123', [plain, facts('Other')], [plain]), undefined, 'two without a TokenPrefix: none')
    assert.equal(introspectingSchemeFor('zz123', [jwtOnly], [jwtOnly]), undefined)
  })

  test('a provider-source introspecting scheme needs a TokenPrefix or PathPrefixes; the key is named, another customer is not', () => {
    const [alone] = runtimeRoutingProblems(facts('Contoso', { runtime: true }), 'ProjectTemplate:Authentication:Schemes:Contoso', [])
    assert.equal(alone?.key, 'ProjectTemplate:Authentication:Schemes:Contoso:Introspection:TokenPrefix')
    assert.deepEqual(runtimeRoutingProblems(facts('Contoso', { runtime: true, pathPrefixes: ['/api/contoso/'] }), 'K', []), [])
    const [shared] = runtimeRoutingProblems(facts('Contoso', { runtime: true, tokenPrefix: 'c' }), 'K', [facts('Fabrikam', { runtime: true, tokenPrefix: 'c_' })])
    assert.equal(shared?.key, 'K:Introspection:TokenPrefix')
    assert.equal(shared?.message.includes('Fabrikam'), false)
  })

  test('PathPrefixes are paths; TokenPrefix is token text and needs introspection', () => {
    const problems = routingSettingsProblems({ PathPrefixes: ['/api/ok/', 'api/', '/a b'], Introspection: { ClientId: '', TokenPrefix: 'a b' } }, 'K')
    assert.deepEqual(problems.map((problem) => problem.key), ['K:PathPrefixes:1', 'K:PathPrefixes:2', 'K:Introspection:TokenPrefix', 'K:Introspection:TokenPrefix'])
  })
})

/** A hostile introspection endpoint: records every token per path; `answer` decides (undefined: never answers). */
interface HostileEndpoint {
  readonly origin: string
  readonly received: Map<string, string[]>
  answer: (path: string, token: string) => Record<string, unknown> | { status: number } | undefined
  close: () => Promise<void>
}

async function startHostileEndpoint (): Promise<HostileEndpoint> {
  const received = new Map<string, string[]>()
  const endpoint: { answer: HostileEndpoint['answer'] } = { answer: () => ({ active: false }) }
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const path = request.url ?? ''
      const token = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('token') ?? ''
      received.set(path, [...(received.get(path) ?? []), token])
      const out = endpoint.answer(path, token)
      if (out === undefined) return // never answers: the app's deadline ends the call
      if ('status' in out) response.writeHead(out.status as number).end()
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`
  return {
    origin,
    received,
    get answer () { return endpoint.answer },
    set answer (value) { endpoint.answer = value },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

function callerRoutes (app: FastifyInstance): void {
  const caller = async (request: FastifyRequest): Promise<Record<string, unknown>> => ({
    scheme: request.user?.scheme ?? null,
    subject: request.user?.subject ?? null,
    tenant: request.user === undefined ? null : tenantOf(request.user) ?? null,
    userKey: request.user?.userKey ?? null
  })
  app.get('/api/a/orders', caller)
  app.get('/api/b/orders', caller)
  app.get('/api/shared/orders', caller)
}

describe('two customers\' introspecting schemes from the provider source', () => {
  let idpB: ResourceIdp
  let hostile: HostileEndpoint
  let t: BearerTestApp
  let definitions: RuntimeProviderDefinition[] = []

  /** Customer A: its "issuer" is the hostile endpoint. */
  function customerA (extra: Record<string, unknown> = {}, introspection: Record<string, unknown> = {}): RuntimeProviderDefinition {
    return { scheme: 'CustomerA', tenant: 'tenant-a', settings: { Type: 'JwtBearer', Issuer: hostile.origin, JwksUri: `${hostile.origin}/jwks`, Audiences: [OPAQUE_RESOURCE], Introspection: { ClientId: 'api-at-a', ClientSecret: 'a-secret', Endpoint: `${hostile.origin}/a/introspect`, ...introspection }, ...extra } }
  }
  /** Customer B: oidc-provider issuing opaque tokens. */
  function customerB (extra: Record<string, unknown> = {}, introspection: Record<string, unknown> = {}): RuntimeProviderDefinition {
    return { scheme: 'CustomerB', tenant: 'tenant-b', settings: { Type: 'JwtBearer', Authority: idpB.issuer, Audiences: [OPAQUE_RESOURCE], Introspection: { ClientId: 'api-at-b', ClientSecret: B_SECRET, TokenEndpointAuthMethod: 'client_secret_post', CacheSeconds: 0, ...introspection }, ...extra } }
  }
  async function reload (next: RuntimeProviderDefinition[]): Promise<Awaited<ReturnType<BearerTestApp['app']['authentication']['reloadProviders']>>> {
    definitions = next
    hostile.received.clear()
    return await t.app.authentication.reloadProviders()
  }
  async function call (url: string, token: string): Promise<{ status: number, body: Record<string, unknown>, challenge: string | undefined }> {
    const response = await t.app.inject({ url, headers: { authorization: `Bearer ${token}` } })
    return { status: response.statusCode, body: response.json(), challenge: response.headers['www-authenticate'] as string | undefined }
  }
  const tokenOfB = async (): Promise<string> => await idpB.clientCredentialsToken('b-billing', 'orders.read', OPAQUE_RESOURCE)
  const receivedByA = (): string[] => hostile.received.get('/a/introspect') ?? []

  before(async () => {
    idpB = await startResourceIdp({
      resource: RESOURCE,
      opaqueResource: OPAQUE_RESOURCE,
      scopes: ['orders.read'],
      clients: { 'b-billing': 'b-billing-secret' },
      introspectionClients: [{ client_id: 'api-at-b', client_secret: B_SECRET, grant_types: [], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_post' }]
    })
    hostile = await startHostileEndpoint()
    t = await buildBearerApp({ schemes: {}, refusalsPerWindow: 1000, providerSource: async () => definitions, routes: callerRoutes })
  })
  after(async () => {
    await t?.app.close()
    await hostile?.close()
    await idpB?.close()
  })

  test('the attack run\'s layout (both without TokenPrefix or PathPrefixes): both refused at the reload naming the key; B\'s token reaches no one', async () => {
    hostile.answer = () => ({ active: true, sub: 'b-billing', aud: OPAQUE_RESOURCE, client_id: 'b-billing', 'application:tenant': 'tenant-b' })
    const logged = t.logs.events('external.runtime_provider.refused').length
    const result = await reload([customerA(), customerB()])
    assert.deepEqual(result.added, [])
    assert.deepEqual(result.refused.map((refusal) => [refusal.scheme, refusal.problems.map((problem) => problem.key)]), [
      ['CustomerA', ['ProjectTemplate:Authentication:Schemes:CustomerA:Introspection:TokenPrefix']],
      ['CustomerB', ['ProjectTemplate:Authentication:Schemes:CustomerB:Introspection:TokenPrefix']]
    ])
    assert.equal(t.logs.events('external.runtime_provider.refused').length - logged, 2)
    const answer = await call('/api/shared/orders', await tokenOfB())
    assert.equal(answer.status, 401)
    assert.deepEqual(receivedByA(), [], 'customer A\'s endpoint received nothing')
  })

  test('PathPrefixes per customer: B\'s token on B\'s paths goes to B\'s issuer only, while A\'s endpoint never answers', async () => {
    hostile.answer = () => undefined
    const result = await reload([customerA({ PathPrefixes: ['/api/a/'] }), customerB({ PathPrefixes: ['/api/b/'] })])
    assert.deepEqual(result.added, ['CustomerA', 'CustomerB'])
    const token = await tokenOfB()
    const answer = await call('/api/b/orders', token)
    assert.equal(answer.status, 200)
    assert.deepEqual({ scheme: answer.body.scheme, subject: answer.body.subject, tenant: answer.body.tenant }, { scheme: 'CustomerB', subject: 'b-billing', tenant: 'tenant-b' })
    assert.deepEqual(receivedByA(), [])
    // On a path no customer's scheme serves, an opaque token goes nowhere: 401, no outbound call.
    assert.equal((await call('/api/shared/orders', token)).status, 401)
    assert.deepEqual(receivedByA(), [])
    assert.equal(t.logs.events('bearer.refused').at(-1)?.failure, 'issuer')
  })

  test('A\'s endpoint answering active:true for B\'s token (on A\'s own paths) makes a principal of A\'s tenant and scheme, never B\'s', async () => {
    hostile.answer = () => ({ active: true, sub: 'b-billing', aud: OPAQUE_RESOURCE, client_id: 'b-billing', 'application:tenant': 'tenant-b', tenant: 'tenant-b', 'application:subject': 'b-billing' })
    await reload([customerA({ PathPrefixes: ['/api/a/'] }), customerB({ PathPrefixes: ['/api/b/'] })])
    const token = await tokenOfB()
    const asB = await call('/api/b/orders', token)
    const viaA = await call('/api/a/orders', token)
    assert.equal(viaA.status, 200)
    assert.equal(viaA.body.scheme, 'CustomerA')
    assert.equal(viaA.body.tenant, 'tenant-a')
    assert.notEqual(viaA.body.userKey, asB.body.userKey, 'not B\'s user: another identity')
  })

  test('TokenPrefixes: each opaque token goes to the one customer whose prefix it carries; an unknown one to nobody', async () => {
    hostile.answer = (path, token) => ({ active: true, sub: `user-of-${path.split('/')[1] ?? ''}`, aud: OPAQUE_RESOURCE, token_echo: token.length })
    const customerC: RuntimeProviderDefinition = { scheme: 'CustomerC', tenant: 'tenant-c', settings: { Type: 'JwtBearer', Issuer: `${hostile.origin}/c`, JwksUri: `${hostile.origin}/c/jwks`, Audiences: [OPAQUE_RESOURCE], Introspection: { ClientId: 'api-at-c', ClientSecret: 'c-secret', Endpoint: `${hostile.origin}/c/introspect`, TokenPrefix: 'cust-c_' } } }
    const result = await reload([customerA({}, { TokenPrefix: 'cust-a_' }), customerC])
    assert.deepEqual(result.added, ['CustomerA', 'CustomerC'])
    const asC = await call('/api/shared/orders', 'cust-c_0123456789')
    assert.deepEqual([asC.status, asC.body.scheme, asC.body.tenant], [200, 'CustomerC', 'tenant-c'])
    assert.deepEqual(receivedByA(), [])
    assert.equal((await call('/api/shared/orders', 'cust-a_0123456789')).body.scheme, 'CustomerA')
    hostile.received.clear()
    assert.equal((await call('/api/shared/orders', 'unknown-0123456789')).status, 401)
    assert.equal(hostile.received.size, 0, 'an unknown opaque token costs no outbound call')
  })

  test('a customer\'s prefix beside a customer without one on shared paths: the later one refused, naming its TokenPrefix', async () => {
    const result = await reload([customerA({}, { TokenPrefix: 'cust-a_' }), customerB({ PathPrefixes: ['/api/b/'] })])
    assert.deepEqual(result.refused.map((refusal) => refusal.problems[0]?.key), ['ProjectTemplate:Authentication:Schemes:CustomerB:Introspection:TokenPrefix'])
    assert.deepEqual(['CustomerA', 'CustomerB'].map((scheme) => t.app.authentication.providers.has(scheme)), [true, false])
  })

  test('a customer\'s issuer that cannot answer is refused as an unknown issuer is (401 invalid_token, not 503), logged with the real class', async () => {
    const closedPort = `http://localhost:${await unusedPort()}`
    await reload([customerA({ PathPrefixes: ['/api/a/'] }), { scheme: 'CustomerD', tenant: 'tenant-d', settings: { Type: 'JwtBearer', Issuer: closedPort, JwksUri: `${closedPort}/jwks`, Audiences: [RESOURCE] } }])
    hostile.answer = () => ({ status: 500 })
    const now = Math.floor(Date.now() / 1000)
    const naming = async (iss: string): Promise<string> => await new SignJWT({ iss, aud: RESOURCE, sub: 'x', exp: now + 300 }).setProtectedHeader({ alg: 'RS256', kid: 'k' }).sign((await import('node:crypto')).generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)
    const unreachable = await call('/api/shared/orders', await naming(closedPort))
    assert.equal(t.logs.events('bearer.refused').at(-1)?.failure, 'keys_unavailable')
    const unknown = await call('/api/shared/orders', await naming('https://nobody.example'))
    assert.equal(t.logs.events('bearer.refused').at(-1)?.failure, 'issuer')
    assert.deepEqual([unreachable.status, unreachable.challenge, unreachable.body.code], [unknown.status, unknown.challenge, unknown.body.code])
    assert.equal(unreachable.status, 401)
    const introspectionDown = await call('/api/a/orders', 'opaque-0123456789')
    assert.equal(t.logs.events('bearer.refused').at(-1)?.failure, 'introspection_unavailable')
    assert.deepEqual([introspectionDown.status, introspectionDown.challenge], [401, unknown.challenge])
  })
})

async function unusedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('configured schemes: one issuer per token, chosen by the request\'s path and the token\'s prefix', () => {
  let hostile: HostileEndpoint
  let x: TokenIdp
  let y: TokenIdp
  let t: BearerTestApp

  function introspecting (name: string, tokenPrefix: string): TestSettings {
    return { Issuer: `${hostile.origin}/${name}`, JwksUri: `${hostile.origin}/${name}/jwks`, Audiences: [OPAQUE_RESOURCE], Introspection: { ClientId: `api-${name}`, ClientSecret: 'secret', Endpoint: `${hostile.origin}/${name}/introspect`, TokenPrefix: tokenPrefix } }
  }

  before(async () => {
    hostile = await startHostileEndpoint()
    x = await startTokenIdp('unused')
    y = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: {
        First: introspecting('first', 'one_'),
        Second: introspecting('second', 'two_'),
        X: { Issuer: x.issuer, JwksUri: `${x.issuer}/jwks`, Audiences: [RESOURCE], PathPrefixes: ['/api/x/'] },
        Y: { Issuer: y.issuer, JwksUri: `${y.issuer}/jwks`, Audiences: [RESOURCE], PathPrefixes: ['/api/y/'] }
      },
      refusalsPerWindow: 1000,
      routes: (app) => {
        app.get('/api/x/orders', async (request) => ({ scheme: request.user?.scheme ?? null }))
        app.get('/api/y/orders', async (request) => ({ scheme: request.user?.scheme ?? null }))
        app.get('/api/x/y-only', { config: { bearerSchemes: ['Y'] } }, async (request) => ({ scheme: request.user?.scheme ?? null }))
      }
    })
  })
  after(async () => {
    await t?.app.close()
    await hostile?.close()
    await x?.close()
    await y?.close()
  })

  test('a revoked token of one issuer is not offered to the other; an unknown opaque token costs no call', async () => {
    hostile.answer = () => ({ active: false })
    hostile.received.clear()
    assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: 'Bearer one_revoked-0123456789' } })).statusCode, 401)
    assert.deepEqual([...hostile.received.keys()], ['/first/introspect'])
    hostile.received.clear()
    assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: 'Bearer unknown-0123456789' } })).statusCode, 401)
    assert.equal(hostile.received.size, 0)
  })

  test('a JWT naming an issuer the request\'s path does not select is refused as issuer and makes the app fetch nothing', async () => {
    const now = Math.floor(Date.now() / 1000)
    const naming = async (idp: TokenIdp, kid: string): Promise<string> => await new SignJWT({ iss: idp.issuer, aud: RESOURCE, sub: 'ada', exp: now + 300 }).setProtectedHeader({ alg: 'RS256', kid }).sign(idp.signingKey)
    const before = [x.jwksRequests, y.jwksRequests]
    const response = await t.app.inject({ url: '/api/y/orders', headers: { authorization: `Bearer ${await naming(x, 'not-published')}` } })
    assert.equal(response.statusCode, 401)
    assert.equal(t.logs.events('bearer.refused').at(-1)?.failure, 'issuer')
    assert.deepEqual([x.jwksRequests, y.jwksRequests], before, 'no key set fetched')
    const valid = await naming(x, 'known')
    assert.deepEqual((await t.app.inject({ url: '/api/x/orders', headers: { authorization: `Bearer ${valid}` } })).json(), { scheme: 'X' })
    assert.equal((await t.app.inject({ url: '/api/y/orders', headers: { authorization: `Bearer ${valid}` } })).statusCode, 401, 'a cached caller counts only where its scheme is selected')
    assert.equal((await t.app.inject({ url: '/api/x/y-only', headers: { authorization: `Bearer ${valid}` } })).statusCode, 401, 'config.bearerSchemes excludes X')
  })

  test('startup refuses two introspecting schemes that could both be offered one token, naming the later one\'s TokenPrefix', async () => {
    await assert.rejects(buildBearerApp({ schemes: { First: introspecting('first', ''), Second: introspecting('second', '') } }), /ProjectTemplate:Authentication:Schemes:Second:Introspection:TokenPrefix/)
    await assert.rejects(buildBearerApp({ schemes: { First: introspecting('first', 'ab'), Second: { ...introspecting('second', 'abc'), PathPrefixes: ['/api/second/'] } } }), /Schemes:Second:Introspection:TokenPrefix starts with/)
  })

  test('a route naming a scheme that is not configured is refused at startup', async () => {
    await assert.rejects(buildBearerApp({ schemes: { Y: { Issuer: y.issuer, JwksUri: `${y.issuer}/jwks`, Audiences: [RESOURCE] } }, routes: (app) => { app.get('/api/typo', { config: { bearerSchemes: ['Why'] } }, async () => ({})) } }), /config\.bearerSchemes/)
  })
})
