/**
 * Signature placement refusals an operator can tell apart (issue 23, item 4), against the SAML
 * test IdP: a response signed only at the Response level under RequireSignedAssertions=true is
 * `assertion_unsigned` and its log line names the setting; an unsigned response, or an assertion
 * signed by a key the IdP metadata does not hold, stays `signature`; with RequireSignedAssertions
 * false the response-level signature signs in (the control).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider, type ResponseOptions, type TestUser } from '../helpers/saml2/identity-provider.js'

const USER: TestUser = { nameId: 'grace@example.test', attributes: { role: ['Administrator'] } }

describe('SAML2 signature placement', () => {
  const idp = new TestIdentityProvider()
  let strict: TestApp
  let responseOnly: TestApp
  before(async () => {
    await idp.start()
    strict = await buildSaml2App(idp)
    responseOnly = await buildSaml2App(idp, { RequireSignedAssertions: false })
    await waitForSaml2(strict.app)
    await waitForSaml2(responseOnly.app)
  })
  after(async () => { await strict?.app.close(); await responseOnly?.app.close(); await idp.stop() })

  async function post (subject: TestApp, options: Partial<ResponseOptions>) {
    const flow = await startSaml2SignIn(subject.app)
    const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id, ...options })
    return await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
  }

  test('response signed, assertion unsigned, RequireSignedAssertions true: assertion_unsigned, the log names the setting', async () => {
    const response = await post(strict, { signAssertion: false, signResponse: true })
    assert.equal(response.headers.location, '/Account/Login?failure=failed')
    assert.equal(setsSessionCookie(response), false)
    const line = strict.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'assertion_unsigned')
    assert.equal(line?.setting, 'ProjectTemplate:Authentication:Providers:Saml2:RequireSignedAssertions')
    assert.equal(line?.detail, 'response_signed_assertion_unsigned')
  })

  const signatureFailures: Array<[string, Partial<ResponseOptions>]> = [
    ['nothing signed', { signAssertion: false, signResponse: false }],
    ['the response signed by a key the metadata does not hold, the assertion unsigned', { signAssertion: false, signResponse: true, signingKey: createSigningKey('not-the-idp') }],
    ['the assertion signed by a key the metadata does not hold', { signingKey: createSigningKey('not-the-idp-either') }]
  ]
  for (const [name, options] of signatureFailures) {
    test(`${name}: signature, no setting named`, async () => {
      const response = await post(strict, options)
      assert.equal(response.headers.location, '/Account/Login?failure=failed')
      assert.equal(setsSessionCookie(response), false)
      const line = strict.logs.events('external.sign_in.failed').at(-1)
      assert.equal(line?.failure, 'signature')
      assert.equal(line?.setting, undefined)
    })
  }

  test('control: the same response-level signature signs in with RequireSignedAssertions false', async () => {
    const response = await post(responseOnly, { signAssertion: false, signResponse: true })
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
  })
})
