/**
 * Key transport algorithms of encrypted assertions, named when refused. node-saml decrypts with
 * xml-encryption 3.x, which implements only `xmlenc#rsa-oaep-mgf1p` (and RSA 1.5, refused here)
 * and reads only the xmldsig SHA digests; XML Encryption 1.1 `xmlenc11#rsa-oaep` (Keycloak's
 * "RSA-OAEP-11") is not implemented. So each unsupported choice is refused as `decryption` before
 * any decryption, and the `external.sign_in.failed` line names the algorithm, which part of the
 * EncryptedKey carries it and what to change at the IdP; a URI outside the known list is logged as
 * `unrecognized`, never as posted. The ciphertexts are made by xml-encryption: an
 * `xmlenc11#rsa-oaep` key with the default SHA-1 digest and MGF1-SHA1 is byte for byte an
 * `rsa-oaep-mgf1p` key, and the SHA-256 variant is xml-encryption's OAEP-SHA256 with MGF1-SHA256,
 * relabelled as Keycloak labels it.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DOMParser, XMLSerializer, type Element } from '@xmldom/xmldom'
import type { TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { decodeResponse, encodeResponse, encryptAssertions, RSA_1_5, type EncryptionChoice } from '../helpers/saml2/encryption.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'

const XENC = 'http://www.w3.org/2001/04/xmlenc#'
const XENC11 = 'http://www.w3.org/2009/xmlenc11#'
const DS = 'http://www.w3.org/2000/09/xmldsig#'
const RSA_OAEP_11 = 'http://www.w3.org/2009/xmlenc11#rsa-oaep'
const USER: TestUser = { nameId: 'kim@example.test', attributes: { role: ['Reader'] } }
const encryptionKey = createSigningKey('sp-encryption')

/** How the EncryptedKey's EncryptionMethod is labelled after encryption. */
interface Label {
  readonly algorithm?: string
  /** Replaces the DigestMethod's Algorithm (xml-encryption always writes one). */
  readonly digest?: string
  /** Adds an xenc11:MGF child with this Algorithm. */
  readonly mgf?: string
}

function relabel (xml: string, label: Label): string {
  const document = new DOMParser().parseFromString(xml, 'text/xml')
  const key = document.getElementsByTagNameNS(XENC, 'EncryptedKey')[0] as Element
  const method = Array.from(key.childNodes).find((node) => (node as Element).localName === 'EncryptionMethod') as Element
  if (label.algorithm !== undefined) method.setAttribute('Algorithm', label.algorithm)
  if (label.digest !== undefined) (method.getElementsByTagNameNS(DS, 'DigestMethod')[0] as Element).setAttribute('Algorithm', label.digest)
  if (label.mgf !== undefined) {
    const mgf = document.createElementNS(XENC11, 'xenc11:MGF')
    mgf.setAttribute('Algorithm', label.mgf)
    method.appendChild(mgf)
  }
  return new XMLSerializer().serializeToString(document)
}

interface Case {
  readonly name: string
  readonly choice?: EncryptionChoice
  readonly label: Label
  readonly algorithm: string
  readonly role: string
  readonly remedy: RegExp
}

