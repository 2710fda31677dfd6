/**
 * What a token's JOSE header may say (issue 40, items 3 and 6), against an issuer serving its key
 * set over real HTTP on loopback (helpers/providers/token-idp.ts), tokens signed by jose with the
 * issuer's own key. RFC 9068's `typ` when the scheme says its issuer sets it
 * (RequireAccessTokenType: `at+jwt` or `application/at+jwt` in any case, nothing else). JWS
 * extensions: jose recognises `b64` (RFC 7797) by default and, when `crit` names it, verifies the
 * signature over the raw payload segment, which the core would then read as base64url; jose
 * refuses other `crit` names only after fetching the key. The core uses no extension: any `crit`,
 * and `b64` other than true, is refused before any key is fetched (`unsupported_header`).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { compactVerify, createLocalJWKSet, FlattenedSign, SignJWT, type JWTPayload } from 'jose'
import type { BearerFailure } from '../../src/bearer/failures.js'
import { JwtBearerScheme, type JwtBearerSettings } from '../../src/bearer/jwt-bearer-scheme.js'
import { bearerFailureOf } from '../helpers/bearer-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const AUDIENCE = 'api://orders'
const TRANSFORMATION = { Enabled: true, RemoveOriginalClaims: false }

describe('the JOSE header of a bearer token', () => {
  let idp: TokenIdp
  before(async () => { idp = await startTokenIdp('unused-client') })
  after(async () => { await idp?.close() })

  function scheme (overrides: Partial<JwtBearerSettings> = {}): JwtBearerScheme {
    return new JwtBearerScheme({
      scheme: 'Api',
      keyPrefix: 'ProjectTemplate:Authentication:Schemes:Api',
      settings: { Authority: '', Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [AUDIENCE], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {}, ...overrides },
      allowInsecureRequests: true,
      timeoutMs: 5000
    })
  }

  const claims = (): JWTPayload => {
    const now = Math.floor(Date.now() / 1000)
    return { iss: idp.issuer, aud: AUDIENCE, sub: 'user-1', iat: now, exp: now + 300 }
  }

  async function mint (header: Record<string, unknown>): Promise<string> {
    return await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'known', ...header }).sign(idp.signingKey)
  }

  /** Signs `header` and valid claims as a compact JWS without jose's header checks (jose refuses to sign an unknown `crit`). */
  async function signRaw (header: Record<string, unknown>): Promise<string> {
    const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
    const input = `${encode({ alg: 'RS256', kid: 'known', ...header })}.${encode(claims())}`
    const signature = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', idp.signingKey, new TextEncoder().encode(input))
    return `${input}.${Buffer.from(signature).toString('base64url')}`
  }

  /** A compact JWS with `b64: false` (RFC 7797) whose raw payload is the base64url of valid claims. */
  async function unencodedPayloadToken (): Promise<string> {
    const payload = Buffer.from(JSON.stringify(claims())).toString('base64url')
    const jws = await new FlattenedSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt', b64: false, crit: ['b64'] })
      .sign(idp.signingKey)
    return `${jws.protected}.${payload}.${jws.signature}`
  }

  const typs: ReadonlyArray<{ readonly typ: string | undefined, readonly accepted: boolean }> = [
    { typ: 'at+jwt', accepted: true },
    { typ: 'AT+JWT', accepted: true },
    { typ: 'application/at+jwt', accepted: true },
    { typ: 'Application/At+Jwt', accepted: true },
    { typ: 'JWT', accepted: false },
    { typ: undefined, accepted: false },
    { typ: 'text/at+jwt', accepted: false },
    { typ: 'application/at+jwt+extra', accepted: false },
    { typ: 'at+jwt ', accepted: false }
  ]
  for (const { typ, accepted } of typs) {
    test(`RequireAccessTokenType: typ ${JSON.stringify(typ)} is ${accepted ? 'accepted' : 'refused (type)'}`, async () => {
      const token = await mint(typ === undefined ? {} : { typ })
      if (accepted) assert.equal((await scheme({ RequireAccessTokenType: true }).authenticate(token, TRANSFORMATION)).principal.subject, 'user-1')
      else assert.equal(await bearerFailureOf(scheme({ RequireAccessTokenType: true }).authenticate(token, TRANSFORMATION)), 'type')
    })
  }

  test('without RequireAccessTokenType, typ JWT and no typ are still accepted (Entra ID, Keycloak)', async () => {
    assert.equal((await scheme().authenticate(await mint({ typ: 'JWT' }), TRANSFORMATION)).principal.subject, 'user-1')
    assert.equal((await scheme().authenticate(await mint({}), TRANSFORMATION)).principal.subject, 'user-1')
  })

  test('jose by default verifies a b64: false token whose crit names b64 (what the core must not rely on)', async () => {
    const token = await unencodedPayloadToken()
    const { payload } = await compactVerify(token, createLocalJWKSet({ keys: idp.publishedKeys as never }), { algorithms: ['RS256'] })
    assert.equal(new TextDecoder().decode(payload), token.split('.')[1], 'jose returns the raw segment, not its decoding')
  })

  const refused: ReadonlyArray<{ readonly name: string, readonly failure: BearerFailure, readonly token: () => Promise<string> }> = [
    { name: 'b64: false with crit ["b64"] (RFC 7797)', failure: 'unsupported_header', token: unencodedPayloadToken },
    { name: 'b64: false without crit', failure: 'unsupported_header', token: async () => await mint({ b64: false }) },
    { name: 'an unknown crit extension', failure: 'unsupported_header', token: async () => await signRaw({ crit: ['urn:example:ext'], 'urn:example:ext': 1 }) },
    { name: 'crit naming a registered claim-like name', failure: 'unsupported_header', token: async () => await signRaw({ crit: ['exp'], exp: 1 }) },
    { name: 'an empty crit', failure: 'unsupported_header', token: async () => await signRaw({ crit: [] }) }
  ]
  for (const { name, failure, token } of refused) {
    test(`refused before any key is fetched: ${name} (${failure})`, async () => {
      const fetched = idp.jwksRequests
      assert.equal(await bearerFailureOf(scheme().authenticate(await token(), TRANSFORMATION)), failure)
      assert.equal(idp.jwksRequests, fetched)
    })
  }

  test('b64: true (the default spelled out) is accepted', async () => {
    assert.equal((await scheme().authenticate(await mint({ b64: true }), TRANSFORMATION)).principal.subject, 'user-1')
  })
})
