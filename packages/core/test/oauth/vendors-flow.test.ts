/**
 * VendorA, VendorB and VendorC against real OAuth 2.0 servers (oauth2-mock-server, one per slot,
 * on localhost) over real HTTP. Each slot has its own client, callback, scopes and a different
 * user-information shape; the claims it yields are normalized (vendor defaults id -> subject and
 * login -> name, ClaimMappings on top) and drive the role and permission policies. Failures set
 * no session cookie; no log line carries a client secret, a code or a token.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { findPlanted, HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'
import { closedPort } from '../helpers/ports.js'

type Slot = 'VendorA' | 'VendorB' | 'VendorC'
const SECRETS: Record<Slot, string> = { VendorA: 'vendor-a-secret-PLANTED-11aa', VendorB: 'vendor-b-secret-PLANTED-22bb', VendorC: 'vendor-c-secret-PLANTED-33cc' }
const CALLBACKS: Record<Slot, string> = { VendorA: '/signin-vendora', VendorB: '/signin-vendorb', VendorC: '/signin-vendorc' }

const idps = {} as Record<Slot, VendorIdp>
let app: ListeningApp

before(async () => {
  // Three shapes: a numeric id with a login (GitHub-like), an OIDC-like sub, and custom field names.
  idps.VendorA = await startVendorIdp({ id: 4242, login: 'octo-admin', email: 'octo@example.test', roles: ['Administrator'], site_admin: false, plan: { name: 'pro' } })
  idps.VendorB = await startVendorIdp({ sub: 'b-7', name: 'Bea Vendor', email: 'bea@example.test', email_verified: true, groups: ['staff', 'ops'] })
  idps.VendorC = await startVendorIdp({ user_id: 'c-9', display: 'Cee Custom', mail: 'cee@example.test', permissions: ['application.manage'], teams: ['blue'], id: 'not-the-subject' })
  app = await startProviderApp({
    Authentication: {
      Providers: {
        VendorA: idps.VendorA.settings('client-a', SECRETS.VendorA),
        VendorB: idps.VendorB.settings('client-b', SECRETS.VendorB),
        VendorC: idps.VendorC.settings('client-c', SECRETS.VendorC, { ClaimMappings: { user_id: 'subject', display: 'name', teams: 'group', id: '' } })
      }
    }
  })
})

after(async () => {
  await app?.close()
  for (const idp of Object.values(idps)) await idp?.close()
})

function assertNoSecretsLogged (): void {
  const planted = [...Object.values(SECRETS), ...Object.values(idps).flatMap((idp) => idp.planted)]
  assert.ok(planted.length > 3)
  assert.deepEqual(findPlanted(app.logs.text(), planted), [])
}

function lastFailure (): Record<string, unknown> | undefined {
  return app.logs.events('external.sign_in.failed').at(-1)
}

/** Challenge -> the vendor's authorization endpoint -> back at the slot's callback URL (not requested). */
async function toCallback (session: HttpSession, slot: Slot, returnUrl = '/'): Promise<{ start: Exchange, callbackUrl: URL }> {
  const start = await session.request(`${app.origin}/External/Challenge?provider=${slot}&returnUrl=${encodeURIComponent(returnUrl)}`)
  assert.equal(start.response.status, 302)
  assert.equal(start.location?.origin, idps[slot].base)
  const authorize = await session.request(start.location!)
  assert.equal(authorize.response.status, 302)
  assert.equal(authorize.location?.origin + (authorize.location?.pathname ?? ''), `${app.origin}${CALLBACKS[slot]}`)
  return { start, callbackUrl: authorize.location! }
}

async function signIn (slot: Slot): Promise<{ session: HttpSession, callback: Exchange, start: Exchange }> {
  const session = new HttpSession()
  const { start, callbackUrl } = await toCallback(session, slot)
  const callback = await session.request(callbackUrl)
  return { session, callback, start }
}

/** A sign-in's callback while `slot`'s IdP behaves as `changes` say; the IdP is restored afterwards. */
async function callbackWhile (slot: Slot, changes: Partial<Pick<VendorIdp, 'tokenErrorStatus' | 'userInformationStatus' | 'userInformation'>>): Promise<Exchange> {
  const idp = idps[slot]
  const saved = { tokenErrorStatus: idp.tokenErrorStatus, userInformationStatus: idp.userInformationStatus, userInformation: idp.userInformation }
  Object.assign(idp, changes)
  try {
    return (await signIn(slot)).callback
  } finally {
    Object.assign(idp, saved)
  }
}