const REFUSED: readonly Case[] = [
  {
    name: 'xmlenc11#rsa-oaep with the default SHA-1 digest and MGF1-SHA1',
    label: { algorithm: RSA_OAEP_11, digest: 'http://www.w3.org/2000/09/xmldsig#sha1' },
    algorithm: RSA_OAEP_11,
    role: 'key_transport',
    remedy: /key transport .*http:\/\/www\.w3\.org\/2001\/04\/xmlenc#rsa-oaep-mgf1p \(Keycloak: RSA-OAEP-MGF1P\)/
  },
  {
    name: 'xmlenc11#rsa-oaep with SHA-256 and MGF1-SHA256 (Keycloak RSA-OAEP-11)',
    choice: { oaepDigest: 'sha256' },
    label: { algorithm: RSA_OAEP_11, digest: 'http://www.w3.org/2001/04/xmlenc#sha256', mgf: `${XENC11}mgf1sha256` },
    algorithm: RSA_OAEP_11,
    role: 'key_transport',
    remedy: /rsa-oaep-mgf1p/
  },
  {
    name: 'rsa-oaep-mgf1p with the xmlenc SHA-256 digest (Keycloak RSA-OAEP-MGF1P, SHA-256), which xml-encryption would read as SHA-1',
    label: { digest: 'http://www.w3.org/2001/04/xmlenc#sha256' },
    algorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    role: 'oaep_digest',
    remedy: /digest method to SHA-1/
  },
  {
    name: 'rsa-oaep-mgf1p restating an MGF other than MGF1-SHA1',
    label: { mgf: `${XENC11}mgf1sha256` },
    algorithm: `${XENC11}mgf1sha256`,
    role: 'oaep_mgf',
    remedy: /MGF1 with SHA-1/
  },
  {
    name: 'RSA 1.5 key transport',
    choice: { keyTransport: RSA_1_5 },
    label: {},
    algorithm: RSA_1_5,
    role: 'key_transport',
    remedy: /rsa-oaep-mgf1p/
  },
  {
    name: 'a key transport URI outside the known list',
    label: { algorithm: 'urn:example:planted-algorithm' },
    algorithm: 'unrecognized',
    role: 'key_transport',
    remedy: /rsa-oaep-mgf1p/
  }
]

describe('Saml2 encrypted assertions: key transport algorithms', () => {
  const idp = new TestIdentityProvider()
  let subject: TestApp

  before(async () => {
    await idp.start()
    subject = await buildSaml2App(idp, { EncryptionKey: encryptionKey.privateKeyPem, EncryptionCertificate: encryptionKey.certificatePem })
    await waitForSaml2(subject.app)
  })
  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  async function post (choice: EncryptionChoice, label: Label) {
    const flow = await startSaml2SignIn(subject.app)
    const plain = decodeResponse(idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id }))
    const xml = relabel(await encryptAssertions(plain, encryptionKey.certificatePem, choice), label)
    return await postToAcs(subject.app, { SAMLResponse: encodeResponse(xml), RelayState: flow.relayState }, flow.cookie)
  }

  test('rsa-oaep-mgf1p stating SHA-1 and MGF1-SHA1 explicitly signs in (the accepted baseline)', async () => {
    const response = await post({}, { digest: 'http://www.w3.org/2000/09/xmldsig#sha1', mgf: `${XENC11}mgf1sha1` })
    assert.equal(response.headers.location, '/')
    assert.equal(setsSessionCookie(response), true)
  })

  test('rsa-oaep-mgf1p with the xmldsig SHA-256 digest that xml-encryption itself writes still signs in (OAEP and MGF1 both SHA-256, as xml-encryption pairs them)', async () => {
    const response = await post({ oaepDigest: 'sha256' }, {})
    assert.equal(response.headers.location, '/')
    assert.equal(setsSessionCookie(response), true)
  })

  for (const refused of REFUSED) {
    test(`${refused.name}: refused as decryption, the log names ${refused.algorithm} (${refused.role}) and the IdP setting to change`, async () => {
      const from = subject.logs.lines.length
      const response = await post(refused.choice ?? {}, refused.label)
      assert.equal(response.statusCode, 302)
      assert.match(String(response.headers.location), /^\/Account\/Login\?failure=/)
      assert.equal(setsSessionCookie(response), false)
      const failures = subject.logs.records().slice(from).filter((record) => record.event === 'external.sign_in.failed')
      assert.equal(failures.length, 1)
      assert.equal(failures[0]?.failure, 'decryption')
      assert.equal(failures[0]?.errorName, 'Saml2EncryptionAlgorithmError')
      assert.equal(failures[0]?.algorithm, refused.algorithm)
      assert.equal(failures[0]?.algorithmRole, refused.role)
      assert.match(String(failures[0]?.remedy), refused.remedy)
      assert.equal(subject.logs.text().includes('planted-algorithm'), false, 'a posted URI is never logged')
    })
  }
})
