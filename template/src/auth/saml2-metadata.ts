/**
 * Reads an IdP's SAML 2.0 metadata (SAML V2.0 Metadata, section 2.3.2 EntityDescriptor and 2.4.3
 * IDPSSODescriptor): the entity id, the HTTP-Redirect SingleSignOnService Location and every
 * signing certificate. @node-saml/node-saml does not read metadata; this does, with a DOM walk.
 */
import {
  attributeOf, childElements, firstChildElement, isElement, parseXmlDocument, SAML_METADATA_NS, SAML_PROTOCOL_NS,
  Saml2XmlError, textOf, XMLDSIG_NS
} from './saml2-xml.js'

export const HTTP_REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'

/** What the service provider needs to know about its identity provider. */
export interface IdentityProviderDescription {
  readonly entityId: string
  /** HTTP-Redirect binding SSO endpoint. */
  readonly singleSignOnUrl: string
  /** Base64 DER of each signing certificate, whitespace removed. */
  readonly signingCertificates: readonly string[]
}

/** Thrown for metadata this product cannot use; `reason` names what is wrong, never a value. */
export class Saml2MetadataError extends Error {
  readonly reason: string

  constructor (reason: string, options?: ErrorOptions) {
    super(`IdP metadata rejected: ${reason}`, options)
    this.name = 'Saml2MetadataError'
    this.reason = reason
  }
}

function withoutWhitespace (text: string): string {
  let result = ''
  for (const character of text) if (character !== ' ' && character !== '\n' && character !== '\r' && character !== '\t') result += character
  return result
}

/** Parses an EntityDescriptor document. */
export function parseIdentityProviderMetadata (xml: string): IdentityProviderDescription {
  let document
  try {
    document = parseXmlDocument(xml)
  } catch (error) {
    throw new Saml2MetadataError(error instanceof Saml2XmlError ? error.reason : 'not well-formed', { cause: error })
  }
  const root = document.documentElement
  if (!isElement(root, SAML_METADATA_NS, 'EntityDescriptor')) throw new Saml2MetadataError('root element is not md:EntityDescriptor')
  const entityId = attributeOf(root, 'entityID')?.trim() ?? ''
  if (entityId === '') throw new Saml2MetadataError('entityID missing')

  const descriptors = childElements(root, SAML_METADATA_NS, 'IDPSSODescriptor').filter((descriptor) =>
    (attributeOf(descriptor, 'protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML_PROTOCOL_NS))
  if (descriptors.length === 0) throw new Saml2MetadataError('no SAML 2.0 IDPSSODescriptor')

  let singleSignOnUrl: string | undefined
  const signingCertificates: string[] = []
  for (const descriptor of descriptors) {
    for (const service of childElements(descriptor, SAML_METADATA_NS, 'SingleSignOnService')) {
      if (singleSignOnUrl === undefined && attributeOf(service, 'Binding') === HTTP_REDIRECT_BINDING) {
        singleSignOnUrl = attributeOf(service, 'Location')?.trim()
      }
    }
    for (const keyDescriptor of childElements(descriptor, SAML_METADATA_NS, 'KeyDescriptor')) {
      const use = attributeOf(keyDescriptor, 'use')
      // A KeyDescriptor without `use` serves both signing and encryption.
      if (use !== undefined && use !== 'signing') continue
      const keyInfo = firstChildElement(keyDescriptor, XMLDSIG_NS, 'KeyInfo')
      if (keyInfo === undefined) continue
      for (const data of childElements(keyInfo, XMLDSIG_NS, 'X509Data')) {
        for (const certificate of childElements(data, XMLDSIG_NS, 'X509Certificate')) {
          const value = withoutWhitespace(textOf(certificate))
          if (value !== '' && !signingCertificates.includes(value)) signingCertificates.push(value)
        }
      }
    }
  }
  if (singleSignOnUrl === undefined || singleSignOnUrl === '') throw new Saml2MetadataError('no HTTP-Redirect SingleSignOnService')
  try {
    const url = new URL(singleSignOnUrl)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme')
  } catch (error) {
    throw new Saml2MetadataError('SingleSignOnService Location is not an http(s) URL', { cause: error })
  }
  if (signingCertificates.length === 0) throw new Saml2MetadataError('no signing certificate')
  return { entityId, singleSignOnUrl, signingCertificates }
}
