/**
 * Anonymous traffic costs the server nothing (issue 21, items 1 and 5): starting a sign-in writes
 * nothing to the state store, whichever way it starts (GET /External/Challenge, any anonymous page
 * with DefaultChallengeScheme set to a provider, an unsolicited SAML2 POST under
 * RestartUnsolicitedSignIn), so a client that never sends its cookies back cannot fill the store
 * and lock everyone else out; and naming another browser's flow in a cookie of one's own cancels
 * nothing. Against the SAML test IdP with a store bound of 3 pending sign-ins, flooded 40 times
 * each way.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2, type StartedFlow } from '../helpers/saml2/app.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'
import type { EmbeddedStateStore } from '../../src/state/embedded-store.js'

const USER: TestUser = { nameId: 'flood-victim@example.test', attributes: { role: ['Reader'] } }
const CORRELATION = '__Host-ProjectTemplate.Correlation.'
const FLOOD = 40

describe('anonymous traffic writes nothing to the state store', () => {
  const idp = new TestIdentityProvider()
  let subject: TestApp
  const characters = (): number => (subject.app.state as EmbeddedStateStore).characters

  before(async () => {
    await idp.start()
    subject = await buildTestApp({
      nodeEnv: 'development',
      testSignIn: false,
      settings: {
        Authentication: {
          DefaultChallengeScheme: 'Saml2',
          Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: idp.metadataUrl, RestartUnsolicitedSignIn: true } }
        },
        State: { Embedded: { MaxPendingSignIns: 3 } }
      }
    })
    await waitForSaml2(subject.app)
  })
  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  async function signInAs (flow: StartedFlow): Promise<boolean> {
    const answer = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id })
    const response = await postToAcs(subject.app, { SAMLResponse: answer, RelayState: flow.relayState }, flow.cookie)
    return response.statusCode === 302 && setsSessionCookie(response)
  }

  test(`${FLOOD} challenges, ${FLOOD} anonymous page views and ${FLOOD} unsolicited SAML2 posts from a client that drops its cookies leave the store as it was, and a real sign-in still succeeds`, async () => {
    const before = characters()
    const unsolicited = idp.buildResponse({ acsUrl: 'http://localhost/Saml2/Acs', audience: SP_ENTITY_ID, user: USER })
    for (let index = 0; index < FLOOD; index++) {
      const challenge = await subject.app.inject({ url: '/External/Challenge?provider=Saml2' })
      assert.equal(challenge.statusCode, 302, `challenge ${index + 1}`)
      const page = await subject.app.inject({ url: '/', headers: { accept: 'text/html' } })
      assert.equal(page.statusCode, 302, `page ${index + 1}`)
      assert.ok(String(page.headers.location).startsWith(`${idp.origin}/sso?`), 'DefaultChallengeScheme starts a SAML2 sign-in')
      const post = await postToAcs(subject.app, { SAMLResponse: unsolicited })
      assert.equal(post.statusCode, 302, `unsolicited post ${index + 1}`)
      assert.ok(String(post.headers.location).startsWith(`${idp.origin}/sso?`), 'restarted as SP-initiated')
    }
    assert.equal(characters(), before, 'nothing was written')
    assert.equal(subject.logs.events('request.completed').filter((line) => line.statusCode === 503).length, 0, 'no request was refused')
    assert.ok(subject.logs.events('request.completed').length >= 3 * FLOOD, 'the requests were logged')

    assert.equal(await signInAs(await startSaml2SignIn(subject.app)), true, 'a legitimate sign-in succeeds at once')
  })

  test('a refused response does not spend the flow, the verified one completes it, and its replay is refused as replay', async () => {
    const flow = await startSaml2SignIn(subject.app)
    const forged = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id, issuer: 'https://attacker.example/idp' })
    const refused = await postToAcs(subject.app, { SAMLResponse: forged, RelayState: flow.relayState }, flow.cookie)
    assert.equal(setsSessionCookie(refused), false)
    // A refused response spends nothing: the same flow still completes with the real answer.
    assert.equal(await signInAs(flow), true)
    const again = await postToAcs(subject.app, {
      SAMLResponse: idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id }),
      RelayState: flow.relayState
    }, flow.cookie)
    assert.equal(again.headers.location, '/Account/Login?failure=correlation')
    assert.equal(subject.logs.events('external.sign_in.failed').at(-1)?.failure, 'replay')
  })

  test("filling one's own correlation slots cancels nothing of another browser: the victim still signs in", async () => {
    const victim = await startSaml2SignIn(subject.app)
    // Four unexpired (by their clear issue time) but unreadable flows: slot 0 the oldest.
    const forgedJar = [0, 1, 2, 3].map((slot) => `${CORRELATION}${slot}=${(Date.now() - 10 + slot).toString(36)}.x`).join('; ')
    for (let index = 0; index < 3; index++) {
      const prune = await subject.app.inject({ url: '/External/Challenge?provider=Saml2', headers: { cookie: forgedJar } })
      assert.equal(prune.statusCode, 302)
      // The attacker's oldest slot is overwritten in the attacker's own browser; nothing is deleted.
      assert.deepEqual(prune.cookies.filter((cookie) => cookie.name.startsWith(CORRELATION)).map((cookie) => cookie.name), [`${CORRELATION}0`])
      assert.notEqual(prune.cookies[0]?.value, '')
    }
    assert.equal(await signInAs(victim), true)
  })

  test('a correlation cookie opens only for its own flow id: moved into another flow\'s slot it is refused', async () => {
    const first = await startSaml2SignIn(subject.app)
    const second = await startSaml2SignIn(subject.app)
    const value = first.cookie.slice(first.cookie.indexOf('=') + 1)
    const answer = idp.buildResponse({ acsUrl: second.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: second.request.id })
    const response = await postToAcs(subject.app, { SAMLResponse: answer, RelayState: second.relayState }, `${second.cookie.slice(0, second.cookie.indexOf('='))}=${value}`)
    assert.equal(response.headers.location, '/Account/Login?failure=correlation')
    assert.equal(setsSessionCookie(response), false)
    assert.equal(await signInAs(second), true, 'the flow itself is intact')
  })
})
