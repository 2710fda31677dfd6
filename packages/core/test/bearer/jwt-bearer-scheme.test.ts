/**
 * JWT access-token validation of a bearer scheme (issue 35, item 1 and "Bad input"), against an
 * issuer serving discovery and its key set over real HTTP on loopback (helpers/providers/token-idp.ts)
 * with tokens minted by jose: every hostile shape is refused with its failure class, before any
 * cryptography where the shape alone decides; a valid token becomes the normalized principal with
 * (scheme, issuer, subject); an unknown-kid flood costs one key refetch per 30 s.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createPublicKey } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import type { BearerFailure } from '../../src/bearer/failures.js'
import { bearerFailureOf } from '../helpers/bearer-app.js'
import { BEARER_UNKNOWN_KEY_REFETCH_INTERVAL_MS, JwtBearerScheme, type JwtBearerSettings } from '../../src/bearer/jwt-bearer-scheme.js'
import { MAX_BEARER_TOKEN_BYTES } from '../../src/bearer/token-shape.js'
import { userKeyOf } from '../../src/session/user-identity.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { Secret } from '../../src/config/secret.js'

const AUDIENCE = 'api://orders'
const TRANSFORMATION = { Enabled: true, RemoveOriginalClaims: false }
const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

function settingsFor (idp: TokenIdp, overrides: Partial<JwtBearerSettings> = {}): JwtBearerSettings {
  return { Authority: idp.issuer, Issuer: '', JwksUri: '', Audiences: [AUDIENCE], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {}, ...overrides }
}

function schemeFor (idp: TokenIdp, overrides: Partial<JwtBearerSettings> = {}, now?: () => number): JwtBearerScheme {
  return new JwtBearerScheme({
    scheme: 'Api',
    keyPrefix: 'ProjectTemplate:Authentication:Schemes:Api',
    settings: settingsFor(idp, overrides),
    allowInsecureRequests: true,
    timeoutMs: 5000,
    ...(now === undefined ? {} : { now })
  })
}

describe('a JwtBearer scheme against an issuer on loopback', () => {
  let idp: TokenIdp
  let hmacSecret: Uint8Array
  let es256: { privateKey: CryptoKey, publicJwk: Record<string, unknown> }
  before(async () => {
    idp = await startTokenIdp('unused-client')
    // The issuer's public RSA key as PEM text: what an "HMAC with the public key" forgery signs with.
    hmacSecret = new TextEncoder().encode(createPublicKey({ key: idp.publishedKeys[0] as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString())
    const pair = await generateKeyPair('ES256', { extractable: true })
    es256 = { privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid: 'ec', alg: 'ES256' } }
  })
  after(async () => { await idp?.close() })

  async function mint (claims: JWTPayload = {}, header: Record<string, unknown> = {}, key?: CryptoKey | Uint8Array): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'user-1', iat: now, exp: now + 300, scope: 'orders.read orders.write', roles: ['Administrator'], ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt', ...header })
      .sign(key ?? idp.signingKey)
  }

  test('a valid at+jwt token is the normalized principal of (scheme, issuer, subject), with its scopes', async () => {
    const authentication = await schemeFor(idp).authenticate(await mint(), TRANSFORMATION)
    const principal = authentication.principal
    assert.equal(principal.scheme, 'Api')
    assert.deepEqual(principal.identity, { scheme: 'Api', issuer: idp.issuer, subject: 'user-1' })
    assert.equal(principal.userKey, userKeyOf({ scheme: 'Api', issuer: idp.issuer, subject: 'user-1' }))
    assert.ok(principal.hasAnyValue('application:role', new Set(['Administrator'])))
    assert.deepEqual(authentication.scopes, ['orders.read', 'orders.write'])
    assert.equal(authentication.machine, false)
    assert.ok(principal.ticket.sessionId.startsWith('bearer.'))
    assert.equal(principal.claims.some((claim) => claim.type === 'exp' || claim.type === 'aud'), false, 'token claims are not caller claims')
  })

  test('the common non-at+jwt shapes are accepted: typ JWT, no typ, aud as an array, scp as an array', async () => {
    const scheme = schemeFor(idp)
    assert.equal((await scheme.authenticate(await mint({}, { typ: 'JWT' }), TRANSFORMATION)).principal.subject, 'user-1')
    assert.equal((await scheme.authenticate(await mint({ aud: ['other', AUDIENCE] }, { typ: undefined }), TRANSFORMATION)).principal.subject, 'user-1')
    assert.deepEqual((await scheme.authenticate(await mint({ scope: undefined, scp: ['a', 'b'] }), TRANSFORMATION)).scopes, ['a', 'b'])
  })

  test('ClaimMappings reads nested roles (Keycloak realm_access.roles) as the OpenID Connect section does', async () => {
    const scheme = schemeFor(idp, { ClaimMappings: { 'realm_access.roles': 'role' } })
    const authentication = await scheme.authenticate(await mint({ roles: undefined, realm_access: { roles: ['Auditor'] } }), TRANSFORMATION)
    assert.ok(authentication.principal.hasAnyValue('application:role', new Set(['Auditor'])))
  })

  test('a client-credentials token (sub is the client) is a machine principal carrying its client id', async () => {
    const authentication = await schemeFor(idp).authenticate(await mint({ sub: 'billing-service', client_id: 'billing-service', roles: undefined }), TRANSFORMATION)
    assert.equal(authentication.machine, true)
    assert.equal(authentication.clientId, 'billing-service')
    assert.equal(authentication.principal.find('application:name'), undefined, 'a machine has no user name')
    const entra = await schemeFor(idp).authenticate(await mint({ sub: 'sp-object-id', azp: 'client-guid', idtyp: 'app' }), TRANSFORMATION)
    assert.equal(entra.machine, true)
    assert.equal(entra.clientId, 'client-guid')
  })

  const hostile: ReadonlyArray<{ readonly name: string, readonly failure: BearerFailure, readonly token: (t: { mint: typeof mint, hmac: Uint8Array }) => Promise<string> | string }> = [
    { name: 'not a JWT', failure: 'malformed', token: () => 'opaque-token-value' },
    { name: 'two segments', failure: 'malformed', token: () => `${encode({ alg: 'RS256' })}.${encode({ sub: 'x' })}` },
    { name: 'header not JSON', failure: 'malformed', token: () => `${Buffer.from('{nope').toString('base64url')}.${encode({})}.c2ln` },
    { name: 'header a JSON array', failure: 'malformed', token: () => `${encode(['RS256'])}.${encode({})}.c2ln` },
    { name: 'payload not an object', failure: 'malformed', token: () => `${encode({ alg: 'RS256', kid: 'known' })}.${encode('text')}.c2ln` },
    { name: 'oversized (over 8 KB)', failure: 'oversized', token: async ({ mint }) => await mint({ padding: 'x'.repeat(MAX_BEARER_TOKEN_BYTES) }) },
    { name: 'alg none', failure: 'algorithm', token: () => `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ iss: 'x', aud: AUDIENCE, sub: 'u', exp: 9999999999 })}.` },
    { name: 'HMAC with the issuer\'s public key as secret', failure: 'algorithm', token: async ({ mint, hmac }) => await mint({}, { alg: 'HS256' }, hmac) },
    { name: 'a logout token used as access token (typ logout+jwt)', failure: 'type', token: async ({ mint }) => await mint({}, { typ: 'logout+jwt' }) },
    { name: 'an asymmetric algorithm the scheme does not list (PS256)', failure: 'algorithm', token: () => `${encode({ alg: 'PS256', kid: 'known' })}.${encode({ iss: idp.issuer, aud: AUDIENCE, sub: 'u', exp: 9999999999 })}.c2ln` },
    { name: 'signed by a key the issuer never published', failure: 'unknown_key', token: async ({ mint }) => await mint({}, { kid: 'invented' }, idp.unknownKey) },
    { name: 'a published kid, signed by another key', failure: 'signature', token: async ({ mint }) => await mint({}, {}, idp.unknownKey) },
    { name: 'expired', failure: 'expired', token: async ({ mint }) => await mint({ exp: Math.floor(Date.now() / 1000) - 61 }) },
    { name: 'no exp', failure: 'expired', token: async ({ mint }) => await mint({ exp: undefined }) },
    { name: 'exp a string', failure: 'malformed', token: async ({ mint }) => await mint({ exp: 'tomorrow' as never }) },
    { name: 'not yet valid', failure: 'not_yet_valid', token: async ({ mint }) => await mint({ nbf: Math.floor(Date.now() / 1000) + 120 }) },
    { name: 'wrong audience', failure: 'audience', token: async ({ mint }) => await mint({ aud: 'api://another-api' }) },
    { name: 'no audience', failure: 'audience', token: async ({ mint }) => await mint({ aud: undefined }) },
    { name: 'wrong issuer', failure: 'issuer', token: async ({ mint }) => await mint({ iss: 'https://evil.example' }) },
    { name: 'no subject and no client', failure: 'no_subject', token: async ({ mint }) => await mint({ sub: undefined }) }
  ]

  for (const { name, failure, token } of hostile) {
    test(`refused: ${name} (${failure})`, async () => {
      const scheme = schemeFor(idp, { ValidAlgorithms: ['RS256', 'ES256'] })
      assert.equal(await bearerFailureOf(scheme.authenticate(await token({ mint, hmac: hmacSecret }), TRANSFORMATION)), failure)
    })
  }

  test('shape, size and algorithm refusals come before any key set is fetched', async () => {
    const fresh = await startTokenIdp('unused-client')
    try {
      const scheme = schemeFor(fresh, { Authority: '', Issuer: fresh.issuer, JwksUri: `${fresh.issuer}/jwks` })
      for (const token of ['x.y', `${encode({ alg: 'none' })}.${encode({})}.`, `${encode({ alg: 'HS256' })}.${encode({})}.c2ln`, 'a'.repeat(MAX_BEARER_TOKEN_BYTES + 1)]) {
        await bearerFailureOf(scheme.authenticate(token, TRANSFORMATION))
      }
      assert.equal(fresh.jwksRequests, 0)
    } finally {
      await fresh.close()
    }
  })

  test('Issuer and JwksUri without Authority; ES256 keys published beside RS256', async () => {
    idp.publishedKeys.push(es256.publicJwk)
    try {
      const scheme = schemeFor(idp, { Authority: '', Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks` })
      const token = await mint({}, { alg: 'ES256', kid: 'ec' }, es256.privateKey)
      assert.equal((await scheme.authenticate(token, TRANSFORMATION)).principal.subject, 'user-1')
    } finally {
      idp.publishedKeys.pop()
    }
  })

  test('an unknown-kid flood refetches the key set at most once per 30 s per scheme', async () => {
    let now = Date.now()
    const scheme = schemeFor(idp, {}, () => now)
    await scheme.authenticate(await mint(), TRANSFORMATION)
    const baseline = idp.jwksRequests
    const forged = await Promise.all(Array.from({ length: 50 }, async (_, index) => await mint({ jti: String(index) }, { kid: `invented-${index}` }, idp.unknownKey)))
    for (const token of forged) assert.equal(await bearerFailureOf(scheme.authenticate(token, TRANSFORMATION)), 'unknown_key')
    assert.equal(idp.jwksRequests, baseline + 1, 'one refetch for the whole flood')
    now += BEARER_UNKNOWN_KEY_REFETCH_INTERVAL_MS - 1000
    for (const token of forged.slice(0, 10)) await bearerFailureOf(scheme.authenticate(token, TRANSFORMATION))
    assert.equal(idp.jwksRequests, baseline + 1, 'none within the 30 s')
    now += 2000
    for (const token of forged.slice(0, 10)) await bearerFailureOf(scheme.authenticate(token, TRANSFORMATION))
    assert.equal(idp.jwksRequests, baseline + 2, 'one more after 30 s')
  })

  test('a rotated key is found by the one refetch (the first call after the rotation succeeds)', async () => {
    const scheme = schemeFor(idp)
    await scheme.authenticate(await mint(), TRANSFORMATION)
    const rotated = await generateKeyPair('RS256', { extractable: true })
    idp.publishedKeys.push({ ...(await exportJWK(rotated.publicKey)), kid: 'rotated', alg: 'RS256' })
    try {
      assert.equal((await scheme.authenticate(await mint({}, { kid: 'rotated' }, rotated.privateKey), TRANSFORMATION)).principal.subject, 'user-1')
    } finally {
      idp.publishedKeys.pop()
    }
  })

  test('discovery whose issuer is not the Authority makes the scheme unavailable (keys_unavailable), retried no sooner than 30 s', async () => {
    const scheme = schemeFor(idp, { Authority: `${idp.issuer}/tenant` })
    assert.equal(await bearerFailureOf(scheme.authenticate(await mint(), TRANSFORMATION)), 'keys_unavailable')
    assert.deepEqual(scheme.status(), { available: false, reason: 'metadata_unreachable' })
  })
})

describe('the keys a JwtBearer scheme names', () => {
  test('under a configuration root other than the default, a refused introspection key names its setting under that root', () => {
    const issuer = 'https://issuer.example.test'
    const introspection = { ClientId: 'orders-api', ClientSecret: new Secret(''), Endpoint: `${issuer}/introspect`, TokenEndpointAuthMethod: 'private_key_jwt' as const, ClientAssertionKeys: [new Secret('not a key')], ClientAssertionCertificates: [], CacheSeconds: 60 }
    const settings: JwtBearerSettings = { Authority: '', Issuer: issuer, JwksUri: `${issuer}/jwks`, Audiences: [AUDIENCE], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {}, Introspection: introspection }
    const open = (): JwtBearerScheme => new JwtBearerScheme({ scheme: 'Api', keyPrefix: 'AcmePortal:Authentication:Schemes:Api', settings, allowInsecureRequests: false, timeoutMs: 5000 })
    assert.throws(open, (error: unknown) => error instanceof Error && error.message.startsWith('AcmePortal:Authentication:Schemes:Api:Introspection:ClientAssertionKeys'))
  })
})
