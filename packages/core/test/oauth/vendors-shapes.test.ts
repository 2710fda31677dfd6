/**
 * The vendor slots against the shapes real vendors have, on loopback with real HTTP:
 * - VendorA is GitHub-shaped: oauth2-mock-server answers the token endpoint the way GitHub does
 *   (lower-case bearer, no id_token; refusals with HTTP 200 and an `error` body), `/user` and
 *   `/user/emails` come from a second server that accepts only tokens the first one issued, and
 *   the e-mail claim is the primary, verified address.
 * - VendorB authenticates with client_secret_post and has a nested user-information document
 *   (`{ data: { id, attributes } }`) mapped by field paths, configured in the array form of
 *   ClaimMappings that environment variables can express.
 * - VendorC's token endpoint streams 32 MB without Content-Length: reading stops at the limit.
 * Every failure: no session, the safe login page, one log line naming the class with the HTTP
 * status and the vendor's OAuth error code, and no secret, code or token in the log.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { findPlanted, HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { startResourceServer, startVendorIdp, type ResourceServer, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'
import { MAX_RESPONSE_BYTES } from '../../src/oauth/vendor-client.js'

const SECRET_A = 'github-like-secret-PLANTED-a1'
const SECRET_B = 'nested-post-secret-PLANTED-b2'
const SECRET_C = 'huge-token-secret-PLANTED-c3'

/** Three vendor IdPs: GitHub's shapes, a nested user-information document, an endless token response. */
let github: VendorIdp, nested: VendorIdp, huge: VendorIdp
let resources: ResourceServer
let app: ListeningApp

before(async () => {
  github = await startVendorIdp({})
  github.githubShape = true
  resources = await startResourceServer(github)
  resources.user = { id: 583231, login: 'octocat', email: 'public-profile@example.test', name: 'The Octocat' }
  nested = await startVendorIdp({ data: { id: 'n-1', attributes: { display_name: 'Nested Person', roles: ['Administrator', 'Reader'], contact: { mail: 'nested@example.test' } } } })
  huge = await startVendorIdp({ id: 'never-reached' })
  app = await startProviderApp({
    Authentication: {
      Providers: {
        VendorA: github.settings('client-github', SECRET_A, {
          Scopes: ['read:user', 'user:email'],
          UserInformationEndpoint: `${resources.base}/user`,
          EmailsEndpoint: `${resources.base}/user/emails`
        }),
        VendorB: nested.settings('client-nested', SECRET_B, {
          TokenEndpointAuthMethod: 'client_secret_post',
          ClaimMappings: [
            { From: 'data.id', To: 'subject' },
            { From: '/data/attributes/display_name', To: 'name' },
            { From: 'data.attributes.roles', To: 'role' },
            { From: 'data.attributes.contact.mail', To: 'email' }
          ]
        }),
        VendorC: huge.settings('client-huge', SECRET_C, { TokenEndpoint: `${resources.base}/huge` })
      }
    }
  })
})

after(async () => {
  await app?.close()
  await resources?.close()
  for (const idp of [github, nested, huge]) await idp?.close()
})

function assertNothingSecretLogged (): void {
  const planted = [SECRET_A, SECRET_B, SECRET_C, ...github.planted, ...nested.planted, ...huge.planted]
  assert.ok(planted.length > 3)
  assert.deepEqual(findPlanted(app.logs.text(), planted), [])
}

async function runFlow (slot: 'VendorA' | 'VendorB' | 'VendorC'): Promise<{ session: HttpSession, callback: Exchange }> {
  const session = new HttpSession()
  const start = await session.request(`${app.origin}/External/Challenge?provider=${slot}`)
  assert.equal(start.response.status, 302)
  const authorize = await session.request(start.location!)
  assert.equal(authorize.response.status, 302)
  const callback = await session.request(authorize.location!)
  return { session, callback }
}

function claimRow (type: string, value: string, issuer: string): string {
  return `<tr><td>${type}</td><td>${value}</td><td>${issuer}</td></tr>`
}

async function assertFailed (slot: 'VendorA' | 'VendorB' | 'VendorC', expected: Record<string, unknown>): Promise<void> {
  const before = app.logs.events('external.sign_in.failed').length
  const { callback } = await runFlow(slot)
  assert.equal(callback.response.status, 302)
  assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
  assert.deepEqual(sessionCookiesSet(callback.response), [])
  const lines = app.logs.events('external.sign_in.failed').slice(before)
  assert.equal(lines.length, 1)
  const line = lines[0]!
  for (const [key, value] of Object.entries(expected)) assert.equal(line[key], value, `log field ${key}`)
  const page = await (await fetch(`${app.origin}${callback.location!.pathname}${callback.location!.search}`)).text()
  assert.match(page, /Sign-in failed|could not|failed/i)
  assertNothingSecretLogged()
}

