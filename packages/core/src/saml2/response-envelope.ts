/** The posted SAMLResponse before anything in it is trusted: decoded, bounded, structurally checked. */
import { assertNoCommentsOrInstructions, attributeOf, childElements, firstChildElement, isElement, parseXmlDocument, SAML_ASSERTION_NS, SAML_PROTOCOL_NS, Saml2XmlError, textOf } from './xml.js'
import { RESPONSE_SHAPE } from './message-shape.js'
import { SUCCESS } from './constants.js'
import { Saml2ResponseError } from './errors.js'

/** What the ACS learns from the posted form before trusting anything in it. */
export interface ResponseEnvelope {
  /** Decoded XML, handed to node-saml for signature validation. */
  readonly xml: string
  /** The Response's InResponseTo; undefined for an unsolicited (IdP-initiated) response. */
  readonly inResponseTo: string | undefined
  readonly destination: string | undefined
  readonly issuer: string | undefined
  /** The one assertion is an EncryptedAssertion (absent: it is not). */
  readonly encrypted?: boolean
}

const BASE64_CHARACTER = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='.split(''))

function decodeBase64 (value: string): string {
  let compact = ''
  for (const character of value) {
    if (character === ' ' || character === '\n' || character === '\r' || character === '\t') continue
    if (!BASE64_CHARACTER.has(character)) throw new Saml2ResponseError('malformed', 'SAMLResponse is not base64')
    compact += character
  }
  if (compact.length === 0 || compact.length % 4 !== 0) throw new Saml2ResponseError('malformed', 'SAMLResponse is not base64')
  return Buffer.from(compact, 'base64').toString('utf8')
}

/**
 * Decodes and structurally checks a posted SAMLResponse. Nothing read here is trusted for
 * identity; these values only serve to refuse early (a rejection needs no signature).
 */
export function readResponseEnvelope (samlResponse: string, options: { readonly acceptEncrypted?: boolean } = {}): ResponseEnvelope {
  const xml = decodeBase64(samlResponse)
  let document
  try {
    document = parseXmlDocument(xml, RESPONSE_SHAPE)
    assertNoCommentsOrInstructions(document)
  } catch (error) {
    throw new Saml2ResponseError('malformed', error instanceof Saml2XmlError ? `SAMLResponse rejected: ${error.reason}` : 'SAMLResponse is not well-formed', { cause: error })
  }
  const response = document.documentElement
  if (!isElement(response, SAML_PROTOCOL_NS, 'Response')) throw new Saml2ResponseError('malformed', 'root element is not samlp:Response')
  const status = firstChildElement(response, SAML_PROTOCOL_NS, 'Status')
  const statusCode = status === undefined ? undefined : firstChildElement(status, SAML_PROTOCOL_NS, 'StatusCode')
  if (statusCode === undefined || attributeOf(statusCode, 'Value') !== SUCCESS) {
    throw new Saml2ResponseError('provider_error', 'the IdP returned a non-success status')
  }
  const encrypted = childElements(response, SAML_ASSERTION_NS, 'EncryptedAssertion').length
  // Without an EncryptionKey there is nothing to decrypt with: refused as before.
  if (encrypted > 0 && options.acceptEncrypted !== true) {
    throw new Saml2ResponseError('malformed', 'encrypted assertions are not accepted without an EncryptionKey')
  }
  if (childElements(response, SAML_ASSERTION_NS, 'Assertion').length + encrypted !== 1) {
    throw new Saml2ResponseError('malformed', 'the response must contain exactly one assertion')
  }
  const issuers = childElements(response, SAML_ASSERTION_NS, 'Issuer')
  if (issuers.length > 1) throw new Saml2ResponseError('malformed', 'more than one response Issuer')
  return {
    xml,
    inResponseTo: attributeOf(response, 'InResponseTo'),
    destination: attributeOf(response, 'Destination'),
    issuer: issuers[0] === undefined ? undefined : textOf(issuers[0]).trim(),
    encrypted: encrypted === 1
  }
}
