/**
 * OpenID Connect relying-party negatives (issue 6): the relying-party checks of the OpenID
 * Foundation's RP conformance profiles (rp-id_token-*, rp-nonce-invalid, rp-userinfo-bad-sub-claim,
 * rp-key-rotation-op-sign-key), reproduced against a provider the test controls (token-idp.ts:
 * discovery, JWKS and userinfo served for real, ID tokens minted with jose) and the real app over
 * loopback HTTP.
 *
 * One table, one harness. Every hostile row must end with: no session cookie, a 302 to
 * `/Account/Login?failure=<page>` whose page renders 200 with the fixed message (no stack trace,
 * no token), exactly one `external.sign_in.failed` line naming the provider and the expected
 * failure class, and none of the client secret, the codes or the minted tokens anywhere in the
 * captured log text. The positive rows go through the same harness and must sign in, so a harness
 * that refused everything would fail.
 *
 * Key rotation (rp-key-rotation-op-sign-key) runs against its own provider and app with the clock
 * advanced through Date.now: the app (oidc/provider-keys.ts) keeps the downloaded JWKS for 5
 * minutes and re-downloads it at once for an unknown `kid`, at most once a minute per provider.
 * The rows advance the clock past those limits the way real time would. A `kid` the fresh set does
 * not hold is `unknown_key`; a published key that does not verify is `signature`.
 */
