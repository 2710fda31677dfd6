/**
 * Reads an IdP's SAML 2.0 metadata (SAML V2.0 Metadata, section 2.3.2 EntityDescriptor, 2.3.1
 * EntitiesDescriptor aggregates and 2.4.3 IDPSSODescriptor): the entity id, the HTTP-Redirect
 * SingleSignOnService and SingleLogoutService Locations and every signing certificate.
 * @node-saml/node-saml does not read metadata; this does, with a DOM walk. When metadata signing
 * certificates are configured, {@link verifyMetadataSignature} checks the root's enveloped
 * XML signature first and only the signed bytes are read.
 */
// node-saml's signature scoping (one enveloped signature whose single reference is the unique
// ID of its parent, at most two transforms; the signed bytes are returned), as for responses.
import { getVerifiedXml, parseDomFromString } from '@node-saml/node-saml/lib/xml.js'
import { readCertificate } from './certificates.js'
import type { Element } from '@xmldom/xmldom'
import {
  attributeOf, childElements, elementChildren, firstChildElement, isElement, parseXmlDocument, SAML_METADATA_NS, SAML_PROTOCOL_NS,
  Saml2RejectedError, Saml2XmlError, textOf, XMLDSIG_NS
} from './xml.js'
import { METADATA_SHAPE } from './message-shape.js'

export const HTTP_REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
export const HTTP_POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'

/** Where this SP sends its LogoutResponse to an IdP-initiated LogoutRequest, and how. */
export interface LogoutResponseEndpoint {
  readonly binding: 'redirect' | 'post'
  /** The SingleLogoutService ResponseLocation, else its Location (SAML Metadata 2.2.2). */
  readonly url: string
}

/** What the service provider needs to know about its identity provider. */
export interface IdentityProviderDescription {
  readonly entityId: string
  /** HTTP-Redirect binding SSO endpoint. */
  readonly singleSignOnUrl: string
  /** Base64 DER of each signing certificate, whitespace removed. */
  readonly signingCertificates: readonly string[]
  /** HTTP-Redirect SingleLogoutService Location, when the IdP advertises one. */
  readonly singleLogoutUrl?: string | undefined
  /** The SingleLogoutService for LogoutResponses: HTTP-Redirect preferred, else HTTP-POST. */
  readonly logoutResponseEndpoint?: LogoutResponseEndpoint | undefined
}

export interface MetadataSelection {
  /** Providers:Saml2:IdpEntityId: the entity to use (required for an aggregate of several IdPs). */
  readonly entityId?: string | undefined
}

/** Thrown for metadata this product cannot use; `reason` names what is wrong, never a value. */
export class Saml2MetadataError extends Saml2RejectedError {
  constructor (reason: string, options?: ErrorOptions) {
    super('IdP metadata', reason, options)
    this.name = 'Saml2MetadataError'
  }
}

function withoutWhitespace (text: string): string {
  let result = ''
  for (const character of text) if (character !== ' ' && character !== '\n' && character !== '\r' && character !== '\t') result += character
  return result
}

