/** EncryptedAssertion: the accepted XML Encryption algorithms, and decryption with the SP keys. */
import { XMLSerializer, type Element } from '@xmldom/xmldom'
import { decryptXml } from '@node-saml/node-saml/lib/xml.js'
import { assertNoCommentsOrInstructions, attributeOf, childElements, elementChildren, isElement, parseXmlDocument, SAML_ASSERTION_NS, Saml2XmlError, XMLDSIG_NS } from './xml.js'
import { RESPONSE_SHAPE } from './message-shape.js'
import { Saml2ResponseError } from './errors.js'

/**
 * XML Encryption algorithms accepted, as node-saml's decryption library (xml-encryption 3.x)
 * implements them. Key transport: RSA-OAEP `rsa-oaep-mgf1p` only (MGF1 with SHA-1, fixed by the
 * identifier). RSA 1.5 is the Bleichenbacher class; XML Encryption 1.1 `xmlenc11#rsa-oaep` (which
 * may name its own MGF) is not implemented by xml-encryption, so it is refused by name rather than
 * failing later as "no key decrypts". The OAEP digest (a DigestMethod child) defaults to SHA-1;
 * xml-encryption understands only the xmldsig URIs below and silently uses SHA-1 for any other,
 * so every other digest is refused by name too. Content: AES-GCM or AES-CBC (128/256).
 */
const RSA_OAEP_MGF1P = 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p'
const KEY_TRANSPORT_ALGORITHMS = new Set([RSA_OAEP_MGF1P])
const CONTENT_ALGORITHMS = new Set([
  'http://www.w3.org/2009/xmlenc11#aes128-gcm', 'http://www.w3.org/2009/xmlenc11#aes256-gcm',
  'http://www.w3.org/2001/04/xmlenc#aes128-cbc', 'http://www.w3.org/2001/04/xmlenc#aes256-cbc'
])
/** OAEP digests xml-encryption applies (to the OAEP hash and, as Node does, to MGF1 as well). */
const OAEP_DIGEST_ALGORITHMS = new Set([
  'http://www.w3.org/2000/09/xmldsig#sha1', 'http://www.w3.org/2000/09/xmldsig#sha256', 'http://www.w3.org/2000/09/xmldsig#sha512'
])
/** The MGF an rsa-oaep-mgf1p key may restate: MGF1 with SHA-1, nothing else. */
const OAEP_MGF_ALGORITHMS = new Set(['http://www.w3.org/2009/xmlenc11#mgf1sha1'])
const XMLENC_NS = 'http://www.w3.org/2001/04/xmlenc#'

/**
 * Refused algorithms this product can name in a log line (a posted URI outside this list is
 * logged as `unrecognized`: the log never carries message content).
 */
const NAMED_ALGORITHMS = new Set([
  'http://www.w3.org/2009/xmlenc11#rsa-oaep', 'http://www.w3.org/2001/04/xmlenc#rsa-1_5',
  'http://www.w3.org/2001/04/xmlenc#tripledes-cbc', 'http://www.w3.org/2001/04/xmlenc#aes192-cbc',
  'http://www.w3.org/2009/xmlenc11#aes192-gcm',
  'http://www.w3.org/2001/04/xmlenc#sha256', 'http://www.w3.org/2001/04/xmlenc#sha512',
  'http://www.w3.org/2001/04/xmldsig-more#sha384', 'http://www.w3.org/2001/04/xmldsig-more#sha224',
  'http://www.w3.org/2009/xmlenc11#mgf1sha224', 'http://www.w3.org/2009/xmlenc11#mgf1sha256',
  'http://www.w3.org/2009/xmlenc11#mgf1sha384', 'http://www.w3.org/2009/xmlenc11#mgf1sha512'
])

/** Which part of the EncryptedAssertion names the refused algorithm. */
export type EncryptionAlgorithmRole = 'key_transport' | 'content' | 'oaep_digest' | 'oaep_mgf'

/** What to change at the IdP, per role (fixed text; docs/providers/saml2.md, "Encrypted assertions"). */
const REMEDIES: Readonly<Record<EncryptionAlgorithmRole, string>> = {
  key_transport: 'set the IdP key transport (key encryption) algorithm to http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p (Keycloak: RSA-OAEP-MGF1P)',
  content: 'set the IdP content (data) encryption algorithm to http://www.w3.org/2009/xmlenc11#aes256-gcm (Keycloak: AES_256_GCM)',
  oaep_digest: 'set the IdP RSA-OAEP digest method to SHA-1 (http://www.w3.org/2000/09/xmldsig#sha1)',
  oaep_mgf: 'use http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p without an MGF other than MGF1 with SHA-1'
}

/**
 * An EncryptedAssertion whose algorithm this product does not accept (`decryption`). Its
 * `diagnostics` (the algorithm, which part names it and what to change at the IdP) are added to
 * the `external.sign_in.failed` log line.
 */
export class Saml2EncryptionAlgorithmError extends Saml2ResponseError {
  constructor (role: EncryptionAlgorithmRole, algorithm: string) {
    const named = NAMED_ALGORITHMS.has(algorithm) ? algorithm : 'unrecognized'
    super('decryption', `${role.replace('_', ' ')} algorithm ${named} not accepted: ${REMEDIES[role]}`, {
      diagnostics: { algorithm: named, algorithmRole: role, remedy: REMEDIES[role] }
    })
    this.name = 'Saml2EncryptionAlgorithmError'
  }
}

/** The single child of `method` with this local name (any namespace, as xml-encryption reads it). */
function parameterOf (method: Element, localName: string): Element | undefined | null {
  const found = elementChildren(method).filter((child) => child.localName === localName)
  if (found.length > 1) return null
  return found[0]
}

