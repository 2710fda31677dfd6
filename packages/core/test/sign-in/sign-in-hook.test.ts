/**
 * The application's sign-in hook (issue 29, item 4): `runSignInHook` decides from the hook's answer
 * (allow, allow with claims set and added, refuse with a reason) and fails closed on a throw, a
 * malformed answer, an attempt to change the subject, or a hook slower than its time limit. End to
 * end against the SAML test IdP: a refusal answers 403 with the access-denied page showing the
 * app's reason escaped, sets no session and logs `external.sign_in.refused_by_application`; added
 * claims land in the stored session; a failing or hanging hook refuses.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'
import { cookieHeaderFrom, storedSession, type TestApp } from '../helpers/app.js'
import { runSignInHook, SIGN_IN_HOOK_FAILED_REASON, type SignInHook, type VerifiedSignIn } from '../../src/sign-in/sign-in-hook.js'
import { userKeyOf } from '../../src/session/user-identity.js'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { useOidcPair } from '../helpers/providers/oidc-pair.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { waitFor } from '../helpers/wait.js'

const verified: VerifiedSignIn = {
  scheme: 'OpenIdConnect',
  issuer: 'https://idp.example.test',
  subject: 'u-1',
  userKey: userKeyOf({ scheme: 'OpenIdConnect', issuer: 'https://idp.example.test', subject: 'u-1' }),
  claims: [
    { type: 'application:subject', value: 'u-1', issuer: 'https://idp.example.test' },
    { type: 'application:role', value: 'Reader', issuer: 'https://idp.example.test' },
    { type: 'application:name', value: 'Ada', issuer: 'https://idp.example.test' }
  ]
}

describe('runSignInHook', () => {
  test('allow without changes keeps the claims', async () => {
    const decision = await runSignInHook(async () => ({ allow: true }), verified, 1000)
    assert.deepEqual(decision, { allowed: true, claims: verified.claims })
  })

  test('set replaces every claim of a type (empty removes it), add appends; both issued by "application"', async () => {
    const decision = await runSignInHook(async () => ({ allow: true, set: { 'application:role': ['Administrator', 'Auditor'], 'application:name': [] }, add: { 'app:user-id': '42' } }), verified, 1000)
    assert.deepEqual(decision, {
      allowed: true,
      claims: [
        { type: 'application:subject', value: 'u-1', issuer: 'https://idp.example.test' },
        { type: 'application:role', value: 'Administrator', issuer: 'application' },
        { type: 'application:role', value: 'Auditor', issuer: 'application' },
        { type: 'app:user-id', value: '42', issuer: 'application' }
      ]
    })
  })

  test('refuse carries the app\'s reason', async () => {
    assert.deepEqual(await runSignInHook(async () => ({ allow: false, reason: 'Your account is suspended.' }), verified, 1000),
      { allowed: false, refusal: 'refused', reason: 'Your account is suspended.' })
  })

  test('the hook sees the verified principal, frozen', async () => {
    let seen: VerifiedSignIn | undefined
    await runSignInHook(async (signIn) => { seen = signIn; return { allow: true } }, verified, 1000)
    assert.deepEqual(seen, verified)
    assert.ok(Object.isFrozen(seen) && Object.isFrozen(seen?.claims) && Object.isFrozen(seen?.claims[0]))
  })

  const failing: Array<[string, SignInHook, 'failed' | 'invalid']> = [
    ['a rejection', async () => { throw new Error('database down') }, 'failed'],
    ['a synchronous throw', (() => { throw new TypeError('bug') }) as unknown as SignInHook, 'failed'],
    ['undefined', (async () => undefined) as unknown as SignInHook, 'invalid'],
    ['allow that is not a boolean', (async () => ({ allow: 'yes' })) as unknown as SignInHook, 'invalid'],
    ['a refusal without a reason', (async () => ({ allow: false, reason: ' ' })) as unknown as SignInHook, 'invalid'],
    ['a change of the subject', async () => ({ allow: true, set: { 'application:subject': 'admin' } }), 'invalid'],
    ['a claim value that is not a string', (async () => ({ allow: true, add: { 'app:id': 42 } })) as unknown as SignInHook, 'invalid']
  ]
  for (const [name, hook, refusal] of failing) {
    test(`${name} refuses the sign-in (${refusal})`, async () => {
      const decision = await runSignInHook(hook, verified, 1000)
      assert.equal(decision.allowed, false)
      assert.equal(!decision.allowed && decision.refusal, refusal)
      assert.equal(!decision.allowed && decision.reason, SIGN_IN_HOOK_FAILED_REASON)
    })
  }

  test('a hook slower than its time limit refuses (timeout) and its signal aborts', async () => {
    let signal: AbortSignal | undefined
    const decision = await runSignInHook(async (_signIn, context) => {
      signal = context.signal
      return await new Promise(() => {})
    }, verified, 50)
    assert.deepEqual(decision, { allowed: false, refusal: 'timeout', reason: SIGN_IN_HOOK_FAILED_REASON })
    assert.equal(signal?.aborted, true)
  })

  test('a long reason is cut to 500 characters', async () => {
    const decision = await runSignInHook(async () => ({ allow: false, reason: 'x'.repeat(2000) }), verified, 1000)
    assert.equal(!decision.allowed && decision.reason.length, 500)
  })
})

describe('sign-in hook at the SAML2 ACS (test IdP)', () => {
  const idp = new TestIdentityProvider()
  const user: TestUser = { nameId: 'grace@example.test', attributes: { 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name': ['Grace'] } }
  const seen: VerifiedSignIn[] = []
  let mode: 'refuse' | 'provision' | 'throw' | 'hang' = 'provision'
  const hook: SignInHook = async (signIn) => {
    seen.push(signIn)
    if (mode === 'refuse') return { allow: false, reason: '<script>alert(1)</script> Ask your administrator for access.' }
    if (mode === 'throw') throw new Error('connection refused PLANTED-hook-secret')
    if (mode === 'hang') return await new Promise(() => {})
    return { allow: true, set: { 'application:role': 'Administrator' }, add: { 'app:user-id': 'db-7' } }
  }
  let subject: TestApp
  before(async () => {
    await idp.start()
    subject = await buildSaml2App(idp, {}, { signInHook: hook, authentication: { SignInHook: { TimeoutSeconds: 1 } } })
    await waitForSaml2(subject.app)
  })
  after(async () => { await subject?.app.close(); await idp.stop() })

  async function signIn () {
    const flow = await startSaml2SignIn(subject.app)
    return await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user, inResponseTo: flow.request.id }), RelayState: flow.relayState }, flow.cookie)
  }

  test('allow with claims: the session holds the app\'s claims; the hook saw scheme, issuer and subject', async () => {
    mode = 'provision'
    const response = await signIn()
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/')
    const ticket = await storedSession(subject.app, subject.keyRing, cookieHeaderFrom(response))
    const claims = ticket?.claims.map((claim) => `${claim.type}=${claim.value}@${claim.issuer}`) ?? []
    assert.ok(claims.includes('application:role=Administrator@application'))
    assert.ok(claims.includes('app:user-id=db-7@application'))
    assert.ok(claims.includes(`application:subject=grace@example.test@${idp.entityId}`))
    const last = seen.at(-1)
    assert.deepEqual({ scheme: last?.scheme, issuer: last?.issuer, subject: last?.subject }, { scheme: 'Saml2', issuer: idp.entityId, subject: 'grace@example.test' })
  })

  test('refused: 403 access-denied page with the reason escaped, no session, an audit line', async () => {
    mode = 'refuse'
    const response = await signIn()
    assert.equal(response.statusCode, 403)
    assert.equal(setsSessionCookie(response), false)
    assert.ok(response.body.includes('<p id="access-denied-reason">&lt;script&gt;alert(1)&lt;/script&gt; Ask your administrator for access.</p>'))
    assert.equal(response.body.includes('<script>'), false)
    const event = subject.logs.events('external.sign_in.refused_by_application').at(-1)
    assert.deepEqual({ provider: event?.provider, subject: event?.subject, refusal: event?.refusal, reason: event?.reason, level: event?.level },
      { provider: 'Saml2', subject: 'grace@example.test', refusal: 'refused', reason: '<script>alert(1)</script> Ask your administrator for access.', level: 40 })
    assert.equal(subject.logs.events('external.sign_in.succeeded').length, 1, 'only the allowed sign-in succeeded')
  })

  test('a hook that throws refuses with the fixed text; its message is not logged', async () => {
    mode = 'throw'
    const response = await signIn()
    assert.equal(response.statusCode, 403)
    assert.equal(setsSessionCookie(response), false)
    assert.ok(response.body.includes(SIGN_IN_HOOK_FAILED_REASON.replaceAll("'", '&#39;')))
    const event = subject.logs.events('external.sign_in.refused_by_application').at(-1)
    assert.deepEqual({ refusal: event?.refusal, errorName: event?.errorName }, { refusal: 'failed', errorName: 'Error' })
    assert.equal(subject.logs.text().includes('PLANTED-hook-secret'), false)
    assert.equal(response.body.includes('PLANTED-hook-secret'), false)
  })

  test('a hook that never answers refuses after TimeoutSeconds', async () => {
    mode = 'hang'
    const response = await signIn()
    assert.equal(response.statusCode, 403)
    assert.equal(setsSessionCookie(response), false)
    const event = subject.logs.events('external.sign_in.refused_by_application').at(-1)
    assert.deepEqual({ refusal: event?.refusal, timeoutMs: event?.timeoutMs }, { refusal: 'timeout', timeoutMs: 1000 })
  })
})

describe('sign-in hook at the OpenID Connect callback (oidc-provider)', () => {
  const seen: VerifiedSignIn[] = []
  const pair = useOidcPair({
    idp: { clientId: 'hook-client', clientSecret: 'hook-secret-PLANTED-5d1', accounts: { alice: { name: 'Alice' }, mallory: { name: 'Mallory' } }, claims: { openid: ['sub'], profile: ['name'] } },
    signInHook: async (signIn) => {
      seen.push(signIn)
      return signIn.subject === 'mallory' ? { allow: false, reason: 'Mallory is not welcome here.' } : { allow: true, add: { 'app:user-id': `db-${signIn.subject}` } }
    }
  })

  async function oidcSignIn (login: string) {
    const session = new HttpSession()
    const start = await session.request(`${pair.app.origin}/External/Challenge?provider=OpenIdConnect`)
    assert.equal(start.response.status, 302)
    return await session.request(await throughIdpLogin(session, start.location!, pair.app.origin, login))
  }

  test('the hook sees the OpenID Connect principal; allowed with its claim, refused with its reason', async () => {
    const allowed = await oidcSignIn('alice')
    assert.equal(allowed.response.status, 302)
    assert.equal(sessionCookiesSet(allowed.response).length, 1)
    assert.deepEqual({ scheme: seen.at(-1)?.scheme, issuer: seen.at(-1)?.issuer, subject: seen.at(-1)?.subject }, { scheme: 'OpenIdConnect', issuer: pair.idp.issuer, subject: 'alice' })
    const refused = await oidcSignIn('mallory')
    assert.equal(refused.response.status, 403)
    assert.deepEqual(sessionCookiesSet(refused.response), [])
    assert.ok(refused.body.includes('<p id="access-denied-reason">Mallory is not welcome here.</p>'))
    const line = pair.app.logs.events('external.sign_in.refused_by_application').at(-1)
    assert.equal(line?.subject, 'mallory')
    // Issue 40, item 11: the page gives the administrator the request id of the refusal's log line and of the callback's completion line.
    const shown = /<code id="request-id">([^<]+)<\/code>/.exec(refused.body)?.[1]
    assert.ok(shown !== undefined && shown !== '', 'the page shows a request id')
    assert.equal(line?.reqId, shown)
    await waitFor(() => pair.app.logs.events('request.completed').some((completed) => completed.reqId === shown), 'the callback\'s completion line', 5_000)
    assert.deepEqual(pair.app.logs.events('request.completed').filter((completed) => completed.reqId === shown).map((completed) => [completed.path, completed.statusCode]), [['/signin-oidc', 403]])
  })
})
