/**
 * Signed AuthnRequests (Providers:Saml2 SigningKey/SigningCertificate/SigningCertificateNext):
 * samlify's IdentityProvider with wantAuthnRequestsSigned, reading the SP's own /Saml2/Metadata,
 * verifies the HTTP-Redirect binding signature the way a real IdP (ADFS, Shibboleth) does; a
 * tampered request fails there. The metadata publishes AuthnRequestsSigned and both certificates
 * while rolling; a key that does not match its certificate stops startup naming the key, never
 * printing it.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DOMParser } from '@xmldom/xmldom'
import { loadTestConfiguration, type TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { octetStringOf, queryOf, samlify, type SamlifyEntity, type SamlifyIdentityProvider, samlifyTestIdp } from '../helpers/saml2/samlify.js'

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const DS = 'http://www.w3.org/2000/09/xmldsig#'

describe('Saml2 signed AuthnRequests', () => {
  const idp = new TestIdentityProvider()
  const spKey = createSigningKey('sp-signing')
  const spNext = createSigningKey('sp-signing-next')
  let subject: TestApp
  let samlifyIdp: SamlifyIdentityProvider
  let samlifySp: SamlifyEntity

  before(async () => {
    await idp.start()
    idp.users.set('ada', { nameId: 'ada@example.test', attributes: {} })
    idp.nextUser = 'ada'
    subject = await buildSaml2App(idp, { SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem })
    await waitForSaml2(subject.app)
    const metadata = await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata' })
    samlifySp = samlify.ServiceProvider({ metadata: metadata.body })
    samlifyIdp = samlifyTestIdp(idp, { wantAuthnRequestsSigned: true })
  })
  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  test('the metadata says AuthnRequestsSigned="true" and publishes the signing certificate', async () => {
    const response = await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata' })
    const document = new DOMParser().parseFromString(response.body, 'text/xml')
    const descriptor = document.getElementsByTagNameNS(MD, 'SPSSODescriptor')[0]
    assert.equal(descriptor?.getAttribute('AuthnRequestsSigned'), 'true')
    const signing = Array.from(document.getElementsByTagNameNS(MD, 'KeyDescriptor')).filter((element) => element.getAttribute('use') === 'signing')
    assert.equal(signing.length, 1)
    assert.equal(signing[0]?.getElementsByTagNameNS(DS, 'X509Certificate')[0]?.textContent?.replace(/\s/g, ''), spKey.certificateBase64)
    assert.equal(response.body.includes('PRIVATE KEY'), false)
  })

  test('samlify\'s IdP verifies the redirect-binding signature (rsa-sha256) and reads the request', async () => {
    const response = await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2&returnUrl=%2F' })
    assert.equal(response.statusCode, 302)
    const location = String(response.headers.location)
    const query = queryOf(location)
    assert.equal(query.SigAlg, 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
    assert.ok(query.Signature !== undefined && query.Signature !== '')
    const parsed = await samlifyIdp.parseLoginRequest(samlifySp, 'redirect', { query, octetString: octetStringOf(location) })
    assert.equal(parsed.extract.issuer, SP_ENTITY_ID)
    assert.equal(parsed.sigAlg, 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
  })

  for (const [name, tamper] of [
    ['RelayState changed', (location: string) => { const url = new URL(location); url.searchParams.set('RelayState', 'AAAAAAAAAAAAAAAAAAAAAA'); return url.href }],
    ['SAMLRequest from another challenge', (location: string, other: string) => { const url = new URL(location); url.searchParams.set('SAMLRequest', new URL(other).searchParams.get('SAMLRequest') ?? ''); return url.href }],
    ['signature removed', (location: string) => { const url = new URL(location); url.searchParams.delete('Signature'); return url.href }]
  ] as const) {
    test(`a tampered request (${name}) fails samlify's signature check`, async () => {
      const first = await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2&returnUrl=%2F' })
      const second = await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2&returnUrl=%2F' })
      const tampered = tamper(String(first.headers.location), String(second.headers.location))
      await assert.rejects(samlifyIdp.parseLoginRequest(samlifySp, 'redirect', { query: queryOf(tampered), octetString: octetStringOf(tampered) }),
        /ERR_FAILED_MESSAGE_SIGNATURE_VERIFICATION|ERR_MISSING_SIG_ALG/)
    })
  }

  test('sign-in still completes with signed requests', async () => {
    const flow = await startSaml2SignIn(subject.app)
    const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: { nameId: 'ada@example.test', attributes: {} }, inResponseTo: flow.request.id })
    const response = await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
  })

  test('while rolling, both signing certificates are published; requests are signed with SigningKey only', async () => {
    const rolling = await buildSaml2App(idp, { SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SigningCertificateNext: spNext.certificateBase64 })
    try {
      const response = await rolling.app.inject({ method: 'GET', url: '/Saml2/Metadata' })
      const document = new DOMParser().parseFromString(response.body, 'text/xml')
      const published = Array.from(document.getElementsByTagNameNS(MD, 'KeyDescriptor'))
        .filter((element) => element.getAttribute('use') === 'signing')
        .map((element) => element.getElementsByTagNameNS(DS, 'X509Certificate')[0]?.textContent?.replace(/\s/g, ''))
      assert.deepEqual(published, [spKey.certificateBase64, spNext.certificateBase64])
    } finally {
      await rolling.app.close()
    }
  })

  test('without a signing key, requests are unsigned and the metadata says AuthnRequestsSigned="false"', async () => {
    const unsigned = await buildSaml2App(idp)
    try {
      await waitForSaml2(unsigned.app)
      const metadata = await unsigned.app.inject({ method: 'GET', url: '/Saml2/Metadata' })
      assert.match(metadata.body, /AuthnRequestsSigned="false"/)
      const response = await unsigned.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2&returnUrl=%2F' })
      const query = queryOf(String(response.headers.location))
      assert.equal(query.Signature, undefined)
      await assert.rejects(samlifyIdp.parseLoginRequest(samlifySp, 'redirect', { query, octetString: octetStringOf(String(response.headers.location)) }), /ERR_MISSING_SIG_ALG/)
    } finally {
      await unsigned.app.close()
    }
  })
})

describe('Saml2 signing key configuration', () => {
  const key = createSigningKey('sp-signing')
  const other = createSigningKey('sp-other')
  const saml = (values: Record<string, string>) => ({
    settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: 'http://127.0.0.1:9/metadata', ...values } } } },
    nodeEnv: 'development'
  })
  const PREFIX = 'ProjectTemplate:Authentication:Providers:Saml2'

  for (const [name, values, expectedKey] of [
    ['a key that does not match its certificate', { SigningKey: key.privateKeyPem, SigningCertificate: other.certificatePem }, 'SigningCertificate'],
    ['a key that is not a PEM private key', { SigningKey: `${key.privateKeyPem.slice(0, 120)}garbage`, SigningCertificate: key.certificatePem }, 'SigningKey'],
    ['a key without its certificate', { SigningKey: key.privateKeyPem }, 'SigningCertificate'],
    ['a certificate without its key', { SigningCertificate: key.certificatePem }, 'SigningKey'],
    ['an unreadable next certificate', { SigningKey: key.privateKeyPem, SigningCertificate: key.certificatePem, SigningCertificateNext: 'not a certificate' }, 'SigningCertificateNext']
  ] as const) {
    test(`${name}: startup names ${expectedKey} and never prints the key`, () => {
      const loaded = loadTestConfiguration(saml(values))
      const problems = loaded.errors.filter((error) => error.key === `${PREFIX}:${expectedKey}`)
      assert.equal(problems.length, 1, JSON.stringify(loaded.errors.map((error) => error.key)))
      const everything = JSON.stringify(loaded.errors)
      assert.equal(everything.includes(key.privateKeyPem.split('\n')[1] ?? 'x'), false)
      assert.equal(everything.includes('PRIVATE KEY'), false)
    })
  }

  test('a matching key and certificate load without problems', () => {
    const loaded = loadTestConfiguration(saml({ SigningKey: key.privateKeyPem, SigningCertificate: key.certificatePem, SigningCertificateNext: other.certificatePem }))
    assert.deepEqual(loaded.errors, [])
  })
})
