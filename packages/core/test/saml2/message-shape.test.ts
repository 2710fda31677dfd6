/**
 * Issue 26, item 1: a SAML message that has proven nothing is refused for its shape (element
 * count, children of one element, depth) before node-saml or xml-crypto walks it, because their
 * XPath engine grows with the square of an element's child count: a 64 KB LogoutRequest of 16,000
 * empty siblings held the event loop for 2.4 s before its signature was looked at. The refusals
 * are asserted by their reason (before the bounds they were `signature` refusals, or for the ACS a
 * sign-in); the latency under a flood is asserted in test/soak/saml2-parse-flood.soak.ts.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { LOGOUT_MESSAGE_SHAPE, METADATA_SHAPE, RESPONSE_SHAPE, type XmlShape } from '../../src/saml2/message-shape.js'
import { readResponseEnvelope, Saml2ResponseError } from '../../src/saml2/service-provider.js'
import { parseXmlDocument, Saml2XmlError } from '../../src/saml2/xml.js'

const PROTOCOL = 'xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"'
const siblings = (count: number): string => '<a/>'.repeat(count)
const nested = (depth: number): string => '<a>'.repeat(depth) + '</a>'.repeat(depth)
/** `groups` parents of `fan` children each: many elements without a wide element. */
const spread = (groups: number, fan: number): string => `<b>${siblings(fan)}</b>`.repeat(groups)
const logoutRequest = (inner: string): string => `<samlp:LogoutRequest ${PROTOCOL} ID="_1">${inner}</samlp:LogoutRequest>`

const HOSTILE: ReadonlyArray<{ name: string, shape: XmlShape, xml: string, reason: string }> = [
  { name: 'the issue\'s LogoutRequest: 16,000 empty siblings under the root', shape: LOGOUT_MESSAGE_SHAPE, xml: logoutRequest(siblings(16_000)), reason: 'too many elements' },
  { name: 'a LogoutRequest whose root has one child more than allowed', shape: LOGOUT_MESSAGE_SHAPE, xml: logoutRequest(siblings(LOGOUT_MESSAGE_SHAPE.maxChildren + 1)), reason: 'too many child elements' },
  { name: 'a LogoutRequest nested one level too deep', shape: LOGOUT_MESSAGE_SHAPE, xml: logoutRequest(nested(LOGOUT_MESSAGE_SHAPE.maxDepth)), reason: 'nested too deeply' },
  { name: 'a LogoutRequest with many elements spread under narrow parents', shape: LOGOUT_MESSAGE_SHAPE, xml: logoutRequest(spread(8, 40)), reason: 'too many elements' },
  { name: 'a SAMLResponse whose root has 16,000 siblings', shape: RESPONSE_SHAPE, xml: `<samlp:Response ${PROTOCOL}>${siblings(16_000)}</samlp:Response>`, reason: 'too many elements' },
  { name: 'a SAMLResponse with one wide element inside the element bound', shape: RESPONSE_SHAPE, xml: `<samlp:Response ${PROTOCOL}><b>${siblings(RESPONSE_SHAPE.maxChildren + 1)}</b></samlp:Response>`, reason: 'too many child elements' },
  { name: 'a SAMLResponse spread wide and deep over the element bound', shape: RESPONSE_SHAPE, xml: `<samlp:Response ${PROTOCOL}>${spread(70, 64)}</samlp:Response>`, reason: 'too many elements' },
  { name: 'a SAMLResponse nested past the depth bound', shape: RESPONSE_SHAPE, xml: `<samlp:Response ${PROTOCOL}>${nested(RESPONSE_SHAPE.maxDepth)}</samlp:Response>`, reason: 'nested too deeply' },
  { name: 'metadata whose root has 5,000 entities', shape: METADATA_SHAPE, xml: `<m>${siblings(5_000)}</m>`, reason: 'too many child elements' }
]

