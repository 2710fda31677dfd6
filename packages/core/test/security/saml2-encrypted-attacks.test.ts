/**
 * Encrypted assertions (Providers:Saml2 EncryptionKey/EncryptionCertificate/EncryptionKeyPrevious)
 * and the SAML2 attack corpus in encrypted form. The test IdP encrypts with xml-encryption
 * (RSA-OAEP key transport, AES-GCM or AES-CBC content) to the SP's published encryption
 * certificate, as ADFS and Entra token encryption do. Every check of the plaintext path must hold
 * behind the encryption: the signature is verified over the decrypted assertion, exactly one
 * assertion, no comments or DTDs inside the ciphertext, and XSW1-XSW8 wrapped around or inside the
 * EncryptedAssertion are refused. Each refusal: no session cookie, a redirect to the login page,
 * one `external.sign_in.failed` line naming the class, no posted message in any log line.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DOMParser, XMLSerializer, type Element } from '@xmldom/xmldom'
import type { LightMyRequestResponse } from 'fastify'
import type { Saml2FailureClass } from '../../src/saml2/service-provider.js'
import type { TestApp } from '../helpers/app.js'
import { assertNoLeak, buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2, type StartedFlow } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import {
  AES256_CBC, AES256_GCM, decodeResponse, encodeResponse, encryptAssertions, RSA_1_5, signResponse, TRIPLEDES_CBC, type EncryptionChoice
} from '../helpers/saml2/encryption.js'
import { TestIdentityProvider, type ResponseOptions, type TestUser } from '../helpers/saml2/identity-provider.js'
import { ATTACKER_NAME_ID, SAML, wrap, type XswVariant } from '../helpers/saml2/xsw.js'

const MALLORY: TestUser = { nameId: 'mallory@example.com', attributes: { role: ['Reader'] } }
const ATTACKER: TestUser = { nameId: ATTACKER_NAME_ID, attributes: { role: ['Administrator'] } }
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const DS = 'http://www.w3.org/2000/09/xmldsig#'

const encryptionKey = createSigningKey('sp-encryption')
const previousKey = createSigningKey('sp-encryption-previous')
const strangerKey = createSigningKey('not-this-sp')

function failuresOf (subject: TestApp, from: number): string[] {
  return subject.logs.records().slice(from).filter((record) => record.event === 'external.sign_in.failed').map((record) => String(record.failure))
}

function assertRefused (response: LightMyRequestResponse): void {
  assert.equal(response.statusCode, 302)
  assert.match(String(response.headers.location), /^\/Account\/Login\?failure=/)
  assert.equal(setsSessionCookie(response), false)
}

describe('Saml2 encrypted assertions', () => {
  const idp = new TestIdentityProvider()
  let main: TestApp
  let responseSignatureOnly: TestApp
  let withoutKey: TestApp
  const posted: string[] = []

  before(async () => {
    await idp.start()
    main = await buildSaml2App(idp, { EncryptionKey: encryptionKey.privateKeyPem, EncryptionCertificate: encryptionKey.certificatePem, EncryptionKeyPrevious: previousKey.privateKeyPem })
    responseSignatureOnly = await buildSaml2App(idp, { EncryptionKey: encryptionKey.privateKeyPem, EncryptionCertificate: encryptionKey.certificatePem, RequireSignedAssertions: false })
    withoutKey = await buildSaml2App(idp)
    await Promise.all([main, responseSignatureOnly, withoutKey].map(async (subject) => { await waitForSaml2(subject.app) }))
  })
  after(async () => {
    for (const subject of [main, responseSignatureOnly, withoutKey]) await subject?.app.close()
    await idp.stop()
  })

  const baseFor = (flow: StartedFlow, user: TestUser = MALLORY): ResponseOptions =>
    ({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user, inResponseTo: flow.request.id })

  async function post (subject: TestApp, flow: StartedFlow, xml: string): Promise<LightMyRequestResponse> {
    const samlResponse = encodeResponse(xml)
    posted.push(samlResponse)
    return await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
  }

  async function signedEncrypted (flow: StartedFlow, choice: EncryptionChoice = {}, certificatePem = encryptionKey.certificatePem, options: Partial<ResponseOptions> = {}): Promise<string> {
    return await encryptAssertions(decodeResponse(idp.buildResponse({ ...baseFor(flow), ...options })), certificatePem, choice)
  }

  test('/Saml2/Metadata publishes the encryption certificate as KeyDescriptor use="encryption"', async () => {
    const response = await main.app.inject({ method: 'GET', url: '/Saml2/Metadata' })
    const document = new DOMParser().parseFromString(response.body, 'text/xml')
    const descriptors = Array.from(document.getElementsByTagNameNS(MD, 'KeyDescriptor')).filter((element) => element.getAttribute('use') === 'encryption')
    assert.equal(descriptors.length, 1)
    assert.equal(descriptors[0]?.getElementsByTagNameNS(DS, 'X509Certificate')[0]?.textContent?.replace(/\s/g, ''), encryptionKey.certificateBase64)
    assert.equal(response.body.includes(previousKey.certificateBase64), false, 'the previous key is accepted, never published')
    assert.equal(response.body.includes('PRIVATE KEY'), false)
  })

  for (const [name, choice] of [['AES-256-GCM', { content: AES256_GCM }], ['AES-256-CBC (ADFS default)', { content: AES256_CBC }]] as const) {
    test(`a signed assertion encrypted with RSA-OAEP + ${name} signs in with the decrypted claims`, async () => {
      const flow = await startSaml2SignIn(main.app)
      const response = await post(main, flow, await signedEncrypted(flow, choice))
      assert.equal(response.statusCode, 302)
      assert.equal(response.headers.location, '/')
      assert.ok(setsSessionCookie(response))
    })
  }

  test('Shibboleth layout: the EncryptedKey beside EncryptedData, referenced by a RetrievalMethod, signs in', async () => {
    const flow = await startSaml2SignIn(main.app)
    const document = new DOMParser().parseFromString(await signedEncrypted(flow), 'text/xml')
    const XENC = 'http://www.w3.org/2001/04/xmlenc#'
    const data = document.getElementsByTagNameNS(XENC, 'EncryptedData')[0] as Element
    const key = document.getElementsByTagNameNS(XENC, 'EncryptedKey')[0] as Element
    const keyInfo = key.parentNode as Element
    keyInfo.removeChild(key)
    key.setAttribute('Id', '_shibboleth-key')
    const retrieval = document.createElementNS(DS, 'ds:RetrievalMethod')
    retrieval.setAttribute('Type', 'http://www.w3.org/2001/04/xmlenc#EncryptedKey')
    retrieval.setAttribute('URI', '#_shibboleth-key')
    keyInfo.appendChild(retrieval)
    ;(data.parentNode as Element).appendChild(key)
    const response = await post(main, flow, new XMLSerializer().serializeToString(document))
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
  })

  test('rollover: an assertion encrypted to the previous certificate is still accepted (EncryptionKeyPrevious)', async () => {
    const flow = await startSaml2SignIn(main.app)
    const response = await post(main, flow, await signedEncrypted(flow, {}, previousKey.certificatePem))
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
  })

  const refusals: Array<{ name: string, app: () => TestApp, failure: Saml2FailureClass, build: (flow: StartedFlow) => Promise<string> }> = [
    { name: 'encrypted to a certificate that is not this SP\'s', app: () => main, failure: 'decryption', build: async (flow) => await signedEncrypted(flow, {}, strangerKey.certificatePem) },
    { name: 'RSA 1.5 key transport (Bleichenbacher class)', app: () => main, failure: 'decryption', build: async (flow) => await signedEncrypted(flow, { keyTransport: RSA_1_5 }) },
    { name: 'triple-DES content encryption', app: () => main, failure: 'decryption', build: async (flow) => await signedEncrypted(flow, { content: TRIPLEDES_CBC }) },
    {
      name: 'triple-DES content announced by a foreign-namespace EncryptionMethod placed first, an AES one after it (xml-encryption matches by local name)',
      app: () => main,
      failure: 'decryption',
      build: async (flow) => {
        const document = new DOMParser().parseFromString(await signedEncrypted(flow, { content: TRIPLEDES_CBC }), 'text/xml')
        const data = document.getElementsByTagNameNS('http://www.w3.org/2001/04/xmlenc#', 'EncryptedData')[0] as Element
        const announced = Array.from(data.childNodes).find((node) => (node as Element).localName === 'EncryptionMethod') as Element
        announced.setAttribute('Algorithm', AES256_GCM)
        const decoy = document.createElementNS('urn:example:decoy', 'x:EncryptionMethod')
        decoy.setAttribute('Algorithm', TRIPLEDES_CBC)
        data.insertBefore(decoy, data.firstChild)
        return new XMLSerializer().serializeToString(document)
      }
    },
    { name: 'no EncryptionKey configured: EncryptedAssertion refused as before', app: () => withoutKey, failure: 'malformed', build: async (flow) => await signedEncrypted(flow) },
    { name: 'an unsigned assertion inside the encryption (RequireSignedAssertions)', app: () => main, failure: 'signature', build: async (flow) => await signedEncrypted(flow, {}, encryptionKey.certificatePem, { signAssertion: false }) },
    {
      name: 'the NameID changed after signing, then encrypted: the signature is checked over the plaintext',
      app: () => main,
      failure: 'signature',
      build: async (flow) => await signedEncrypted(flow, {}, encryptionKey.certificatePem, { afterSigning: (xml) => xml.replace(`>${MALLORY.nameId}<`, `>${ATTACKER_NAME_ID}<`) })
    },
    {
      name: 'a comment inside the encrypted NameID (truncation, CVE-2017-11428 class)',
      app: () => main,
      failure: 'malformed',
      build: async (flow) => await signedEncrypted(flow, {}, encryptionKey.certificatePem, {
        user: { nameId: `${ATTACKER_NAME_ID}.mallory`, attributes: {} },
        afterSigning: (xml) => xml.replace(`>${ATTACKER_NAME_ID}.mallory<`, `>${ATTACKER_NAME_ID}<!---->.mallory<`)
      })
    },
    {
      name: 'a plaintext evil assertion beside the EncryptedAssertion',
      app: () => main,
      failure: 'malformed',
      build: async (flow) => {
        const encrypted = new DOMParser().parseFromString(await signedEncrypted(flow), 'text/xml')
        const evil = new DOMParser().parseFromString(decodeResponse(idp.buildResponse({ ...baseFor(flow, ATTACKER), signAssertion: false })), 'text/xml')
        const evilAssertion = evil.getElementsByTagNameNS(SAML, 'Assertion')[0] as Element
        const root = encrypted.documentElement as Element
        root.insertBefore(encrypted.importNode(evilAssertion, true), encrypted.getElementsByTagNameNS(SAML, 'EncryptedAssertion')[0] ?? null)
        return new XMLSerializer().serializeToString(encrypted)
      }
    },
    {
      name: 'two EncryptedAssertions (the attacker\'s own unsigned one first)',
      app: () => main,
      failure: 'malformed',
      build: async (flow) => {
        const genuine = new DOMParser().parseFromString(await signedEncrypted(flow), 'text/xml')
        const evil = new DOMParser().parseFromString(await encryptAssertions(decodeResponse(idp.buildResponse({ ...baseFor(flow, ATTACKER), signAssertion: false })), encryptionKey.certificatePem), 'text/xml')
        const root = genuine.documentElement as Element
        root.insertBefore(genuine.importNode(evil.getElementsByTagNameNS(SAML, 'EncryptedAssertion')[0] as Element, true), genuine.getElementsByTagNameNS(SAML, 'EncryptedAssertion')[0] ?? null)
        return new XMLSerializer().serializeToString(genuine)
      }
    }
  ]

  // XSW3-XSW8 wrap the signed Assertion; in encrypted form every outermost assertion of the
  // wrapped message is then encrypted (anyone can encrypt to the SP's public certificate).
  const ASSERTION_LEVEL: readonly XswVariant[] = ['XSW3', 'XSW4', 'XSW5', 'XSW6', 'XSW7', 'XSW8']
  const XSW_ENCRYPTED: Readonly<Record<string, Saml2FailureClass>> = {
    XSW3: 'malformed', XSW4: 'malformed', XSW5: 'malformed', XSW6: 'malformed', XSW7: 'malformed', XSW8: 'malformed'
  }
  for (const variant of ASSERTION_LEVEL) {
    for (const id of ['fresh', 'duplicate'] as const) {
      refusals.push({
        name: `${variant} (${id} ID) in encrypted form`,
        app: () => main,
        failure: XSW_ENCRYPTED[variant] as Saml2FailureClass,
        build: async (flow) => await encryptAssertions(wrap(decodeResponse(idp.buildResponse(baseFor(flow))), variant, id), encryptionKey.certificatePem)
      })
    }
  }
  // XSW1/XSW2 wrap a signed Response whose EncryptedAssertion it covers (encrypt, then sign the
  // Response); the evil root then carries the attacker's own encrypted, unsigned assertion.
  for (const variant of ['XSW1', 'XSW2'] as const) {
    for (const id of ['fresh', 'duplicate'] as const) {
      refusals.push({
        name: `${variant} (${id} ID): signed Response over an EncryptedAssertion wrapped, evil encrypted assertion at the root`,
        app: () => responseSignatureOnly,
        failure: 'signature',
        build: async (flow) => {
          const signed = signResponse(await encryptAssertions(decodeResponse(idp.buildResponse({ ...baseFor(flow), signAssertion: false })), encryptionKey.certificatePem), idp.signingKey)
          const wrapped = new DOMParser().parseFromString(wrap(signed, variant, id), 'text/xml')
          const evil = new DOMParser().parseFromString(await encryptAssertions(decodeResponse(idp.buildResponse({ ...baseFor(flow, ATTACKER), signAssertion: false })), encryptionKey.certificatePem), 'text/xml')
          const root = wrapped.documentElement as Element
          const rootEncrypted = Array.from(root.childNodes).find((node) => (node as Element).localName === 'EncryptedAssertion') as Element
          root.replaceChild(wrapped.importNode(evil.getElementsByTagNameNS(SAML, 'EncryptedAssertion')[0] as Element, true), rootEncrypted)
          return new XMLSerializer().serializeToString(wrapped)
        }
      })
    }
  }

  test('control: a correctly signed, encrypted response with a response-level signature only signs in', async () => {
    const flow = await startSaml2SignIn(responseSignatureOnly.app)
    const xml = signResponse(await encryptAssertions(decodeResponse(idp.buildResponse({ ...baseFor(flow), signAssertion: false })), encryptionKey.certificatePem), idp.signingKey)
    const response = await post(responseSignatureOnly, flow, xml)
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
  })

  for (const refusal of refusals) {
    test(`${refusal.name} -> ${refusal.failure}`, async () => {
      const subject = refusal.app()
      const flow = await startSaml2SignIn(subject.app)
      const from = subject.logs.lines.length
      const response = await post(subject, flow, await refusal.build(flow))
      assertRefused(response)
      assert.deepEqual(failuresOf(subject, from), [refusal.failure])
      assert.equal(subject.logs.events('external.sign_in.succeeded').filter((record) => subject.logs.records().indexOf(record) >= from).length, 0)
    })
  }

  test('no log line carries a posted SAMLResponse, a key or the attacker identity', () => {
    for (const subject of [main, responseSignatureOnly, withoutKey]) {
      const text = subject.logs.text()
      assertNoLeak(text, posted)
      assert.equal(text.includes(ATTACKER_NAME_ID), false)
      assert.equal(text.includes('PRIVATE KEY'), false)
    }
  })
})

describe('Saml2 encryption key configuration', () => {
  test('EncryptionCertificate not matching EncryptionKey stops startup naming the key, never printing it', async () => {
    const { loadTestConfiguration } = await import('../helpers/app.js')
    const loaded = loadTestConfiguration({
      nodeEnv: 'development',
      settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: 'http://127.0.0.1:9/metadata', EncryptionKey: encryptionKey.privateKeyPem, EncryptionCertificate: strangerKey.certificatePem } } } }
    })
    assert.deepEqual(loaded.errors.map((error) => error.key), ['ProjectTemplate:Authentication:Providers:Saml2:EncryptionCertificate'])
    assert.equal(JSON.stringify(loaded.errors).includes('PRIVATE KEY'), false)
  })
})
