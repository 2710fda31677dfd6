/**
 * An upper bound on a token's lifetime and no `iat` from the future (issue 40, item 6). JWTs
 * signed by jose with the key a loopback issuer serves (helpers/providers/token-idp.ts), read at a
 * fixed clock: `exp - iat` over MaxTokenLifetimeSeconds (default one day) is `lifetime`, a token
 * without `iat` is judged by `exp - now` (with the clock skew), an `iat` ahead by more than the
 * clock skew is `issued_in_future`. The same checks on introspection answers from oidc-provider
 * (opaque tokens of 300 seconds, RFC 7662 answers carrying `iat` and `exp`).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT, type JWTPayload } from 'jose'
import type { BearerFailure } from '../../src/bearer/failures.js'
import { JwtBearerScheme, type JwtBearerSettings } from '../../src/bearer/jwt-bearer-scheme.js'
import { Secret } from '../../src/config/secret.js'
import { bearerFailureOf } from '../helpers/bearer-app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const AUDIENCE = 'api://orders'
const TRANSFORMATION = { Enabled: true, RemoveOriginalClaims: false }
const DAY = 86_400

describe('the lifetime of a JWT access token', () => {
  let idp: TokenIdp
  const nowMs = Date.now()
  const now = Math.floor(nowMs / 1000)
  before(async () => { idp = await startTokenIdp('unused-client') })
  after(async () => { await idp?.close() })

  function scheme (overrides: Partial<JwtBearerSettings> = {}): JwtBearerScheme {
    return new JwtBearerScheme({
      scheme: 'Api',
      keyPrefix: 'ProjectTemplate:Authentication:Schemes:Api',
      settings: { Authority: '', Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [AUDIENCE], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {}, ...overrides },
      allowInsecureRequests: true,
      timeoutMs: 5000,
      now: () => nowMs
    })
  }

  async function mint (claims: JWTPayload): Promise<string> {
    return await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'user-1', iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(idp.signingKey)
  }

  const cases: ReadonlyArray<{ readonly name: string, readonly claims: JWTPayload, readonly settings?: Partial<JwtBearerSettings>, readonly failure?: BearerFailure }> = [
    { name: 'exp - iat one day (the default bound)', claims: { iat: now - 60, exp: now - 60 + DAY } },
    { name: 'exp - iat one day and a second', claims: { iat: now - 60, exp: now - 60 + DAY + 1 }, failure: 'lifetime' },
    { name: 'a year-long token', claims: { exp: now + 365 * DAY }, failure: 'lifetime' },
    { name: 'exp - iat over a scheme\'s own bound (MaxTokenLifetimeSeconds 600)', claims: { exp: now + 601 }, settings: { MaxTokenLifetimeSeconds: 600 }, failure: 'lifetime' },
    { name: 'exp - iat at a scheme\'s own bound', claims: { exp: now + 600 }, settings: { MaxTokenLifetimeSeconds: 600 } },
    { name: 'an old iat within the bound (issued 23 hours ago, one hour left)', claims: { iat: now - 23 * 3600, exp: now + 3600 } },
    { name: 'no iat, exp one day and the clock skew from now', claims: { iat: undefined, exp: now + DAY + 60 } },
    { name: 'no iat, exp further than one day and the clock skew', claims: { iat: undefined, exp: now + DAY + 61 }, failure: 'lifetime' },
    { name: 'iat ahead by the clock skew', claims: { iat: now + 60 } },
    { name: 'iat ahead by more than the clock skew', claims: { iat: now + 61 }, failure: 'issued_in_future' },
    { name: 'iat a day ahead, exp - iat short', claims: { iat: now + DAY, exp: now + DAY + 300 }, failure: 'issued_in_future' },
    { name: 'iat a string', claims: { iat: 'now' as never }, failure: 'malformed' }
  ]
  for (const { name, claims, settings, failure } of cases) {
    test(`${failure === undefined ? 'accepted' : `refused (${failure})`}: ${name}`, async () => {
      const token = await mint(claims)
      if (failure === undefined) assert.equal((await scheme(settings).authenticate(token, TRANSFORMATION)).principal.subject, 'user-1')
      else assert.equal(await bearerFailureOf(scheme(settings).authenticate(token, TRANSFORMATION)), failure)
    })
  }
})

describe('the lifetime of an introspected token (oidc-provider, opaque tokens of 300 seconds)', () => {
  const OPAQUE_RESOURCE = 'https://opaque.example.test/'
  const API_SECRET = 'PLANTED-introspection-secret-40'
  let idp: ResourceIdp
  before(async () => {
    idp = await startResourceIdp({
      resource: 'https://api.example.test/',
      opaqueResource: OPAQUE_RESOURCE,
      scopes: ['orders.read'],
      clients: { billing: 'billing-secret' },
      introspectionClients: [{ client_id: 'orders-api', client_secret: API_SECRET, grant_types: [], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic' }]
    })
  })
  after(async () => { await idp?.close() })

  function scheme (overrides: Partial<JwtBearerSettings>, now?: () => number): JwtBearerScheme {
    return new JwtBearerScheme({
      scheme: 'Api',
      keyPrefix: 'ProjectTemplate:Authentication:Schemes:Api',
      settings: {
        Authority: idp.issuer,
        Issuer: '',
        JwksUri: '',
        Audiences: [OPAQUE_RESOURCE],
        ValidAlgorithms: [],
        ClockSkewSeconds: 60,
        ClaimMappings: {},
        Introspection: { ClientId: 'orders-api', ClientSecret: new Secret(API_SECRET), Endpoint: '', TokenEndpointAuthMethod: 'client_secret_basic', ClientAssertionKeys: [], ClientAssertionCertificates: [], CacheSeconds: 0 },
        ...overrides
      },
      allowInsecureRequests: true,
      timeoutMs: 5000,
      ...(now === undefined ? {} : { now })
    })
  }

  test('within the bound (the default one day) the answer is the principal', async () => {
    const token = await idp.clientCredentialsToken('billing', 'orders.read', OPAQUE_RESOURCE)
    assert.equal(token.split('.').length, 1, 'an opaque token')
    assert.equal((await scheme({}).authenticate(token, TRANSFORMATION)).principal.subject, 'billing')
  })

  test('an answer whose exp - iat is over MaxTokenLifetimeSeconds is refused (lifetime)', async () => {
    const token = await idp.clientCredentialsToken('billing', 'orders.read', OPAQUE_RESOURCE)
    assert.equal(await bearerFailureOf(scheme({ MaxTokenLifetimeSeconds: 299 }).authenticate(token, TRANSFORMATION)), 'lifetime')
    assert.equal((await scheme({ MaxTokenLifetimeSeconds: 300 }).authenticate(token, TRANSFORMATION)).principal.subject, 'billing')
  })

  test('an answer whose iat is ahead of the API\'s clock by more than the skew is refused (issued_in_future)', async () => {
    const token = await idp.clientCredentialsToken('billing', 'orders.read', OPAQUE_RESOURCE)
    const behind = (): number => Date.now() - 120_000
    assert.equal(await bearerFailureOf(scheme({}, behind).authenticate(token, TRANSFORMATION)), 'issued_in_future')
  })
})
