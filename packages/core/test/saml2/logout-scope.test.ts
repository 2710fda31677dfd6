/**
 * A LogoutRequest ends only sessions of the scheme that received it (issue 33, item 6). The attack
 * run: a second SAML2 provider whose metadata declares the victim provider's IdP entity id, with
 * its own key, signs a LogoutRequest naming a victim user's NameID, sends it to its own logout
 * path, and every matching session of the other provider ended. Here the victim (`Saml2`) and the
 * hostile provider (`Hostile`) share the IdP entity id; the hostile IdP's requests are validly
 * signed for `Hostile`. Its request naming the victim SP in `SPNameQualifier` is refused
 * (`audience`); its request within its own SP, even with the victim's SP entity id for its own,
 * ends nothing of the victim's; the victim's own IdP still ends the session.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, cookieHeaderFrom, type TestApp } from '../helpers/app.js'
import { postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'
import { withSingleLogoutService } from '../helpers/saml2/samlify.js'
import { waitFor } from '../helpers/wait.js'

const SHARED_IDP_ENTITY_ID = 'http://localhost/shared-idp'
const ADA: TestUser = { nameId: 'ada.scope-planted@example.test', attributes: {} }
const SESSION_INDEX = '_scope-session-index'

describe('SAML2 Single Logout is scoped to the scheme that received the LogoutRequest', () => {
  const victimIdp = new TestIdentityProvider(SHARED_IDP_ENTITY_ID)
  const hostileIdp = new TestIdentityProvider(SHARED_IDP_ENTITY_ID)
  hostileIdp.signingKey = createSigningKey('hostile-idp-own-key')
  const spKey = createSigningKey('scope-sp-signing')
  const keys = { SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true }
  let sameSp: TestApp
  let otherSp: TestApp

  async function build (hostileEntityId: string): Promise<TestApp> {
    const app = await buildTestApp({
      nodeEnv: 'development',
      testSignIn: false,
      settings: {
        Authentication: {
          Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: `${victimIdp.origin}/metadata-slo`, ...keys } },
          Schemes: { Hostile: { Type: 'Saml2', EntityId: hostileEntityId, MetadataUrl: `${hostileIdp.origin}/metadata-slo`, ...keys } }
        }
      }
    })
    await waitForSaml2(app.app)
    await waitFor(() => app.app.authentication.providers.get('Hostile')?.status().available === true, 'the Hostile provider', 20_000)
    return app
  }

  before(async () => {
    for (const idp of [victimIdp, hostileIdp]) {
      await idp.start()
      idp.documents.set('/metadata-slo', () => withSingleLogoutService(idp.metadata(), `${idp.origin}/slo`))
    }
    sameSp = await build(SP_ENTITY_ID)
    otherSp = await build('http://127.0.0.1/sp-hostile')
  })
  after(async () => {
    await sameSp?.app.close()
    await otherSp?.app.close()
    await victimIdp.stop()
    await hostileIdp.stop()
  })

  async function signInAtVictim (app: TestApp): Promise<string> {
    const flow = await startSaml2SignIn(app.app)
    const response = await postToAcs(app.app, { SAMLResponse: victimIdp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: ADA, inResponseTo: flow.request.id, sessionIndex: SESSION_INDEX }), RelayState: flow.relayState }, flow.cookie)
    assert.ok(setsSessionCookie(response))
    return cookieHeaderFrom(response)
  }

  async function signedIn (app: TestApp, cookie: string): Promise<boolean> {
    const response = await app.app.inject({ method: 'GET', url: '/api/application-information', headers: { cookie, accept: 'application/json' } })
    return response.statusCode === 200
  }

  /** The logout URL a scheme's metadata publishes (the Destination its IdP must use). */
  async function logoutUrlOf (app: TestApp, metadataPath: string): Promise<string> {
    const metadata = (await app.app.inject({ method: 'GET', url: metadataPath })).body
    return /SingleLogoutService Binding="[^"]+" Location="([^"]+)"/.exec(metadata)?.[1] ?? ''
  }

  const outcomes = (app: TestApp, from: number): Array<Record<string, unknown>> =>
    app.logs.records().slice(from).filter((record) => String(record.event).startsWith('saml2.logout.request'))

  test('the hostile IdP naming the victim SP in SPNameQualifier: refused as audience, the victim\'s session stays', async () => {
    const cookie = await signInAtVictim(otherSp)
    const from = otherSp.logs.lines.length
    const built = hostileIdp.buildLogoutRequest({ destination: await logoutUrlOf(otherSp, '/Saml2/Hostile/Metadata'), nameId: ADA.nameId, spNameQualifier: SP_ENTITY_ID })
    await otherSp.app.inject({ method: 'GET', url: built.redirectPath })
    assert.deepEqual(outcomes(otherSp, from).map((record) => [record.event, record.provider, record.failure]), [['saml2.logout.request.rejected', 'Hostile', 'audience']])
    assert.equal(await signedIn(otherSp, cookie), true)
  })

  for (const withIndex of [false, true]) {
    test(`the hostile IdP within its own SP (the victim's SP entity id as its own), ${withIndex ? 'with the SessionIndex' : 'by NameID'}: accepted, no session of the victim ends`, async () => {
      const cookie = await signInAtVictim(sameSp)
      const from = sameSp.logs.lines.length
      const destination = await logoutUrlOf(sameSp, '/Saml2/Hostile/Metadata')
      const built = hostileIdp.buildLogoutRequest({ destination, nameId: ADA.nameId, ...(withIndex ? { sessionIndexes: [SESSION_INDEX] } : {}) })
      await sameSp.app.inject({ method: 'GET', url: built.redirectPath })
      assert.deepEqual(outcomes(sameSp, from).map((record) => [record.event, record.provider, record.sessions]), [['saml2.logout.request.succeeded', 'Hostile', 0]])
      assert.equal(await signedIn(sameSp, cookie), true)
      // Control: the victim's own IdP, at the victim's logout path, ends it.
      const own = victimIdp.buildLogoutRequest({ destination: await logoutUrlOf(sameSp, '/Saml2/Metadata'), nameId: ADA.nameId, ...(withIndex ? { sessionIndexes: [SESSION_INDEX] } : {}) })
      await sameSp.app.inject({ method: 'GET', url: own.redirectPath })
      assert.equal(await signedIn(sameSp, cookie), false)
    })
  }
})