import { after, before, describe, mock, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { exportJWK, exportSPKI, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import { SIGN_IN_OUTCOMES } from '../../src/sign-in/sign-in-failure.js'
import { findPlanted, HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenAnswer, type TokenIdp } from '../helpers/providers/token-idp.js'

const PROVIDER = 'OpenIdConnect'
const SESSION_COOKIE = '__Host-ProjectTemplate.Web.Authentication'
const CLIENT_ID = 'rp-negatives-client'
const CLIENT_SECRET = 'rp-negatives-secret-PLANTED-5e81c4d2'
/** Every authorization code sent to the app (planted values for the log scan). */
const codes: string[] = []

const realNow = Date.now.bind(Date)
const epoch = (): number => Math.floor(Date.now() / 1000)

/** What a row expects: a signed-in user, or a refusal with its logged class and login-page message. */
type Outcome = { readonly signedIn: true } | { readonly failure: string, readonly page: 'failed' | 'correlation' }
const SIGNED_IN: Outcome = { signedIn: true }
const refused = (failure: string, page: 'failed' | 'correlation' = 'failed'): Outcome => ({ failure, page })

interface Flow {
  readonly idp: TokenIdp
  readonly nonce: string
  readonly state: string
}

interface Row {
  /** Conformance test id (or `extra-*` for a variant this suite adds) and what it sends. */
  readonly name: string
  readonly expect: Outcome
  /** The token endpoint's answer for this flow (default: a valid one). */
  readonly answer?: (flow: Flow) => Promise<TokenAnswer>
  /** Userinfo for this flow (default `{ sub: 'user-1' }`). */
  readonly userInfo?: Record<string, unknown>
  /** The `state` sent back to the callback (default: the flow's own). */
  readonly callbackState?: (flow: Flow) => Promise<string> | string
  /** Runs before the flow starts (publish keys, advance the clock). */
  readonly arrange?: () => Promise<void> | void
  /** Extra checks after the harness's own. */
  readonly verify?: () => void
}

/** Mints an ID token with full control over header and key; claims merge over valid defaults. */
async function mint (idp: TokenIdp, nonce: string, options: { claims?: JWTPayload, header?: { alg: string, kid?: string }, key?: CryptoKey | Uint8Array } = {}): Promise<string> {
  const now = epoch()
  const payload: JWTPayload = { iss: idp.issuer, aud: CLIENT_ID, sub: 'user-1', nonce, iat: now, exp: now + 300, name: 'Ada Lovelace', ...options.claims }
  const header = options.header ?? { alg: 'RS256', kid: 'known' }
  const token = await new SignJWT(payload).setProtectedHeader({ ...header, typ: 'JWT' }).sign(options.key ?? idp.signingKey)
  idp.planted.push(token)
  return token
}

/** A token response carrying `idToken` and a fresh (planted) access token. */
function answerWith (idp: TokenIdp, idToken: string): TokenAnswer {
  const accessToken = `at-${randomBytes(16).toString('hex')}`
  idp.planted.push(accessToken)
  return { body: { access_token: accessToken, token_type: 'Bearer', expires_in: 300, id_token: idToken } }
}

/** The same JWS with one character of its signature changed (a bad signature, rp-id_token-bad-sig-rs256). */
function withBadSignature (token: string): string {
  const [header = '', payload = '', signature = ''] = token.split('.')
  const index = Math.floor(signature.length / 2)
  const swapped = signature[index] === 'A' ? 'B' : 'A'
  return `${header}.${payload}.${signature.slice(0, index)}${swapped}${signature.slice(index + 1)}`
}

/** An unsecured JWS (`alg: none`) with the `known` kid. */
function unsecured (idp: TokenIdp, nonce: string): string {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
  const now = epoch()
  const token = `${encode({ alg: 'none', kid: 'known', typ: 'JWT' })}.${encode({ iss: idp.issuer, aud: CLIENT_ID, sub: 'user-1', nonce, iat: now, exp: now + 300 })}.`
  idp.planted.push(token)
  return token
}

/** Values that must never reach a log line or a page: secret, codes, tokens and their JWS parts. */
function plantedValues (idp: TokenIdp): string[] {
  const values = [CLIENT_SECRET, ...codes]
  for (const token of idp.planted) {
    values.push(token)
    const parts = token.split('.')
    if (parts.length === 3) values.push(parts[1] ?? '', parts[2] ?? '')
  }
  return values
}

function sessionCookieLines (response: Response): string[] {
  return response.headers.getSetCookie().filter((line) => {
    const [pair = ''] = line.split(';')
    const index = pair.indexOf('=')
    return pair.slice(0, index).startsWith(SESSION_COOKIE) && pair.slice(index + 1).trim() !== ''
  })
}

function assertNoSessionCookie (exchange: Exchange, label: string): void {
  assert.deepEqual(sessionCookieLines(exchange.response), [], `${label}: a session cookie was set`)
  assert.deepEqual(sessionCookiesSet(exchange.response), [], `${label}: a session cookie was set`)
}

/**
 * The harness: challenge, let the provider answer the token request, call back, then check the
 * outcome, the page, the log line and the log scan.
 */
async function runRow (app: ListeningApp, idp: TokenIdp, row: Row): Promise<void> {
  await row.arrange?.()
  const failuresBefore = app.logs.events('external.sign_in.failed').length
  const successesBefore = app.logs.events('external.sign_in.succeeded').length

  const session = new HttpSession()
  const start = await session.request(`${app.origin}/External/Challenge?provider=${PROVIDER}`)
  assert.equal(start.response.status, 302, 'challenge redirects to the provider')
  const authorize = start.location!
  assert.equal(authorize.origin, idp.issuer)
  const flow: Flow = { idp, nonce: authorize.searchParams.get('nonce') ?? '', state: authorize.searchParams.get('state') ?? '' }
  assert.match(flow.nonce, /^[A-Za-z0-9_-]{43}$/)

  idp.userInfo = row.userInfo ?? { sub: 'user-1' }
  const answer = row.answer ?? (async (f: Flow) => answerWith(f.idp, await mint(f.idp, f.nonce)))
  idp.answer = async () => await answer(flow)
  const code = `code-PLANTED-${randomBytes(12).toString('hex')}`
  codes.push(code)
  const state = row.callbackState === undefined ? flow.state : await row.callbackState(flow)
  const callback = await session.request(`${app.origin}/signin-oidc?code=${code}&state=${encodeURIComponent(state)}`)

  const failures = app.logs.events('external.sign_in.failed').slice(failuresBefore)
  const successes = app.logs.events('external.sign_in.succeeded').slice(successesBefore)
  const planted = plantedValues(idp)
  assert.equal(callback.response.status, 302, 'the callback redirects')
  assert.deepEqual(findPlanted(`${callback.body}\n${callback.response.headers.get('location') ?? ''}`, planted), [], 'the callback response carries no token or code')

  if ('signedIn' in row.expect) {
    assert.deepEqual(failures, [], 'no failure logged')
    assert.equal(successes.length, 1)
    assert.equal(successes[0]?.provider, PROVIDER)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookieLines(callback.response).length, 1, 'exactly one __Host- session cookie')
    const api = await session.request(`${app.origin}/api/application-information`)
    assert.equal(api.response.status, 200, 'the new session is usable')
  } else {
    assertNoSessionCookie(callback, 'callback')
    assert.equal(callback.location?.origin, app.origin)
    assert.equal(callback.location?.pathname, '/Account/Login')
    assert.equal(callback.location?.search, `?failure=${row.expect.page}`)
    assert.deepEqual(successes, [], 'no success logged')
    assert.equal(failures.length, 1, 'exactly one external.sign_in.failed line')
    assert.equal(failures[0]?.provider, PROVIDER)
    assert.equal(failures[0]?.failure, row.expect.failure, `failure class ${JSON.stringify(failures[0])}`)

    const page = await session.request(callback.location!)
    assert.equal(page.response.status, 200)
    assert.match(page.response.headers.get('content-type') ?? '', /^text\/html/)
    assert.ok(page.body.includes(SIGN_IN_OUTCOMES[row.expect.page].message), 'the fixed message is shown')
    assert.doesNotMatch(page.body, /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|OpenIdConnectError|OAUTH_|stack/i, 'no stack trace or library error on the page')
    assert.deepEqual(findPlanted(page.body, [...planted, state, flow.nonce]), [], 'no token, code, state or nonce on the page')
    assertNoSessionCookie(page, 'login page')
    assert.ok(!session.jar.names(new URL(app.origin)).some((name) => name.startsWith(SESSION_COOKIE)), 'the browser holds no session cookie')
    const api = await session.request(`${app.origin}/api/application-information`)
    assert.notEqual(api.response.status, 200, 'still anonymous')
  }
  row.verify?.()
  assert.deepEqual(findPlanted(app.logs.text(), planted), [], 'no secret, code or token in the captured logs')
}

describe('OpenID Connect relying-party negatives (RP conformance profiles)', () => {
  let idp: TokenIdp
  let app: ListeningApp
  let secondKey: CryptoKey

  before(async () => {
    idp = await startTokenIdp(CLIENT_ID)
    // Two RS256 keys published, so a token without `kid` cannot pick one (kid-absent-multiple-jwks).
    const second = await generateKeyPair('RS256', { extractable: true })
    secondKey = second.privateKey
    idp.publishedKeys = [...idp.publishedKeys, { ...(await exportJWK(second.publicKey)), kid: 'second', alg: 'RS256', use: 'sig' }]
    app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } } } })
    await waitUntilReady(app.origin)
  })

  after(async () => {
    await app?.close()
    await idp?.close()
  })

  const rows: Row[] = [
    { name: 'positive control: a valid ID token (RS256, known kid) signs in', expect: SIGNED_IN },
    { name: 'positive control: a token signed with the second published key (kid second) signs in', expect: SIGNED_IN, answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'RS256', kid: 'second' }, key: secondKey })) },
    { name: 'rp-id_token-bad-sig-rs256: a signature that does not verify', expect: refused('signature'), answer: async (f) => answerWith(f.idp, withBadSignature(await mint(f.idp, f.nonce))) },
    { name: 'extra-forged-known-kid: signed by an unpublished key under the known kid', expect: refused('signature'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { key: f.idp.unknownKey })) },
    { name: 'rp-id_token-sig-none: alg none', expect: refused('signature'), answer: async (f) => answerWith(f.idp, unsecured(f.idp, f.nonce)) },
    { name: 'rp-id_token-kid-absent-multiple-jwks: no kid, two published keys', expect: refused('signature'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'RS256' } })) },
    { name: 'unknown kid: signed by an unpublished key under an unknown kid (keys refetched, still unknown)', expect: refused('unknown_key'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'RS256', kid: 'never-published' }, key: f.idp.unknownKey })) },
    { name: 'HS256 signed with the client secret while RS256 is registered', expect: refused('signature'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'HS256' }, key: new TextEncoder().encode(CLIENT_SECRET) })) },
    {
      name: 'extra-key-confusion: HS256 keyed with the provider\'s public key (PEM) under the known kid',
      expect: refused('signature'),
      answer: async (f) => {
        const published = await importJWK(f.idp.publishedKeys[0] as JWK, 'RS256', { extractable: true }) as CryptoKey
        const pem = await exportSPKI(published)
        return answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'HS256', kid: 'known' }, key: new TextEncoder().encode(pem) }))
      }
    },
    {
      name: 'extra-alg-not-pinned: PS256 with the provider\'s own signing key (RS256 registered)',
      expect: refused('signature'),
      answer: async (f) => {
        const pss = await importJWK(await exportJWK(f.idp.signingKey), 'PS256') as CryptoKey
        return answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'PS256', kid: 'known' }, key: pss }))
      }
    },
    { name: 'rp-id_token-issuer-mismatch', expect: refused('issuer'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { iss: 'https://impostor.example.test' } })) },
    { name: 'rp-id_token-aud: audience is another client', expect: refused('audience'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { aud: 'another-client' } })) },
    { name: 'extra audience without azp', expect: refused('audience'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { aud: [CLIENT_ID, 'another-client'] } })) },
    { name: 'extra audience with azp naming another client', expect: refused('audience'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { aud: [CLIENT_ID, 'another-client'], azp: 'another-client' } })) },
    { name: 'expired: exp an hour ago', expect: refused('expired'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { iat: epoch() - 7200, exp: epoch() - 3600 } })) },
    { name: 'iat far in the future (+1 h)', expect: refused('id_token'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { iat: epoch() + 3600, exp: epoch() + 7200 } })) },
    { name: 'extra-iat-beyond-skew: iat 3 minutes in the future', expect: refused('id_token'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { iat: epoch() + 180, exp: epoch() + 600 } })) },
    { name: 'rp-nonce-invalid: nonce of another flow', expect: refused('nonce'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce.split('').reverse().join(''))) },
    { name: 'missing nonce', expect: refused('nonce'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { claims: { nonce: undefined } })) },
    { name: 'mismatched state: a state no correlation cookie was issued for', expect: refused('correlation', 'correlation'), callbackState: () => randomBytes(16).toString('base64url') },
    {
      name: 'mismatched state: the state of another browser\'s flow (login CSRF)',
      expect: refused('correlation', 'correlation'),
      callbackState: async (f) => {
        const other = await new HttpSession().request(`${app.origin}/External/Challenge?provider=${PROVIDER}`)
        const state = other.location?.searchParams.get('state') ?? ''
        assert.notEqual(state, f.state)
        return state
      }
    },
    { name: 'missing state', expect: refused('correlation', 'correlation'), callbackState: () => '' },
    { name: 'rp-userinfo-bad-sub-claim: userinfo sub differs from the ID token', expect: refused('userinfo'), userInfo: { sub: 'user-2', roles: ['Administrator'] } },
    { name: 'extra-userinfo-no-sub: userinfo without sub', expect: refused('userinfo'), userInfo: { name: 'Mallory', roles: ['Administrator'] } },
    { name: 'positive control again: the same app still signs a valid token in', expect: SIGNED_IN }
  ]

  for (const row of rows) {
    const label = 'signedIn' in row.expect ? 'signs in' : `refused (${row.expect.failure})`
    test(`${row.name}: ${label}`, async () => { await runRow(app, idp, row) })
  }
})