const idpDescriptorsOf = (entity: Element): Element[] => childElements(entity, SAML_METADATA_NS, 'IDPSSODescriptor').filter((descriptor) =>
  (attributeOf(descriptor, 'protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML_PROTOCOL_NS))

/** Every EntityDescriptor of an aggregate (nested EntitiesDescriptor included), bounded in depth. */
function entitiesOf (aggregate: Element, depth = 0): Element[] {
  if (depth > 8) throw new Saml2MetadataError('EntitiesDescriptor nested too deeply')
  return elementChildren(aggregate).flatMap((child) => {
    if (isElement(child, SAML_METADATA_NS, 'EntityDescriptor')) return [child]
    if (isElement(child, SAML_METADATA_NS, 'EntitiesDescriptor')) return entitiesOf(child, depth + 1)
    return []
  })
}

/** The IdP EntityDescriptor to use: the root, or the one the aggregate holds for `entityId`. */
function selectEntity (root: Element, selection: MetadataSelection): Element {
  const wanted = selection.entityId?.trim() ?? ''
  if (isElement(root, SAML_METADATA_NS, 'EntityDescriptor')) {
    if (wanted !== '' && attributeOf(root, 'entityID')?.trim() !== wanted) throw new Saml2MetadataError('entityID is not the configured IdpEntityId')
    return root
  }
  if (!isElement(root, SAML_METADATA_NS, 'EntitiesDescriptor')) throw new Saml2MetadataError('root element is not md:EntityDescriptor or md:EntitiesDescriptor')
  const identityProviders = entitiesOf(root).filter((entity) => idpDescriptorsOf(entity).length > 0)
  if (wanted === '') {
    if (identityProviders.length > 1) throw new Saml2MetadataError('aggregate holds more than one IdP: set IdpEntityId')
    const [only] = identityProviders
    if (only === undefined) throw new Saml2MetadataError('no SAML 2.0 IDPSSODescriptor')
    return only
  }
  const matches = identityProviders.filter((entity) => attributeOf(entity, 'entityID')?.trim() === wanted)
  if (matches.length === 0) throw new Saml2MetadataError('the aggregate has no IdP with the configured IdpEntityId')
  if (matches.length > 1) throw new Saml2MetadataError('the aggregate lists the configured IdpEntityId more than once')
  return matches[0] as Element
}

/**
 * Checks the enveloped XML signature of the metadata root against the configured metadata
 * signing certificates (PEM or base64 DER) and returns the signed bytes, the only ones to read.
 * Throws {@link Saml2MetadataError} when the root is unsigned, signed by another key, the
 * reference does not cover the root, or the signed metadata has expired (validUntil).
 */
export async function verifyMetadataSignature (xml: string, certificates: readonly string[], nowMs = Date.now()): Promise<string> {
  try {
    // Our strict parse first: no DTD, no comments-as-payload tricks reach the verifier.
    parseXmlDocument(xml, METADATA_SHAPE)
  } catch (error) {
    throw new Saml2MetadataError(error instanceof Saml2XmlError ? error.reason : 'not well-formed', { cause: error })
  }
  const pems = certificates.map((value) => readCertificate(value).toString())
  let signed: string | null
  try {
    const document = await parseDomFromString(xml)
    if (document.documentElement === null) throw new Saml2MetadataError('not well-formed')
    signed = getVerifiedXml(xml, document.documentElement, pems)
  } catch (error) {
    if (error instanceof Saml2MetadataError) throw error
    throw new Saml2MetadataError('metadata signature not valid', { cause: error })
  }
  if (signed === null) throw new Saml2MetadataError('metadata signature missing or not valid')
  const root = parseXmlDocument(signed, METADATA_SHAPE).documentElement as Element
  const validUntil = attributeOf(root, 'validUntil')
  if (validUntil !== undefined) {
    const until = Date.parse(validUntil)
    if (!Number.isFinite(until) || until <= nowMs) throw new Saml2MetadataError('signed metadata has expired (validUntil)')
  }
  return signed
}

/** Parses an EntityDescriptor document, or the selected IdP of an EntitiesDescriptor aggregate. */
export function parseIdentityProviderMetadata (xml: string, selection: MetadataSelection = {}): IdentityProviderDescription {
  let document
  try {
    document = parseXmlDocument(xml, METADATA_SHAPE)
  } catch (error) {
    throw new Saml2MetadataError(error instanceof Saml2XmlError ? error.reason : 'not well-formed', { cause: error })
  }
  const root = selectEntity(document.documentElement as Element, selection)
  const entityId = attributeOf(root, 'entityID')?.trim() ?? ''
  if (entityId === '') throw new Saml2MetadataError('entityID missing')

  const descriptors = idpDescriptorsOf(root)
  if (descriptors.length === 0) throw new Saml2MetadataError('no SAML 2.0 IDPSSODescriptor')

  let singleSignOnUrl: string | undefined
  let singleLogoutUrl: string | undefined
  const responseEndpoints: { redirect?: string, post?: string } = {}
  const signingCertificates: string[] = []
  for (const descriptor of descriptors) {
    for (const service of childElements(descriptor, SAML_METADATA_NS, 'SingleSignOnService')) {
      if (singleSignOnUrl === undefined && attributeOf(service, 'Binding') === HTTP_REDIRECT_BINDING) {
        singleSignOnUrl = attributeOf(service, 'Location')?.trim()
      }
    }
    for (const service of childElements(descriptor, SAML_METADATA_NS, 'SingleLogoutService')) {
      const binding = attributeOf(service, 'Binding')
      if (singleLogoutUrl === undefined && binding === HTTP_REDIRECT_BINDING) {
        singleLogoutUrl = attributeOf(service, 'Location')?.trim()
      }
      const kind = binding === HTTP_REDIRECT_BINDING ? 'redirect' : binding === HTTP_POST_BINDING ? 'post' : undefined
      const responseUrl = (attributeOf(service, 'ResponseLocation') ?? attributeOf(service, 'Location'))?.trim()
      if (kind !== undefined && responseEndpoints[kind] === undefined && responseUrl !== undefined && isHttpUrl(responseUrl)) responseEndpoints[kind] = responseUrl
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
  if (singleLogoutUrl !== undefined) {
    try {
      const url = new URL(singleLogoutUrl)
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme')
    } catch {
      // An unusable logout endpoint only disables Single Logout; sign-in does not need it.
      singleLogoutUrl = undefined
    }
  }
  const logoutResponseEndpoint: LogoutResponseEndpoint | undefined = responseEndpoints.redirect !== undefined
    ? { binding: 'redirect', url: responseEndpoints.redirect }
    : responseEndpoints.post === undefined ? undefined : { binding: 'post', url: responseEndpoints.post }
  return {
    entityId,
    singleSignOnUrl,
    signingCertificates,
    ...(singleLogoutUrl === undefined || singleLogoutUrl === '' ? {} : { singleLogoutUrl }),
    ...(logoutResponseEndpoint === undefined ? {} : { logoutResponseEndpoint })
  }
}

function isHttpUrl (value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}
