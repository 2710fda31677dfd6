/**
 * DPoP (RFC 9449; issue 35, item 5 and "Bad input"), against oidc-provider on loopback issuing
 * DPoP-bound client-credentials tokens (a JWT with `cnf.jkt`, and an opaque one checked by
 * introspection) for proofs made with jose, and an issuer whose tokens jose mints for a scheme
 * with RequireDPoP. A valid proof and bound token is the caller; a replayed proof, a bound token
 * sent as Bearer, a plain token where DPoP is required, and every malformed proof are 401 with
 * the RFC 9449 challenge, one `bearer.refused` line naming the failure class, never a token or
 * a proof in the log; a refused request records no proof id.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import { ReplayCache } from '../../src/state/replay-cache.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { dpopKey, dpopProof, startResourceIdp, type DPoPKey, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const RESOURCE = 'https://api.example.test/'
const OPAQUE_RESOURCE = 'https://opaque.example.test/'
const PARTNER_AUDIENCE = 'api://orders'
/** inject() addresses the app as localhost:80. */
const ORDERS_URL = 'http://localhost:80/api/orders'
const METADATA_URL = 'http://localhost:80/.well-known/oauth-protected-resource'
const ALGS = 'RS256 PS256 ES256 EdDSA'
const ath = (token: string): string => createHash('sha256').update(token).digest('base64url')
const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('DPoP-bound tokens on the API routes', () => {
  let idp: ResourceIdp
  let partner: TokenIdp
  let t: BearerTestApp
  let key: DPoPKey
  let otherKey: DPoPKey
  let boundJwt: string
  const planted: string[] = []

  before(async () => {
    idp = await startResourceIdp({
      resource: RESOURCE,
      opaqueResource: OPAQUE_RESOURCE,
      scopes: ['orders.read'],
      clients: { billing: 'billing-secret-PLANTED' },
      introspectionClients: [{ client_id: 'orders-api', client_secret: 'orders-api-secret-PLANTED', grant_types: [], redirect_uris: [], response_types: [] }]
    })
    partner = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: {
        Api: { Authority: idp.issuer, Audiences: [RESOURCE, OPAQUE_RESOURCE], Introspection: { ClientId: 'orders-api', ClientSecret: 'orders-api-secret-PLANTED' } },
        Partner: { Issuer: partner.issuer, JwksUri: `${partner.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE], RequireDPoP: true }
      },
      refusalsPerWindow: 1000
    })
    key = await dpopKey()
    otherKey = await dpopKey()
    boundJwt = await idp.dpopClientCredentialsToken('billing', 'orders.read', key)
    planted.push(boundJwt)
  })
  after(async () => {
    await t?.app.close()
    await idp?.close()
    await partner?.close()
  })

  async function call (token: string, proofs: readonly string[] | undefined, options: { method?: 'GET' | 'POST', url?: string, scheme?: string } = {}): Promise<{ status: number, challenge: string, failure: unknown, body: Record<string, unknown> }> {
    planted.push(...(proofs ?? []))
    const before = t.logs.events('bearer.refused').length
    // Two proofs go as two DPoP header lines (light-my-request reflects an array in rawHeaders, as Node does).
    const dpop = proofs === undefined || proofs.length === 0 ? {} : { dpop: proofs.length === 1 ? proofs[0] as string : [...proofs] }
    const response = await t.app.inject({ method: options.method ?? 'GET', url: options.url ?? '/api/orders', headers: { authorization: `${options.scheme ?? 'DPoP'} ${token}`, ...dpop } })
    const lines = t.logs.events('bearer.refused').slice(before)
    assert.ok(lines.length <= 1, 'at most one refusal line per request')
    return { status: response.statusCode, challenge: String(response.headers['www-authenticate'] ?? ''), failure: lines[0]?.failure, body: response.json() }
  }

  test('a DPoP-bound client-credentials JWT from oidc-provider, with a proof of its key, is the machine principal', async () => {
    const payload = JSON.parse(Buffer.from(boundJwt.split('.')[1] ?? '', 'base64url').toString()) as { cnf?: { jkt?: string } }
    assert.equal(payload.cnf?.jkt, await calculateJwkThumbprint(key.publicJwk), 'oidc-provider bound the token to the key')
    const response = await call(boundJwt, [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt) })])
    assert.equal(response.status, 200)
    assert.deepEqual(response.body, { subject: 'billing', scheme: 'Api', machine: true, clientId: 'billing', scopes: ['orders.read'] })
  })

  test('a POST needs no anti-forgery token with DPoP; htm and htu name the POST and the path without query', async () => {
    const response = await call(boundJwt, [await dpopProof(key, 'POST', ORDERS_URL, { ath: ath(boundJwt) })], { method: 'POST', url: '/api/orders?page=2' })
    assert.equal(response.status, 200)
  })

  test('a replayed proof is refused (dpop_replay, invalid_dpop_proof), the first use was recorded', async () => {
    const proof = await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt) })
    assert.equal((await call(boundJwt, [proof])).status, 200)
    const replayed = await call(boundJwt, [proof])
    assert.equal(replayed.status, 401)
    assert.equal(replayed.failure, 'dpop_replay')
    assert.match(replayed.challenge, new RegExp(`^DPoP error="invalid_dpop_proof", algs="${ALGS}"`))
  })

  test('the bound token sent as Bearer is refused (dpop_bound_as_bearer), even after a DPoP call cached it', async () => {
    const response = await call(boundJwt, undefined, { scheme: 'Bearer' })
    assert.equal(response.status, 401)
    assert.equal(response.failure, 'dpop_bound_as_bearer')
    assert.match(response.challenge, /^Bearer error="invalid_token"/)
  })

  test('a proof by another key than the token is bound to: dpop_binding (invalid_token); nothing recorded', async () => {
    const jti = randomUUID()
    const response = await call(boundJwt, [await dpopProof(otherKey, 'GET', ORDERS_URL, { ath: ath(boundJwt), jti })])
    assert.equal(response.status, 401)
    assert.equal(response.failure, 'dpop_binding')
    assert.match(response.challenge, new RegExp(`^DPoP error="invalid_token", algs="${ALGS}"`))
    const recorded = new ReplayCache(t.app.state, 'dpop')
    assert.equal(await recorded.seen(`${await calculateJwkThumbprint(otherKey.publicJwk)}.${jti}`), false, 'a refused request writes no proof id')
  })

  test('an unbound token sent with DPoP is refused (dpop_unbound)', async () => {
    const plain = await idp.clientCredentialsToken('billing', 'orders.read')
    planted.push(plain)
    const response = await call(plain, [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(plain) })])
    assert.equal(response.status, 401)
    assert.equal(response.failure, 'dpop_unbound')
  })

  test('an opaque DPoP-bound token: introspection gives cnf.jkt, the proof must match it', async () => {
    const opaque = await idp.dpopClientCredentialsToken('billing', 'orders.read', key, OPAQUE_RESOURCE)
    planted.push(opaque)
    assert.equal((await call(opaque, [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(opaque) })])).status, 200)
    assert.equal((await call(opaque, [await dpopProof(otherKey, 'GET', ORDERS_URL, { ath: ath(opaque) })])).failure, 'dpop_binding')
    assert.equal((await call(opaque, undefined, { scheme: 'Bearer' })).failure, 'dpop_bound_as_bearer')
  })

  async function partnerToken (claims: JWTPayload = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ iss: partner.issuer, aud: PARTNER_AUDIENCE, sub: 'ada', iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(partner.signingKey)
    planted.push(token)
    return token
  }

  test('RequireDPoP: a plain bearer token of that scheme is refused with a DPoP challenge; a bound one with a proof passes', async () => {
    const plain = await call(await partnerToken(), undefined, { scheme: 'Bearer' })
    assert.equal(plain.status, 401)
    assert.equal(plain.failure, 'dpop_required')
    assert.match(plain.challenge, new RegExp(`^DPoP error="invalid_token", algs="${ALGS}"`))
    const bound = await partnerToken({ cnf: { jkt: await calculateJwkThumbprint(key.publicJwk) } })
    const response = await call(bound, [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(bound) })])
    assert.equal(response.status, 200)
    assert.equal(response.body.subject, 'ada')
  })

  test('no token: the 401 offers Bearer and, as a scheme requires DPoP, DPoP with its algorithms', async () => {
    const response = await t.app.inject({ url: '/api/orders' })
    assert.equal(response.statusCode, 401)
    const challenges = response.headers['www-authenticate'] as unknown as string[]
    assert.ok(Array.isArray(challenges))
    assert.equal(challenges[0], `Bearer resource_metadata="${METADATA_URL}"`)
    assert.equal(challenges[1], `DPoP algs="${ALGS}", resource_metadata="${METADATA_URL}"`, 'the same parameters as the Bearer challenge')
  })

  const proofs: ReadonlyArray<{ readonly name: string, readonly failure: string, readonly proofs: () => Promise<string[]> }> = [
    { name: 'no DPoP header', failure: 'dpop_missing', proofs: async () => [] },
    { name: 'two DPoP headers', failure: 'dpop_multiple', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt) }), await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt) })] },
    { name: 'oversized (over 4 KB)', failure: 'dpop_oversized', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt), padding: 'x'.repeat(4096) })] },
    { name: 'not a JWS', failure: 'dpop_malformed', proofs: async () => ['not-a-proof'] },
    { name: 'header not JSON', failure: 'dpop_malformed', proofs: async () => [`${Buffer.from('{oops').toString('base64url')}.${encode({})}.c2ln`] },
    { name: 'typ JWT', failure: 'dpop_malformed', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt) }, { typ: 'JWT' })] },
    { name: 'no jwk', failure: 'dpop_malformed', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt) }, { jwk: undefined })] },
    { name: 'no jti', failure: 'dpop_malformed', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt), jti: undefined })] },
    { name: 'the private key in the jwk', failure: 'dpop_private_key', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt) }, { jwk: await exportJWK(key.privateKey) })] },
    { name: 'alg none', failure: 'dpop_algorithm', proofs: async () => [`${encode({ alg: 'none', typ: 'dpop+jwt', jwk: key.publicJwk })}.${encode({ htm: 'GET', htu: ORDERS_URL, iat: Math.floor(Date.now() / 1000), jti: 'x', ath: ath(boundJwt) })}.c2ln`] },
    { name: 'alg HS256', failure: 'dpop_algorithm', proofs: async () => [await new SignJWT({ htm: 'GET', htu: ORDERS_URL, iat: Math.floor(Date.now() / 1000), jti: 'x', ath: ath(boundJwt) }).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.publicJwk }).sign(new Uint8Array(32))] },
    { name: 'signed by another key than its jwk', failure: 'dpop_signature', proofs: async () => [await dpopProof({ privateKey: otherKey.privateKey, publicJwk: key.publicJwk }, 'GET', ORDERS_URL, { ath: ath(boundJwt) })] },
    { name: 'wrong htm', failure: 'dpop_method', proofs: async () => [await dpopProof(key, 'POST', ORDERS_URL, { ath: ath(boundJwt) })] },
    { name: 'wrong htu (another path)', failure: 'dpop_url', proofs: async () => [await dpopProof(key, 'GET', 'http://localhost:80/api/admin', { ath: ath(boundJwt) })] },
    { name: 'wrong htu (another host)', failure: 'dpop_url', proofs: async () => [await dpopProof(key, 'GET', 'https://evil.example/api/orders', { ath: ath(boundJwt) })] },
    { name: 'htu not a URL', failure: 'dpop_url', proofs: async () => [await dpopProof(key, 'GET', 'orders', { ath: ath(boundJwt) })] },
    { name: 'stale iat', failure: 'dpop_stale', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt), iat: Math.floor(Date.now() / 1000) - 600 })] },
    { name: 'iat in the future', failure: 'dpop_stale', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(boundJwt), iat: Math.floor(Date.now() / 1000) + 600 })] },
    { name: 'missing ath', failure: 'dpop_ath', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL)] },
    { name: 'ath of another token', failure: 'dpop_ath', proofs: async () => [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath('another-token') })] }
  ]
  for (const { name, failure, proofs: make } of proofs) {
    test(`refused: ${name} (${failure}), 401 with the DPoP challenge`, async () => {
      const response = await call(boundJwt, await make())
      assert.equal(response.status, 401)
      assert.equal(response.failure, failure)
      assert.match(response.challenge, new RegExp(`^DPoP error="invalid_dpop_proof", algs="${ALGS}"`))
      assert.equal(response.body.code, 'APP_ERR_BEARER_INVALID')
    })
  }

  test('a refused token with a valid proof: invalid_token, and the proof id is not recorded', async () => {
    const expired = await partnerToken({ exp: Math.floor(Date.now() / 1000) - 600, cnf: { jkt: await calculateJwkThumbprint(key.publicJwk) } })
    const jti = randomUUID()
    const response = await call(expired, [await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(expired), jti })])
    assert.equal(response.status, 401)
    assert.equal(response.failure, 'expired')
    assert.match(response.challenge, /^DPoP error="invalid_token"/)
    assert.equal(await new ReplayCache(t.app.state, 'dpop').seen(`${await calculateJwkThumbprint(key.publicJwk)}.${jti}`), false)
  })

  test('an RSA proof key works too (PS256 is in the scheme\'s list)', async () => {
    const { privateKey, publicKey } = await generateKeyPair('PS256', { extractable: true })
    const rsa = { privateKey, publicJwk: await exportJWK(publicKey) }
    const bound = await partnerToken({ cnf: { jkt: await calculateJwkThumbprint(rsa.publicJwk) } })
    const response = await call(bound, [await dpopProof(rsa, 'GET', ORDERS_URL, { ath: ath(bound) }, { alg: 'PS256' })])
    assert.equal(response.status, 200)
  })

  test('no token or proof appears in any log line', () => {
    const text = t.logs.text()
    assert.ok(planted.length > 20)
    for (const value of planted) {
      assert.equal(text.includes(value), false, 'a token or proof was logged')
      const signature = value.split('.')[2]
      if (signature !== undefined && signature.length > 20) assert.equal(text.includes(signature), false, 'a signature was logged')
    }
  })
})

describe('DPoP htu behind Hosting:PublicOrigin', () => {
  let partner: TokenIdp
  let t: BearerTestApp
  let key: DPoPKey

  before(async () => {
    partner = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: { Partner: { Issuer: partner.issuer, JwksUri: `${partner.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE] } },
      settings: { Hosting: { PublicOrigin: 'https://app.example.com' } }
    })
    key = await dpopKey()
  })
  after(async () => {
    await t?.app.close()
    await partner?.close()
  })

  test('htu is the public origin and path: the public URL passes, the internal one is dpop_url', async () => {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ iss: partner.issuer, aud: PARTNER_AUDIENCE, sub: 'ada', iat: now, exp: now + 300, cnf: { jkt: await calculateJwkThumbprint(key.publicJwk) } })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(partner.signingKey)
    const send = async (htu: string): Promise<{ status: number, failure: unknown }> => {
      const before = t.logs.events('bearer.refused').length
      const response = await t.app.inject({ url: '/api/orders?x=1', headers: { host: 'app.example.com', authorization: `DPoP ${token}`, dpop: await dpopProof(key, 'GET', htu, { ath: ath(token) }) } })
      return { status: response.statusCode, failure: t.logs.events('bearer.refused').slice(before)[0]?.failure }
    }
    assert.deepEqual(await send('https://app.example.com/api/orders'), { status: 200, failure: undefined })
    assert.deepEqual(await send('http://localhost:80/api/orders'), { status: 401, failure: 'dpop_url' })
    assert.deepEqual(await send('https://APP.example.com:443/api/orders#fragment'), { status: 200, failure: undefined })
  })
})

