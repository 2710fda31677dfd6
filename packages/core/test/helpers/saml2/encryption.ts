/**
 * The encrypting side of the test IdP: XML Encryption with xml-encryption (the library
 * @node-saml/node-saml decrypts with), as ADFS and Entra token encryption do it: every outermost
 * saml:Assertion of a (possibly tampered) response becomes a saml:EncryptedAssertion for the SP's
 * encryption certificate. Signing the Response after encryption (sign-then-encrypt inside,
 * encrypt-then-sign outside) is available for the response-level cases.
 */
import { X509Certificate } from 'node:crypto'
import { createRequire } from 'node:module'
import { DOMParser, XMLSerializer, type Element } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'
import type { TestSigningKey } from './certificates.js'

interface XmlEncryptionOptions {
  readonly rsa_pub: string
  readonly pem: string
  readonly encryptionAlgorithm: string
  readonly keyEncryptionAlgorithm: string
  readonly keyEncryptionDigest?: string
  readonly warnInsecureAlgorithm?: boolean
}

const xmlenc = createRequire(import.meta.url)('xml-encryption') as {
  encrypt: (content: string, options: XmlEncryptionOptions, callback: (error: Error | null, result?: string) => void) => void
}

const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion'
export const AES256_GCM = 'http://www.w3.org/2009/xmlenc11#aes256-gcm'
export const AES256_CBC = 'http://www.w3.org/2001/04/xmlenc#aes256-cbc'
export const TRIPLEDES_CBC = 'http://www.w3.org/2001/04/xmlenc#tripledes-cbc'
export const RSA_OAEP = 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p'
export const RSA_1_5 = 'http://www.w3.org/2001/04/xmlenc#rsa-1_5'

export interface EncryptionChoice {
  readonly content?: string
  readonly keyTransport?: string
  /** xml-encryption's `keyEncryptionDigest` (`sha1` by default; `sha256` wraps with OAEP-SHA256 and MGF1-SHA256). */
  readonly oaepDigest?: 'sha1' | 'sha256' | 'sha512'
}

async function encryptElement (xml: string, certificatePem: string, choice: EncryptionChoice): Promise<string> {
  const options: XmlEncryptionOptions = {
    rsa_pub: new X509Certificate(certificatePem).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    pem: certificatePem,
    encryptionAlgorithm: choice.content ?? AES256_GCM,
    keyEncryptionAlgorithm: choice.keyTransport ?? RSA_OAEP,
    ...(choice.oaepDigest === undefined ? {} : { keyEncryptionDigest: choice.oaepDigest }),
    warnInsecureAlgorithm: false
  }
  return await new Promise((resolve, reject) => {
    xmlenc.encrypt(xml, options, (error, result) => { if (error !== null || result === undefined) reject(error ?? new Error('no result')); else resolve(result) })
  })
}

/** Assertions not inside another assertion, in document order. */
function outermostAssertions (root: Element): Element[] {
  return Array.from(root.getElementsByTagNameNS(SAML, 'Assertion')).filter((assertion) => {
    for (let parent = assertion.parentNode; parent !== null; parent = parent.parentNode) {
      if ((parent as Element).namespaceURI === SAML && (parent as Element).localName === 'Assertion') return false
    }
    return true
  })
}

/** Replaces every outermost Assertion of `xml` (a whole SAMLResponse document) with its EncryptedAssertion. */
export async function encryptAssertions (xml: string, certificatePem: string, choice: EncryptionChoice = {}): Promise<string> {
  const document = new DOMParser().parseFromString(xml, 'text/xml')
  const root = document.documentElement as Element
  for (const assertion of outermostAssertions(root)) {
    const encryptedData = await encryptElement(new XMLSerializer().serializeToString(assertion), certificatePem, choice)
    const wrapper = document.createElementNS(SAML, 'saml:EncryptedAssertion')
    const parsed = new DOMParser().parseFromString(encryptedData.trim(), 'text/xml').documentElement as Element
    wrapper.appendChild(document.importNode(parsed, true))
    assertion.parentNode?.replaceChild(wrapper, assertion)
  }
  return new XMLSerializer().serializeToString(document)
}

/** Signs the Response element (enveloped, RSA-SHA256, exclusive C14N), after encryption. */
export function signResponse (xml: string, key: TestSigningKey): string {
  const signer = new SignedXml({ privateKey: key.privateKeyPem, publicCert: key.certificatePem, signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#' })
  const element = "/*[local-name(.)='Response']"
  signer.addReference({ xpath: element, transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'], digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256' })
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `${element}/*[local-name(.)='Issuer']`, action: 'after' } })
  return signer.getSignedXml()
}

export const decodeResponse = (samlResponse: string): string => Buffer.from(samlResponse, 'base64').toString('utf8')
export const encodeResponse = (xml: string): string => Buffer.from(xml, 'utf8').toString('base64')