describe('GitHub-shaped vendor (VendorA)', () => {
  test('the e-mail claim is the primary, verified address from /user/emails, not the public profile address', async () => {
    resources.emails = [
      { email: 'old@example.test', primary: false, verified: true, visibility: null },
      { email: 'unverified-primary@example.test', primary: true, verified: false, visibility: 'private' },
      { email: 'octo@example.test', primary: true, verified: true, visibility: 'private' }
    ]
    const { session, callback } = await runFlow('VendorA')
    assert.equal(callback.response.status, 302)
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.equal(github.authorizationRequests.at(-1)?.get('scope'), 'read:user user:email')
    assert.match(resources.emailsAuthorizations.at(-1) ?? '', /^Bearer ey/)
    const home = await session.request(`${app.origin}/`)
    assert.ok(home.body.includes(claimRow('application:subject', '583231', 'VendorA')))
    assert.ok(home.body.includes(claimRow('application:name', 'octocat', 'VendorA')))
    assert.ok(home.body.includes(claimRow('application:email', 'octo@example.test', 'VendorA')))
    for (const absent of ['public-profile@example.test', 'unverified-primary@example.test', 'old@example.test']) assert.ok(!home.body.includes(absent), absent)
    assertNothingSecretLogged()
  })

  test('without a primary, verified address there is no e-mail claim (and the sign-in still succeeds)', async () => {
    resources.emails = [{ email: 'unverified@example.test', primary: true, verified: false }]
    const { session, callback } = await runFlow('VendorA')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const home = await session.request(`${app.origin}/`)
    assert.ok(home.body.includes(claimRow('application:subject', '583231', 'VendorA')))
    assert.ok(!home.body.includes('application:email'))
  })

  test('an /user/emails refusal (scope not granted) fails the sign-in as userinfo with its status', async () => {
    resources.emailsStatus = 404
    try {
      await assertFailed('VendorA', { failure: 'userinfo', errorCode: 'EMAILS_ENDPOINT_ERROR', httpStatus: 404 })
    } finally {
      resources.emailsStatus = 200
    }
  })

  test("GitHub's 200-status error (bad_verification_code) is logged as a token failure with status 200 and the code", async () => {
    github.tokenAnswer = { status: 200, body: { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired. PLANTED-DESCRIPTION', error_uri: 'https://docs.github.com/' } }
    try {
      await assertFailed('VendorA', { failure: 'token', errorCode: 'TOKEN_ENDPOINT_ERROR', httpStatus: 200, oauthError: 'bad_verification_code' })
      assert.ok(!app.logs.text().includes('PLANTED-DESCRIPTION'), 'the description is never logged')
    } finally {
      github.tokenAnswer = undefined
    }
  })

  test('invalid_client (HTTP 401) and redirect_uri_mismatch (HTTP 400) are distinguishable in the log', async () => {
    github.tokenAnswer = { status: 401, body: { error: 'invalid_client', error_description: 'PLANTED-DESCRIPTION client secret wrong' } }
    try {
      await assertFailed('VendorA', { failure: 'token', errorCode: 'TOKEN_ENDPOINT_ERROR', httpStatus: 401, oauthError: 'invalid_client' })
      github.tokenAnswer = { status: 400, body: { error: 'redirect_uri_mismatch' } }
      await assertFailed('VendorA', { failure: 'token', errorCode: 'TOKEN_ENDPOINT_ERROR', httpStatus: 400, oauthError: 'redirect_uri_mismatch' })
      github.tokenAnswer = { status: 400, body: { error: 'a code with "quotes" and spaces' } }
      await assertFailed('VendorA', { failure: 'token', httpStatus: 400, oauthError: 'unrecognized' })
      assert.ok(!app.logs.text().includes('PLANTED-DESCRIPTION'))
    } finally {
      github.tokenAnswer = undefined
    }
  })

  test('a user-information body streamed without Content-Length is read only up to the limit', async () => {
    resources.hugeUser = true
    try {
      await assertFailed('VendorA', { failure: 'userinfo', errorCode: 'USERINFO_RESPONSE_TOO_LARGE', httpStatus: 200 })
      assert.equal(resources.hugeFinished, false, 'the app stopped reading')
      // The limit plus what sockets buffer in flight, far below the 32 MB on offer.
      assert.ok(resources.hugeBytesWritten < 16 * MAX_RESPONSE_BYTES + 8 * 1024 * 1024, `wrote ${resources.hugeBytesWritten}`)
    } finally {
      resources.hugeUser = false
    }
  })
})

describe('nested-JSON vendor with client_secret_post (VendorB)', () => {
  test('the secret travels in the form body, and field paths in the array form of ClaimMappings address nested fields', async () => {
    const { session, callback } = await runFlow('VendorB')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const token = nested.tokenRequests.at(-1)!
    assert.equal(token.authorization, undefined, 'no Authorization header with client_secret_post')
    assert.equal(token.body.client_id, 'client-nested')
    assert.equal(token.body.client_secret, SECRET_B)
    const home = await session.request(`${app.origin}/`)
    assert.ok(home.body.includes(claimRow('application:subject', 'n-1', 'VendorB')))
    assert.ok(home.body.includes(claimRow('application:name', 'Nested Person', 'VendorB')))
    assert.ok(home.body.includes(claimRow('application:role', 'Administrator', 'VendorB')))
    assert.ok(home.body.includes(claimRow('application:email', 'nested@example.test', 'VendorB')))
    assert.equal((await session.request(`${app.origin}/api/application-information/administration`, { accept: 'application/json' })).response.status, 200)
    assertNothingSecretLogged()
  })
})

describe('token endpoint limits (VendorC)', () => {
  test('a 32 MB chunked token response is refused after the limit, not read whole', async () => {
    await assertFailed('VendorC', { failure: 'token', errorCode: 'TOKEN_RESPONSE_TOO_LARGE', httpStatus: 200 })
    assert.equal(resources.hugeFinished, false)
    assert.ok(resources.hugeBytesWritten < 16 * MAX_RESPONSE_BYTES + 8 * 1024 * 1024, `wrote ${resources.hugeBytesWritten}`)
  })
})