describe('SAML2 documents are bounded in shape before any library reads them', () => {
  for (const hostile of HOSTILE) {
    test(`${hostile.name}: refused (${hostile.reason})`, () => {
      assert.throws(() => parseXmlDocument(hostile.xml, hostile.shape), (error: unknown) => error instanceof Saml2XmlError && error.reason === hostile.reason)
    })
  }

  test('the bounds themselves are allowed: exactly maxChildren siblings and maxDepth levels', () => {
    assert.doesNotThrow(() => parseXmlDocument(logoutRequest(siblings(LOGOUT_MESSAGE_SHAPE.maxChildren)), LOGOUT_MESSAGE_SHAPE))
    assert.doesNotThrow(() => parseXmlDocument(logoutRequest(nested(LOGOUT_MESSAGE_SHAPE.maxDepth - 1)), LOGOUT_MESSAGE_SHAPE))
  })

  test('a real signed response with 1,100 attribute values (1,000 groups, 100 roles) is within RESPONSE_SHAPE', () => {
    const idp = new TestIdentityProvider()
    const groups = Array.from({ length: 1_000 }, (_, index) => `group-${index}`)
    const roles = Array.from({ length: 100 }, (_, index) => `role-${index}`)
    const samlResponse = idp.buildResponse({ acsUrl: 'http://127.0.0.1/Saml2/Acs', audience: SP_ENTITY_ID, inResponseTo: '_request', user: { nameId: 'ada@example.test', attributes: { groups, roles } } })
    assert.equal(readResponseEnvelope(samlResponse).inResponseTo, '_request')
  })
})

describe('the endpoints refuse a flooded message by its shape', () => {
  const idp = new TestIdentityProvider()
  const spKey = createSigningKey('sp-signing')
  let subject: TestApp

  before(async () => {
    await idp.start()
    subject = await buildSaml2App(idp, { SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true })
    await waitForSaml2(subject.app)
  })

  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  test('POST /Saml2/Logout with the 64 KB, 16,000-sibling LogoutRequest: refused as malformed, no signature check', async () => {
    const from = subject.logs.records().length
    const samlRequest = Buffer.from(logoutRequest(siblings(16_000)), 'utf8').toString('base64')
    const response = await subject.app.inject({
      method: 'POST',
      url: '/Saml2/Logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ SAMLRequest: samlRequest }).toString()
    })
    assert.equal(response.statusCode, 302)
    const refusals = subject.logs.records().slice(from).filter((record) => record.event === 'saml2.logout.request.rejected')
    assert.deepEqual(refusals.map((record) => [record.binding, record.failure]), [['post', 'malformed']])
  })

  test('a genuine signed LogoutRequest padded with siblings after signing: refused as malformed', async () => {
    const built = idp.buildLogoutRequest({ destination: 'http://127.0.0.1/Saml2/Logout', nameId: 'ada@example.test' })
    const xml = Buffer.from(built.postFields.SAMLRequest as string, 'base64').toString('utf8').replace('</samlp:LogoutRequest>', `${siblings(2_000)}</samlp:LogoutRequest>`)
    const from = subject.logs.records().length
    await subject.app.inject({
      method: 'POST',
      url: '/Saml2/Logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ SAMLRequest: Buffer.from(xml, 'utf8').toString('base64') }).toString()
    })
    const refusals = subject.logs.records().slice(from).filter((record) => record.event === 'saml2.logout.request.rejected')
    assert.deepEqual(refusals.map((record) => record.failure), ['malformed'])
  })

  test('the ACS, after correlation: a genuinely signed response padded with 16,000 siblings signs nobody in', async () => {
    const flow = await startSaml2SignIn(subject.app)
    const samlResponse = idp.buildResponse({
      acsUrl: flow.request.acsUrl,
      audience: SP_ENTITY_ID,
      inResponseTo: flow.request.id,
      user: { nameId: 'ada@example.test', attributes: {} },
      afterSigning: (xml) => xml.replace('</samlp:Response>', `${siblings(16_000)}</samlp:Response>`)
    })
    const from = subject.logs.events('external.sign_in.failed').length
    const response = await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assert.equal(response.statusCode, 302)
    assert.equal(setsSessionCookie(response), false)
    assert.deepEqual(subject.logs.events('external.sign_in.failed').slice(from).map((event) => event.failure), ['malformed'])
  })

  test('readResponseEnvelope names the shape in its refusal', () => {
    const samlResponse = Buffer.from(`<samlp:Response ${PROTOCOL}>${siblings(16_000)}</samlp:Response>`, 'utf8').toString('base64')
    assert.throws(() => readResponseEnvelope(samlResponse), (error: unknown) =>
      error instanceof Saml2ResponseError && error.failure === 'malformed' && error.message === 'SAMLResponse rejected: too many elements')
  })
})
