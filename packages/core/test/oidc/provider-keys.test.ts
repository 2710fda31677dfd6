/**
 * ID token signing keys (issue 23, item 4): an ID token whose `kid` is not in the cached key set
 * makes the app fetch the provider's `jwks_uri` once more and verify again, so a key rotation
 * without overlap costs no sign-in (oidc-provider switching to a new key mid-test); the refetch is
 * limited to one per minute per provider, and a `kid` still unknown is refused as `unknown_key`,
 * apart from a signature that does not verify (`signature`).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { callBackWithCode, startOidcPair, useTokenIdpPair, type OidcPair, type TokenIdpPair } from '../helpers/providers/oidc-pair.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'

const CLIENT_ID = 'keys-client'
const CLIENT_SECRET = 'keys-secret-PLANTED-4e4e'

describe('a key rotation without overlap at oidc-provider', () => {
  let pair: OidcPair
  before(async () => {
    pair = await startOidcPair({ idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: { ada: { name: 'Ada' } } } })
  })
  after(async () => { await pair?.app.close(); await pair?.idp.close() })

  async function signIn (): Promise<Exchange> {
    const session = new HttpSession()
    const start = await session.request(`${pair.app.origin}/External/Challenge?provider=OpenIdConnect`)
    return await session.request(await throughIdpLogin(session, start.location!, pair.app.origin, 'ada'))
  }

  test('the first sign-in after the switch refetches the keys once and succeeds; a second switch within the minute is unknown_key', async () => {
    const first = await signIn()
    assert.equal(first.location?.pathname, '/')
    const fetchesBefore = pair.idp.jwksRequests
    assert.ok(fetchesBefore >= 1, 'the key set was fetched for the first sign-in')

    const kid = await pair.idp.rotateKeys()
    const afterRotation = await signIn()
    assert.equal(afterRotation.location?.pathname, '/', 'no failed sign-in after the rotation')
    assert.equal(sessionCookiesSet(afterRotation.response).length, 1)
    assert.equal(pair.idp.jwksRequests, fetchesBefore + 1, 'exactly one refetch')
    assert.deepEqual(pair.app.logs.events('oidc.signing_keys.refetched').map((line) => line.found), [true])
    assert.equal(pair.app.logs.events('external.sign_in.failed').length, 0)
    assert.notEqual(kid, 'test-rs256')

    // The refetch limit: a second switch within 60 seconds is not fetched again.
    await pair.idp.rotateKeys()
    const limited = await signIn()
    assert.equal(limited.location?.pathname + (limited.location?.search ?? ''), '/Account/Login?failure=failed')
    assert.deepEqual(sessionCookiesSet(limited.response), [])
    assert.equal(pair.idp.jwksRequests, fetchesBefore + 1, 'no second refetch within the minute')
    const line = pair.app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'unknown_key')
    assert.equal(line?.errorCode, 'ID_TOKEN_KEY_UNKNOWN')
  })
})

/** A sign-in through `pair` whose token endpoint answers with the ID token `idToken(nonce)` mints. */
async function callbackWith (pair: TokenIdpPair, idToken: (nonce: string) => Promise<string>): Promise<Exchange> {
  return await callBackWithCode(pair.app.origin, async (nonce) => {
    const token = await idToken(nonce)
    pair.idp.answer = () => ({ body: { access_token: `at-${randomBytes(8).toString('hex')}`, token_type: 'Bearer', id_token: token } })
  })
}

describe('unknown key id against a provider whose keys the test controls', () => {
  const pair = useTokenIdpPair(CLIENT_ID, CLIENT_SECRET)

  test('a kid the provider never publishes: refetched once, then unknown_key; a forged signature under a known kid is signature; neither refetches again within the minute', async () => {
    const { idp, app } = pair
    const valid = await callbackWith(pair, async (nonce) => await idp.mintIdToken(nonce))
    assert.equal(valid.location?.pathname, '/')
    const fetched = idp.jwksRequests

    const unknown = await callbackWith(pair, async (nonce) => await idp.mintIdToken(nonce, {}, { key: idp.unknownKey, kid: 'never-published' }))
    assert.deepEqual(sessionCookiesSet(unknown.response), [])
    assert.equal(app.logs.events('external.sign_in.failed').at(-1)?.failure, 'unknown_key')
    assert.equal(idp.jwksRequests, fetched + 1, 'one refetch for the unknown kid')
    assert.deepEqual(app.logs.events('oidc.signing_keys.refetched').map((line) => line.found), [false])

    const again = await callbackWith(pair, async (nonce) => await idp.mintIdToken(nonce, {}, { key: idp.unknownKey, kid: 'another-invented-kid' }))
    assert.deepEqual(sessionCookiesSet(again.response), [])
    assert.equal(app.logs.events('external.sign_in.failed').at(-1)?.failure, 'unknown_key')
    assert.equal(idp.jwksRequests, fetched + 1, 'rate-limited: no fetch for the second unknown kid')

    const forged = await callbackWith(pair, async (nonce) => await idp.mintIdToken(nonce, {}, { key: idp.unknownKey }))
    assert.deepEqual(sessionCookiesSet(forged.response), [])
    assert.equal(app.logs.events('external.sign_in.failed').at(-1)?.failure, 'signature')
    assert.equal(idp.jwksRequests, fetched + 1)
  })
})

describe('a key set that cannot be read', () => {
  const pair = useTokenIdpPair(CLIENT_ID, CLIENT_SECRET)

  test('is unavailable (JWKS_UNAVAILABLE), not a signature failure; no session', async () => {
    pair.idp.publishedKeys = 'not-a-key-set' as unknown as Array<Record<string, unknown>>
    const callback = await callbackWith(pair, async (nonce) => await pair.idp.mintIdToken(nonce))
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=unavailable')
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    const line = pair.app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'unavailable')
    assert.equal(line?.errorCode, 'JWKS_UNAVAILABLE')
  })
})