/** A token of `idp` bound to `key`, as a DPoP-issuing authorization server mints it. */
async function boundToken (idp: TokenIdp, key: DPoPKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return await new SignJWT({ iss: idp.issuer, aud: PARTNER_AUDIENCE, sub: 'ada', iat: now, exp: now + 300, cnf: { jkt: await calculateJwkThumbprint(key.publicJwk) } })
    .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(idp.signingKey)
}

describe('DPoP proof records per client (issue 40, item 6: RateLimits:DPoPProofsPerWindow)', () => {
  let partner: TokenIdp
  let t: BearerTestApp
  let key: DPoPKey

  before(async () => {
    partner = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: { Partner: { Issuer: partner.issuer, JwksUri: `${partner.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE] } },
      settings: { RateLimits: { DPoPProofsPerWindow: 2 } }
    })
    key = await dpopKey()
  })
  after(async () => {
    await t?.app.close()
    await partner?.close()
  })

  test('over the limit a client\'s valid proof is answered 429 before its jti is written; another client still passes', async () => {
    const token = await boundToken(partner, key)
    const send = async (jti: string, remoteAddress = '203.0.113.7'): Promise<{ status: number, retryAfter: unknown }> => {
      const response = await t.app.inject({ url: '/api/orders', remoteAddress, headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(key, 'GET', ORDERS_URL, { ath: ath(token), jti }) } })
      return { status: response.statusCode, retryAfter: response.headers['retry-after'] }
    }
    assert.equal((await send(randomUUID())).status, 200)
    assert.equal((await send(randomUUID())).status, 200)
    const over = randomUUID()
    const held = await send(over)
    assert.equal(held.status, 429)
    assert.match(String(held.retryAfter), /^[1-9][0-9]*$/)
    assert.deepEqual(t.logs.events('bearer.refused').map((line) => [line.failure, line.limit]), [['rate_limited', 'dpop_proofs']])
    const recorded = new ReplayCache(t.app.state, 'dpop')
    assert.equal(await recorded.seen(`${await calculateJwkThumbprint(key.publicJwk)}.${over}`), false, 'nothing written over the limit')
    assert.equal((await send(randomUUID(), '198.51.100.9')).status, 200, 'the limit is per client')
  })
})

describe('DPoP outside Development without a validated origin (issue 40, item 4: a provider-source app)', () => {
  let key: DPoPKey
  const apps: TestApp[] = []
  /** A Production app whose provider source adds a JwtBearer scheme, with `hosting`. */
  async function providerSourceApp (hosting: Record<string, string | string[]>): Promise<TestApp> {
    const built = await buildTestApp({
      nodeEnv: 'Production',
      settings: { Hosting: hosting },
      providerSource: async () => [{ scheme: 'Customer', tenant: 'tenant-a', settings: { Type: 'JwtBearer', Issuer: 'https://issuer.invalid', JwksUri: 'https://issuer.invalid/jwks', Audiences: [PARTNER_AUDIENCE] } }]
    })
    apps.push(built)
    return built
  }
  before(async () => { key = await dpopKey() })
  after(async () => { for (const built of apps) await built.app.close() })

  async function refusalOf (t: TestApp, host: string): Promise<{ status: number, failure: unknown }> {
    const token = `${encode({ alg: 'RS256', typ: 'at+jwt' })}.${encode({ iss: 'https://unknown-issuer.example', aud: PARTNER_AUDIENCE, sub: 'ada', exp: Math.floor(Date.now() / 1000) + 300 })}.c2lnbmF0dXJl`
    const before = t.logs.events('bearer.refused').length
    const response = await t.app.inject({ url: '/api/application-information', headers: { host, authorization: `DPoP ${token}`, dpop: await dpopProof(key, 'GET', `http://${host}/api/application-information`, { ath: ath(token) }) } })
    return { status: response.statusCode, failure: t.logs.events('bearer.refused').slice(before)[0]?.failure }
  }

  test('a proof naming the Host the client sent is refused (dpop_url) and startup says why', async () => {
    const t = await providerSourceApp({ PublicOrigin: '', AllowedHosts: [] })
    assert.deepEqual(await refusalOf(t, 'attacker.example'), { status: 401, failure: 'dpop_url' })
    assert.deepEqual(t.logs.events('bearer.dpop.no_origin').map((line) => line.settings), [['ProjectTemplate:Hosting:PublicOrigin', 'ProjectTemplate:Hosting:AllowedHosts']])
  })

  test('with AllowedHosts (no *) the host filter validated the Host: the proof\'s htu passes and the token decides', async () => {
    const t = await providerSourceApp({ PublicOrigin: '', AllowedHosts: ['api.example.test'] })
    const { failure } = await refusalOf(t, 'api.example.test')
    assert.notEqual(failure, undefined)
    assert.notEqual(failure, 'dpop_url', 'the token, unknown here, is what is refused')
    assert.equal(t.logs.events('bearer.dpop.no_origin').length, 0)
  })
})