function claimRow (type: string, value: string, issuer: string): string {
  return `<tr><td>${type}</td><td>${value}</td><td>${issuer}</td></tr>`
}

describe('OAuth 2.0 vendor slots against oauth2-mock-server', () => {
  const expected: Record<Slot, { scope: string | null, claims: Array<[string, string]>, absent: Array<[string, string]>, admin: number, manage: number }> = {
    VendorA: {
      scope: null,
      claims: [['application:subject', '4242'], ['application:name', 'octo-admin'], ['application:email', 'octo@example.test'], ['application:role', 'Administrator'], ['id', '4242'], ['site_admin', 'false']],
      absent: [['plan', '{"name":"pro"}']],
      admin: 200,
      manage: 403
    },
    VendorB: {
      scope: 'profile email',
      claims: [['application:subject', 'b-7'], ['application:name', 'Bea Vendor'], ['application:email', 'bea@example.test'], ['application:group', 'staff'], ['application:group', 'ops'], ['email_verified', 'true']],
      absent: [],
      admin: 403,
      manage: 403
    },
    VendorC: {
      scope: 'profile email',
      claims: [['application:subject', 'c-9'], ['application:name', 'Cee Custom'], ['application:email', 'cee@example.test'], ['application:group', 'blue'], ['application:permission', 'application.manage']],
      absent: [['application:subject', 'not-the-subject']],
      admin: 403,
      manage: 200
    }
  }

  for (const slot of ['VendorA', 'VendorB', 'VendorC'] as const) {
    test(`${slot} signs in with its own client, scopes and PKCE; its user-information shape becomes normalized claims`, async () => {
      const idp = idps[slot]
      const { session, callback, start } = await signIn(slot)
      assert.equal(callback.response.status, 302)
      assert.equal(callback.location?.pathname, '/')
      assert.equal(sessionCookiesSet(callback.response).length, 1)

      const query = start.location!.searchParams
      assert.equal(query.get('response_type'), 'code')
      assert.equal(query.get('redirect_uri'), `${app.origin}${CALLBACKS[slot]}`)
      assert.equal(query.get('scope'), expected[slot].scope)
      assert.equal(query.get('code_challenge_method'), 'S256')
      const token = idp.tokenRequests.at(-1)!
      assert.equal(createHash('sha256').update(token.body.code_verifier ?? '').digest('base64url'), query.get('code_challenge'))
      assert.equal(token.body.redirect_uri, `${app.origin}${CALLBACKS[slot]}`)
      const [scheme, credentials] = (token.authorization ?? '').split(' ')
      assert.equal(scheme, 'Basic')
      assert.deepEqual(Buffer.from(credentials ?? '', 'base64').toString('utf8').split(':').map(decodeURIComponent), [`client-${slot.at(-1)!.toLowerCase()}`, SECRETS[slot]])
      assert.equal(token.body.client_secret, undefined, 'the secret travels only in the Authorization header')
      assert.match(idp.userInformationAuthorizations.at(-1) ?? '', /^Bearer ey/)

      const home = await session.request(`${app.origin}/`)
      assert.equal(home.response.status, 200)
      for (const [type, value] of expected[slot].claims) assert.ok(home.body.includes(claimRow(type, value, slot)), `${slot}: claim ${type}=${value}`)
      for (const [type, value] of expected[slot].absent) assert.ok(!home.body.includes(claimRow(type, value, slot)), `${slot}: no claim ${type}=${value}`)
      assert.equal((await session.request(`${app.origin}/api/application-information/administration`, { accept: 'application/json' })).response.status, expected[slot].admin)
      assert.equal((await session.request(`${app.origin}/api/application-information/management`, { accept: 'application/json' })).response.status, expected[slot].manage)
      assertNoSecretsLogged()
    })
  }

  test('the login page lists each slot with its display name', async () => {
    const login = await (await fetch(`${app.origin}/Account/Login`)).text()
    for (const slot of ['VendorA', 'VendorB', 'VendorC']) {
      assert.match(login, new RegExp(`data-provider="${slot}" href="/External/Challenge\\?provider=${slot}">${slot}</a>`))
    }
    assert.equal((await fetch(`${app.origin}/health/ready`)).status, 200)
  })

  const refused: Array<{ name: string, failure: string, page: string, run: (session: HttpSession) => Promise<Exchange> }> = [
    {
      name: 'the vendor reporting access_denied',
      failure: 'cancelled',
      page: 'cancelled',
      run: async (session) => {
        const start = await session.request(`${app.origin}/External/Challenge?provider=VendorA`)
        return await session.request(`${app.origin}/signin-vendora?error=access_denied&state=${start.location!.searchParams.get('state') ?? ''}`)
      }
    },
    {
      name: 'a wrong state',
      failure: 'correlation',
      page: 'correlation',
      run: async (session) => {
        const { callbackUrl } = await toCallback(session, 'VendorB')
        callbackUrl.searchParams.set('state', 'BBBBBBBBBBBBBBBBBBBBBB')
        return await session.request(callbackUrl)
      }
    },
    {
      name: 'a missing correlation cookie',
      failure: 'correlation',
      page: 'correlation',
      run: async (session) => {
        const { callbackUrl } = await toCallback(session, 'VendorC')
        return await session.request(callbackUrl, { cookies: false })
      }
    },
    {
      name: 'a state from another slot',
      failure: 'correlation',
      page: 'correlation',
      run: async (session) => {
        const { callbackUrl } = await toCallback(session, 'VendorA')
        return await session.request(`${app.origin}/signin-vendorb${callbackUrl.search}`)
      }
    },
    {
      name: 'a replayed callback',
      failure: 'replay',
      page: 'correlation',
      run: async (session) => {
        const { callbackUrl } = await toCallback(session, 'VendorA')
        const copied = session.jar.header(new URL(app.origin))
        const first = await session.request(callbackUrl)
        assert.equal(sessionCookiesSet(first.response).length, 1)
        const replay = await fetch(callbackUrl, { headers: { cookie: copied }, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
        return { url: callbackUrl, response: replay, body: await replay.text(), location: new URL(replay.headers.get('location') ?? '/', app.origin) }
      }
    },
    {
      name: 'a token endpoint error',
      failure: 'token',
      page: 'failed',
      run: async () => await callbackWhile('VendorB', { tokenErrorStatus: 400 })
    },
    {
      name: 'a user-information error',
      failure: 'userinfo',
      page: 'failed',
      run: async () => await callbackWhile('VendorC', { userInformationStatus: 401 })
    },
    {
      name: 'user information without a subject',
      failure: 'claims',
      page: 'failed',
      run: async () => await callbackWhile('VendorB', { userInformation: { name: 'No Subject', email: 'nobody@example.test' } })
    }
  ]
  for (const { name, failure, page, run } of refused) {
    test(`${name} is refused (${failure}) and sets no session cookie`, async () => {
      const callback = await run(new HttpSession())
      assert.equal(callback.response.status, 302)
      assert.deepEqual(sessionCookiesSet(callback.response), [])
      assert.equal(callback.location?.pathname, '/Account/Login')
      assert.equal(callback.location?.search, `?failure=${page}`)
      assert.equal(lastFailure()?.failure, failure)
      assertNoSecretsLogged()
    })
  }
})

describe('vendor slot options', () => {
  test('UsePkce false sends no code challenge and no verifier', async (context) => {
    const idp = await startVendorIdp({ id: 1, login: 'plain' })
    const target = await startProviderApp({ Authentication: { Providers: { VendorB: idp.settings('client-b', SECRETS.VendorB, { UsePkce: false }) } } })
    context.after(async () => { await target.close(); await idp.close() })
    const session = new HttpSession()
    const start = await session.request(`${target.origin}/External/Challenge?provider=VendorB`)
    assert.equal(start.location?.searchParams.get('code_challenge'), null)
    const authorize = await session.request(start.location!)
    const callback = await session.request(authorize.location!)
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.equal(idp.tokenRequests.at(-1)?.body.code_verifier, undefined)
  })

  test('an unreachable token endpoint is a token failure without a session', async (context) => {
    const deadPort = await closedPort()
    const idp = await startVendorIdp({ id: 1, login: 'unreachable' })
    const target = await startProviderApp({
      Authentication: { Providers: { VendorA: idp.settings('client-a', SECRETS.VendorA, { TokenEndpoint: `http://localhost:${deadPort}/token` }) } }
    })
    context.after(async () => { await target.close(); await idp.close() })
    const session = new HttpSession()
    const start = await session.request(`${target.origin}/External/Challenge?provider=VendorA`)
    const authorize = await session.request(start.location!)
    const callback = await session.request(authorize.location!)
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    assert.equal(target.logs.events('external.sign_in.failed').at(-1)?.failure, 'token')
    assert.deepEqual(findPlanted(target.logs.text(), [SECRETS.VendorA, ...idp.planted]), [])
  })
})