/** Refuses, by name, any algorithm of the EncryptedAssertion that is not accepted. */
function assertAcceptedAlgorithms (keyMethod: Element, dataMethod: Element): void {
  const keyTransport = attributeOf(keyMethod, 'Algorithm') ?? ''
  if (!KEY_TRANSPORT_ALGORITHMS.has(keyTransport)) throw new Saml2EncryptionAlgorithmError('key_transport', keyTransport)
  const content = attributeOf(dataMethod, 'Algorithm') ?? ''
  if (!CONTENT_ALGORITHMS.has(content)) throw new Saml2EncryptionAlgorithmError('content', content)
  const digest = parameterOf(keyMethod, 'DigestMethod')
  if (digest === null) throw new Saml2ResponseError('decryption', 'more than one OAEP DigestMethod')
  if (digest !== undefined && !OAEP_DIGEST_ALGORITHMS.has(attributeOf(digest, 'Algorithm') ?? '')) {
    throw new Saml2EncryptionAlgorithmError('oaep_digest', attributeOf(digest, 'Algorithm') ?? '')
  }
  const mgf = parameterOf(keyMethod, 'MGF')
  if (mgf === null) throw new Saml2ResponseError('decryption', 'more than one OAEP MGF')
  if (mgf !== undefined && !OAEP_MGF_ALGORITHMS.has(attributeOf(mgf, 'Algorithm') ?? '')) {
    throw new Saml2EncryptionAlgorithmError('oaep_mgf', attributeOf(mgf, 'Algorithm') ?? '')
  }
}

export interface DecryptedAssertion {
  /** The decrypted Assertion element, checked like a posted message (no DTD, comments, PIs; one assertion). */
  readonly xml: string
  /** The key that decrypted it (handed to node-saml, which decrypts again and verifies the signature inside). */
  readonly keyPem: string
}

/**
 * Decrypts the response's EncryptedAssertion with the first key that opens it (current, then
 * previous) and applies the envelope rules to the plaintext, which the posted-message checks
 * could not see: a DOCTYPE, a comment inside the NameID or a second (wrapped) assertion hidden
 * inside the encryption is refused here. Failures are `decryption` (no key opens it, an
 * algorithm outside the accepted set) or `malformed` (the plaintext).
 */
export async function decryptAssertion (xml: string, privateKeysPem: readonly string[]): Promise<DecryptedAssertion> {
  let encryptedXml: string
  try {
    const response = parseXmlDocument(xml, RESPONSE_SHAPE).documentElement as Element
    const [encrypted, ...others] = childElements(response, SAML_ASSERTION_NS, 'EncryptedAssertion')
    if (encrypted === undefined || others.length > 0) throw new Saml2ResponseError('malformed', 'the response must contain exactly one assertion')
    // By local name in any namespace, as xml-encryption selects them (first match wins there):
    // every EncryptionMethod must be one this product accepts, and there is one of each.
    const methods = Array.from(encrypted.getElementsByTagName('*')).filter((element) => element.localName === 'EncryptionMethod')
    const keyMethods = methods.filter((method) => (method.parentNode as Element | null)?.localName === 'EncryptedKey' && method.namespaceURI === XMLENC_NS)
    const dataMethods = methods.filter((method) => (method.parentNode as Element | null)?.localName === 'EncryptedData' && method.namespaceURI === XMLENC_NS)
    if (keyMethods.length !== 1 || dataMethods.length !== 1 || methods.length !== 2) {
      throw new Saml2ResponseError('decryption', 'encryption algorithm not accepted')
    }
    assertAcceptedAlgorithms(keyMethods[0] as Element, dataMethods[0] as Element)
    // A signature beside the ciphertext would be over the encrypted form only: not what is read.
    if (encrypted.getElementsByTagNameNS(XMLDSIG_NS, 'Signature').length > 0) throw new Saml2ResponseError('malformed', 'signature inside EncryptedAssertion outside the plaintext')
    encryptedXml = new XMLSerializer().serializeToString(encrypted)
  } catch (error) {
    if (error instanceof Saml2ResponseError) throw error
    throw new Saml2ResponseError('malformed', 'SAMLResponse is not well-formed', { cause: error })
  }
  let decrypted: DecryptedAssertion | undefined
  for (const keyPem of privateKeysPem) {
    try {
      decrypted = { xml: await decryptXml(encryptedXml, keyPem), keyPem }
      break
    } catch {
      // The next key (a rollover's previous key), else `decryption` below.
    }
  }
  if (decrypted === undefined) throw new Saml2ResponseError('decryption', 'no configured key decrypts the assertion')
  try {
    const document = parseXmlDocument(decrypted.xml, RESPONSE_SHAPE)
    assertNoCommentsOrInstructions(document)
    if (!isElement(document.documentElement, SAML_ASSERTION_NS, 'Assertion')) throw new Saml2ResponseError('malformed', 'the encrypted content is not one assertion')
    if (document.getElementsByTagNameNS(SAML_ASSERTION_NS, 'Assertion').length !== 1 ||
      document.getElementsByTagNameNS(SAML_ASSERTION_NS, 'EncryptedAssertion').length !== 0) {
      throw new Saml2ResponseError('malformed', 'more than one assertion in the message')
    }
  } catch (error) {
    if (error instanceof Saml2ResponseError) throw error
    throw new Saml2ResponseError('malformed', error instanceof Saml2XmlError ? `encrypted assertion rejected: ${error.reason}` : 'encrypted assertion is not well-formed', { cause: error })
  }
  return decrypted
}