describe('rp-key-rotation-op-sign-key: signing-key rotation at the provider', () => {
  let idp: TokenIdp
  let app: ListeningApp
  let offsetMs = 0
  const keys = new Map<string, { privateKey: CryptoKey, jwk: Record<string, unknown> }>()
  let fetchesBefore = 0

  /** Advances the clock seen by the app, the library and the token minting (all in this process). */
  const advance = (seconds: number): void => { offsetMs += seconds * 1000 }
  const publish = (...kids: string[]): void => { idp.publishedKeys = kids.map((kid) => keys.get(kid)!.jwk) }
  const signedBy = (kid: string) => async (f: Flow) => answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'RS256', kid }, key: keys.get(kid)!.privateKey }))
  const markFetches = (): void => { fetchesBefore = idp.jwksRequests }
  const fetchedAgain = (): void => { assert.ok(idp.jwksRequests > fetchesBefore, 'the JWKS was downloaded again') }

  before(async () => {
    mock.method(Date, 'now', () => realNow() + offsetMs)
    idp = await startTokenIdp(CLIENT_ID)
    keys.set('known', { privateKey: idp.signingKey, jwk: idp.publishedKeys[0]! })
    for (const kid of ['rotated-1', 'rotated-2']) {
      const pair = await generateKeyPair('RS256', { extractable: true })
      keys.set(kid, { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' } })
    }
    app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } } } })
    await waitUntilReady(app.origin)
  })

  after(async () => {
    mock.restoreAll()
    await app?.close()
    await idp?.close()
  })

  const rows: Row[] = [
    { name: 'before rotation: the original key signs in (the JWKS is downloaded)', expect: SIGNED_IN, answer: signedBy('known') },
    {
      name: 'rotation with overlap: the provider publishes a new key and signs with it a minute later; the new key is picked up',
      expect: SIGNED_IN,
      arrange: () => { publish('known', 'rotated-1'); advance(61); markFetches() },
      answer: signedBy('rotated-1'),
      verify: fetchedAgain
    },
    { name: 'during the overlap the old key, still published, is accepted', expect: SIGNED_IN, answer: signedBy('known') },
    {
      name: 'the old key is removed: after the cached JWKS expires (5 min), a token signed with it is refused',
      expect: refused('unknown_key'),
      arrange: () => { publish('rotated-1'); advance(301); markFetches() },
      answer: signedBy('known'),
      verify: fetchedAgain
    },
    { name: 'the new key keeps working after the removal', expect: SIGNED_IN, answer: signedBy('rotated-1') },
    {
      name: 'rotation without overlap (old key replaced at once): the next key is picked up',
      expect: SIGNED_IN,
      arrange: () => { publish('rotated-2'); advance(61); markFetches() },
      answer: signedBy('rotated-2'),
      verify: fetchedAgain
    },
    { name: 'the replaced key is refused right away (the fresh JWKS no longer has it)', expect: refused('unknown_key'), answer: signedBy('rotated-1') },
    { name: 'a key never published is still refused after rotation', expect: refused('signature'), answer: async (f) => answerWith(f.idp, await mint(f.idp, f.nonce, { header: { alg: 'RS256', kid: 'rotated-2' }, key: f.idp.unknownKey })) }
  ]

  for (const row of rows) {
    const label = 'signedIn' in row.expect ? 'signs in' : `refused (${row.expect.failure})`
    test(`${row.name}: ${label}`, async () => { await runRow(app, idp, row) })
  }
})
