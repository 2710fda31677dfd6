/**
 * The two Single Logout messages an IdP sends us, a LogoutRequest of its own and the
 * LogoutResponse to ours, opened the same way: decoded (inflated for HTTP-Redirect) within
 * {@link LOGOUT_MESSAGE_MAX_BYTES}, parsed within {@link LOGOUT_MESSAGE_SHAPE} (so no library
 * walks a document built to be slow) with no comments or processing instructions, the root
 * element checked, and the signature verified against the IdP's trusted certificates: the
 * redirect binding's query signature over the message, RelayState and SigAlg exactly as received,
 * or for HTTP-POST the enveloped XML signature, whose signed bytes alone are returned and read.
 */
import { inflateRawSync } from 'node:zlib'
import type { Element } from '@xmldom/xmldom'
import { getVerifiedXml, parseDomFromString } from '@node-saml/node-saml/lib/xml.js'
import { LOGOUT_MESSAGE_SHAPE } from './message-shape.js'
import { verifyRedirectSignature } from './redirect-binding.js'
import { LOGOUT_MESSAGE_MAX_BYTES } from './constants.js'
import { Saml2ResponseError } from './errors.js'
import { assertNoCommentsOrInstructions, isElement, parseXmlDocument, SAML_PROTOCOL_NS, Saml2XmlError } from './xml.js'

export interface SignedLogoutMessageInput {
  readonly kind: 'LogoutRequest' | 'LogoutResponse'
  readonly binding: 'redirect' | 'post'
  /** The base64 `SAMLRequest` or `SAMLResponse` parameter. */
  readonly value: string
  /** HTTP-Redirect: the query string as received, and its signature parameters. */
  readonly rawQuery?: string | undefined
  readonly signature?: string | undefined
  readonly sigAlg?: string | undefined
  readonly relayState?: string | undefined
}

function decode (input: SignedLogoutMessageInput): string {
  try {
    const compact = Buffer.from(input.value, 'base64')
    if (input.binding === 'redirect') return inflateRawSync(compact, { maxOutputLength: LOGOUT_MESSAGE_MAX_BYTES }).toString('utf8')
    if (compact.length > LOGOUT_MESSAGE_MAX_BYTES) throw new RangeError(`${input.kind} too large`)
    return compact.toString('utf8')
  } catch (error) {
    throw new Saml2ResponseError('malformed', `${input.kind} cannot be decoded`, { cause: error })
  }
}

/** The message's signed root element. Throws {@link Saml2ResponseError} (`malformed`, `signature`). */
export async function openSignedLogoutMessage (input: SignedLogoutMessageInput, certificates: readonly string[]): Promise<Element> {
  const { kind } = input
  const xml = decode(input)
  let document
  try {
    document = parseXmlDocument(xml, LOGOUT_MESSAGE_SHAPE)
    assertNoCommentsOrInstructions(document)
  } catch (error) {
    throw new Saml2ResponseError('malformed', error instanceof Saml2XmlError ? `${kind} rejected: ${error.reason}` : `${kind} is not well-formed`, { cause: error })
  }
  if (!isElement(document.documentElement, SAML_PROTOCOL_NS, kind)) throw new Saml2ResponseError('malformed', `root element is not samlp:${kind}`)
  if (input.binding === 'redirect') {
    verifyRedirectSignature({
      message: kind === 'LogoutRequest' ? 'SAMLRequest' : 'SAMLResponse',
      value: input.value,
      rawQuery: input.rawQuery ?? '',
      signature: input.signature,
      sigAlg: input.sigAlg,
      relayState: input.relayState
    }, certificates, kind)
    return document.documentElement as Element
  }
  let signed: string | null
  try {
    const libraryDocument = await parseDomFromString(xml)
    signed = libraryDocument.documentElement === null ? null : getVerifiedXml(xml, libraryDocument.documentElement, [...certificates])
  } catch (error) {
    throw new Saml2ResponseError('signature', `${kind} signature not valid`, { cause: error })
  }
  if (signed === null) throw new Saml2ResponseError('signature', `${kind} not signed by the IdP`)
  return parseXmlDocument(signed, LOGOUT_MESSAGE_SHAPE).documentElement as Element
}
