/**
 * The SAML2 service provider (Providers:Saml2): AuthnRequest by the HTTP-Redirect binding and
 * validation of responses posted to the Assertion Consumer Service, on top of
 * @node-saml/node-saml. node-saml checks the XML signatures, the time conditions and the audience;
 * this module closes what it leaves to its caller:
 *   - a DOCTYPE (or entity declaration) is refused before any parser sees the message;
 *   - comments and processing instructions are refused (comment-injection into a signed NameID);
 *   - InResponseTo is checked against the request id kept in the flow's correlation cookie, so any
 *     instance can check it (node-saml's own cache is in-memory); unsolicited responses are
 *     refused unless AllowUnsolicitedResponses;
 *   - Destination and the bearer SubjectConfirmationData Recipient must equal the ACS URL;
 *   - the Response and Assertion Issuer must equal the IdP entity id;
 *   - with ValidateCertificates, signing certificates outside their validity period are not trusted;
 *   - an assertion id is accepted once (bounded replay cache until its NotOnOrAfter).
 * Everything that becomes a claim is read from the XML that the signature covers (node-saml's
 * verified output), never from the posted document.
 */
import { randomBytes, type X509Certificate } from 'node:crypto'
import { generateServiceProviderMetadata, SAML, SamlStatusError, ValidateInResponseTo, type CacheProvider, type SamlConfig } from '@node-saml/node-saml'
import { XMLSerializer, type Element } from '@xmldom/xmldom'
// node-saml's own XML-Encryption call (xml-encryption), so the key chosen here decrypts exactly as node-saml will.
import { decryptXml, getVerifiedXml } from '@node-saml/node-saml/lib/xml.js'
import type { Claim } from '../session/principal.js'
import { ROOT_KEY } from '../config/schema.js'
import { SignInRefusal } from '../sign-in/refusal.js'
import { partitionByValidity, readCertificate } from './certificates.js'
import type { IdentityProviderDescription } from './metadata.js'
import type { ServiceProviderDecryption, ServiceProviderSigning } from './keys.js'
import type { ReplayCache } from '../state/replay-cache.js'
import { openSignedLogoutMessage } from './logout-message.js'
import {
  assertNoCommentsOrInstructions, attributeOf, childElements, elementChildren, firstChildElement, isElement,
  parseXmlDocument, SAML_ASSERTION_NS, SAML_METADATA_NS, SAML_PROTOCOL_NS, Saml2XmlError, textOf, XMLDSIG_NS
} from './xml.js'
import { METADATA_SHAPE, RESPONSE_SHAPE } from './message-shape.js'

/** Failure classes the ACS reports through the shared external sign-in `fail()`. */
export type Saml2FailureClass =
  | 'correlation' | 'replay' | 'signature' | 'assertion_unsigned' | 'audience' | 'expired' | 'destination' | 'issuer'
  | 'certificate' | 'unsolicited' | 'malformed' | 'provider_error' | 'decryption'

/** The claim type the NameID arrives as (claims normalization maps it to the subject). */
export const NAME_ID_CLAIM_TYPE = 'NameID'

/**
 * Common SAML attribute names (OIDs of eduPerson/inetOrgPerson/X.500) mapped below the overrides.
 * Keycloak's built-in "X500 email" mapper sends PKCS #9 emailAddress (1.2.840.113549.1.9.1).
 * Deliberately absent: givenName (2.5.4.42) and surname (2.5.4.4), since there is no
 * application claim for either and composing a display name would guess at order and locale; and
 * Keycloak's group list attribute `member`, since other directories use that name for something
 * else (X.500 `member` lists a group's member DNs): map it per provider (docs/providers.md, Keycloak).
 */
export const SAML2_CLAIM_DEFAULTS: Readonly<Record<string, string>> = {
  'urn:oid:0.9.2342.19200300.100.1.3': 'email',
  'urn:oid:1.2.840.113549.1.9.1': 'email',
  'urn:oid:2.16.840.1.113730.3.1.241': 'name',
  'urn:oid:1.3.6.1.4.1.5923.1.1.1.7': 'permission'
}

const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'

/** The Providers:Saml2 settings this module needs, as plain values. */
export interface Saml2ServiceProviderSettings {
  readonly entityId: string
  readonly requireSignedAssertions: boolean
  readonly validateCertificates: boolean
  readonly allowUnsolicitedResponses: boolean
  readonly clockSkewSeconds: number
  /** SP signing key: AuthnRequests and LogoutRequests are signed (HTTP-Redirect SigAlg/Signature). */
  readonly signing?: ServiceProviderSigning | undefined
  /** SP decryption keys: EncryptedAssertion is accepted; without them it is refused. */
  readonly decryption?: ServiceProviderDecryption | undefined
}

/**
 * A response refused for `failure`; the message is a fixed phrase, never message content.
 * `diagnostics` are fixed log fields (the external.sign_in.failed line carries them).
 */
export class Saml2ResponseError extends SignInRefusal<Saml2FailureClass, Readonly<Record<string, string>>> {
  constructor (failure: Saml2FailureClass, message: string, options?: ErrorOptions & { diagnostics?: Readonly<Record<string, string>> }) {
    super(failure, message, options)
    this.name = 'Saml2ResponseError'
  }
}

/** The setting an `assertion_unsigned` refusal names. */
export const REQUIRE_SIGNED_ASSERTIONS_KEY = `${ROOT_KEY}:Authentication:Providers:Saml2:RequireSignedAssertions`

/** A fresh AuthnRequest ID (an NCName: it must not start with a digit). */
export function newRequestId (): string {
  return `_${randomBytes(20).toString('hex')}`
}

/** Answers node-saml's InResponseTo lookups from the correlation cookie's request id only. */
class CorrelationCacheProvider implements CacheProvider {
  readonly #requestId: string | undefined
  readonly #issuedAt = new Date().toISOString()

  constructor (requestId: string | undefined) {
    this.#requestId = requestId
  }

  async saveAsync (): Promise<null> {
    return null
  }

  async getAsync (key: string): Promise<string | null> {
    return this.#requestId !== undefined && key === this.#requestId ? this.#issuedAt : null
  }

  async removeAsync (key: string | null): Promise<string | null> {
    return key
  }
}

function baseOptions (settings: Saml2ServiceProviderSettings, idp: IdentityProviderDescription, acsUrl: string, idpCert: string[]): SamlConfig {
  // Every security-relevant node-saml default is set explicitly.
  return {
    issuer: settings.entityId,
    callbackUrl: acsUrl,
    entryPoint: idp.singleSignOnUrl,
    idpIssuer: idp.entityId,
    idpCert,
    audience: settings.entityId,
    wantAssertionsSigned: settings.requireSignedAssertions,
    // At least one signature is always required: node-saml insists on a signed assertion
    // whenever the response itself is not signed.
    wantAuthnResponseSigned: false,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'sha256',
    acceptedClockSkewMs: settings.clockSkewSeconds * 1000,
    maxAssertionAgeMs: 0,
    authnRequestBinding: 'HTTP-Redirect',
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    forceAuthn: false,
    passive: false,
    signMetadata: false,
    ...(settings.signing === undefined ? {} : { privateKey: settings.signing.privateKeyPem, publicCert: settings.signing.certificatesPem[0] })
  }
}

/** The IdP's HTTP-Redirect SSO URL carrying a deflated AuthnRequest with this ID and RelayState. */
export async function buildAuthnRequestUrl (options: {
  readonly settings: Saml2ServiceProviderSettings
  readonly idp: IdentityProviderDescription
  readonly acsUrl: string
  readonly requestId: string
  readonly relayState: string
}): Promise<string> {
  const saml = new SAML({
    ...baseOptions(options.settings, options.idp, options.acsUrl, [...options.idp.signingCertificates]),
    generateUniqueId: () => options.requestId,
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider: new CorrelationCacheProvider(options.requestId)
  })
  return await saml.getAuthorizeUrlAsync(options.relayState, undefined, {})
}

/** The SP metadata document (published at /Saml2/Metadata). */
/**
 * The SP metadata document (published at /Saml2/Metadata): AuthnRequestsSigned and one
 * KeyDescriptor use="signing" per signing certificate (two while rolling) when a signing key is
 * configured, KeyDescriptor use="encryption" for the current encryption certificate, and the
 * SingleLogoutService when `logoutUrl` is given.
 */
export function buildServiceProviderMetadata (settings: Saml2ServiceProviderSettings, acsUrl: string, logoutUrl?: string): string {
  const xml = generateServiceProviderMetadata({
    issuer: settings.entityId,
    callbackUrl: acsUrl,
    identifierFormat: null,
    wantAssertionsSigned: settings.requireSignedAssertions,
    signMetadata: false,
    ...(settings.signing === undefined
      ? {}
      : { privateKey: settings.signing.privateKeyPem, publicCerts: [...settings.signing.certificatesPem], signatureAlgorithm: 'sha256' as const }),
    ...(settings.decryption === undefined
      ? {}
      : { decryptionPvk: settings.decryption.privateKeysPem[0], decryptionCert: settings.decryption.certificatePem }),
    ...(logoutUrl === undefined ? {} : { logoutCallbackUrl: logoutUrl })
  })
  if (logoutUrl === undefined) return xml
  // node-saml publishes the HTTP-POST SingleLogoutService; the endpoint takes HTTP-Redirect too.
  const document = parseXmlDocument(xml, METADATA_SHAPE)
  const postService = document.getElementsByTagNameNS(SAML_METADATA_NS, 'SingleLogoutService')[0]
  if (postService === undefined) return xml
  const redirectService = document.createElementNS(SAML_METADATA_NS, postService.tagName)
  redirectService.setAttribute('Binding', 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect')
  redirectService.setAttribute('Location', logoutUrl)
  postService.parentNode?.insertBefore(redirectService, postService.nextSibling)
  return new XMLSerializer().serializeToString(document)
}

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

/** Maps node-saml's (uncoded) errors to failure classes; the table is pinned by tests. */
export function classifyLibraryError (error: unknown): Saml2FailureClass {
  if (error instanceof Saml2ResponseError) return error.failure
  if (error instanceof SamlStatusError) return 'provider_error'
  const message = error instanceof Error ? error.message : ''
  if (message.includes('InResponseTo')) return 'correlation'
  if (message.includes('audience') || message.includes('AudienceRestriction')) return 'audience'
  if (message.includes('not yet valid') || message.includes('expired') || message.includes('No valid subject confirmation')) return 'expired'
  if (message.includes('signature') || message.includes('signed') || message.includes('ID cannot refer')) return 'signature'
  if (message.includes('issuer')) return 'issuer'
  return 'malformed'
}

export interface ValidateResponseInput {
  readonly envelope: ResponseEnvelope
  readonly settings: Saml2ServiceProviderSettings
  readonly idp: IdentityProviderDescription
  readonly acsUrl: string
  /** The AuthnRequest ID from the correlation cookie; undefined only for an allowed unsolicited response. */
  readonly expectedRequestId: string | undefined
  readonly replayCache: ReplayCache
  readonly nowMs?: number
}

export interface ValidatedAssertion {
  readonly assertionId: string
  readonly nameId: string
  /** NameID first, then one claim per attribute value. */
  readonly claims: readonly Claim[]
  /** Every attribute name, with or without a value (group overage: an empty `groups.link`). */
  readonly attributeNames: readonly string[]
  /** What a LogoutRequest must name (from node-saml's verified profile). */
  readonly session: SamlSessionReference
}

/** The IdP session a LogoutRequest ends: the NameID as issued and the SessionIndex. */
export interface SamlSessionReference {
  readonly nameId: string
  readonly nameIdFormat?: string | undefined
  readonly nameQualifier?: string | undefined
  readonly spNameQualifier?: string | undefined
  readonly sessionIndex?: string | undefined
}

/** Ticket token names that keep the {@link SamlSessionReference} (only with SignOutAtProvider). */
export const SESSION_TOKEN_NAMES = {
  nameId: 'saml2_name_id',
  nameIdFormat: 'saml2_name_id_format',
  nameQualifier: 'saml2_name_qualifier',
  spNameQualifier: 'saml2_sp_name_qualifier',
  sessionIndex: 'saml2_session_index'
} as const

export function sessionToTokens (session: SamlSessionReference): Record<string, string> {
  const tokens: Record<string, string> = {}
  for (const [field, name] of Object.entries(SESSION_TOKEN_NAMES)) {
    const value = session[field as keyof SamlSessionReference]
    if (typeof value === 'string' && value !== '') tokens[name] = value
  }
  return tokens
}

export function sessionFromTokens (tokens: Readonly<Record<string, string>> | undefined): SamlSessionReference | undefined {
  const nameId = tokens?.[SESSION_TOKEN_NAMES.nameId]
  if (tokens === undefined || nameId === undefined || nameId === '') return undefined
  return {
    nameId,
    nameIdFormat: tokens[SESSION_TOKEN_NAMES.nameIdFormat],
    nameQualifier: tokens[SESSION_TOKEN_NAMES.nameQualifier],
    spNameQualifier: tokens[SESSION_TOKEN_NAMES.spNameQualifier],
    sessionIndex: tokens[SESSION_TOKEN_NAMES.sessionIndex]
  }
}

/** The IdP signing certificates (PEM) trusted now: with ValidateCertificates, those within their validity period. */
export function trustedCertificates (input: Pick<ValidateResponseInput, 'idp' | 'settings'>, nowMs: number): string[] {
  const certificates: X509Certificate[] = []
  for (const value of input.idp.signingCertificates) {
    try {
      certificates.push(readCertificate(value))
    } catch (error) {
      throw new Saml2ResponseError('certificate', 'an IdP signing certificate cannot be read', { cause: error })
    }
  }
  const usable = input.settings.validateCertificates
    ? partitionByValidity(certificates, nowMs, input.settings.clockSkewSeconds * 1000).current
    : certificates
  if (usable.length === 0) throw new Saml2ResponseError('certificate', 'no IdP signing certificate is within its validity period')
  return usable.map((certificate) => certificate.toString())
}

function checkEnvelope (input: ValidateResponseInput): void {
  const { envelope, idp, acsUrl, expectedRequestId } = input
  if (envelope.destination !== undefined && envelope.destination !== acsUrl) throw new Saml2ResponseError('destination', 'Destination is not this ACS URL')
  if (envelope.issuer !== undefined && envelope.issuer !== idp.entityId) throw new Saml2ResponseError('issuer', 'response Issuer is not the IdP')
  if (expectedRequestId === undefined) {
    if (!input.settings.allowUnsolicitedResponses) throw new Saml2ResponseError('unsolicited', 'unsolicited response')
    if (envelope.inResponseTo !== undefined) throw new Saml2ResponseError('correlation', 'InResponseTo without a matching request')
  } else if (envelope.inResponseTo !== expectedRequestId) {
    throw new Saml2ResponseError('correlation', 'InResponseTo does not match the request')
  }
}

function parseInstant (value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const parsed = Date.parse(value)
  return Number.isFinite(parsed) ? parsed : undefined
}

/** Reads the verified (signature-covered) assertion and applies this product's checks. */
function readVerifiedAssertion (input: ValidateResponseInput, verifiedXml: string, nowMs: number): Omit<ValidatedAssertion, 'session'> & { expiresAtMs: number } {
  let document
  try {
    document = parseXmlDocument(verifiedXml, RESPONSE_SHAPE)
  } catch (error) {
    throw new Saml2ResponseError('malformed', 'verified assertion cannot be read', { cause: error })
  }
  const assertion = document.documentElement
  if (!isElement(assertion, SAML_ASSERTION_NS, 'Assertion')) throw new Saml2ResponseError('malformed', 'verified content is not an assertion')
  const assertionId = attributeOf(assertion, 'ID') ?? ''
  if (assertionId === '') throw new Saml2ResponseError('malformed', 'assertion ID missing')

  const issuer = firstChildElement(assertion, SAML_ASSERTION_NS, 'Issuer')
  if (issuer === undefined || textOf(issuer).trim() !== input.idp.entityId) throw new Saml2ResponseError('issuer', 'assertion Issuer is not the IdP')

  const subject = firstChildElement(assertion, SAML_ASSERTION_NS, 'Subject')
  const nameIdElement = subject === undefined ? undefined : firstChildElement(subject, SAML_ASSERTION_NS, 'NameID')
  const nameId = nameIdElement === undefined ? '' : textOf(nameIdElement).trim()
  if (subject === undefined || nameId === '') throw new Saml2ResponseError('malformed', 'assertion has no NameID')

  // Web Browser SSO profile (SAML Profiles 4.1.4.2): a bearer confirmation whose Recipient is the
  // ACS URL, with NotOnOrAfter, and InResponseTo equal to the request's ID when solicited.
  const skewMs = input.settings.clockSkewSeconds * 1000
  const bearers = childElements(subject, SAML_ASSERTION_NS, 'SubjectConfirmation')
    .filter((confirmation) => attributeOf(confirmation, 'Method') === BEARER)
    .map((confirmation) => firstChildElement(confirmation, SAML_ASSERTION_NS, 'SubjectConfirmationData'))
    .filter((data): data is Element => data !== undefined)
  if (bearers.length === 0) throw new Saml2ResponseError('malformed', 'no bearer SubjectConfirmationData')
  let failure: Saml2FailureClass = 'malformed'
  let accepted: Element | undefined
  for (const data of bearers) {
    const notOnOrAfter = parseInstant(attributeOf(data, 'NotOnOrAfter'))
    if (attributeOf(data, 'Recipient') !== input.acsUrl) { failure = 'destination'; continue }
    if (attributeOf(data, 'InResponseTo') !== input.expectedRequestId) { failure = 'correlation'; continue }
    if (notOnOrAfter === undefined || nowMs - skewMs >= notOnOrAfter) { failure = 'expired'; continue }
    accepted = data
    break
  }
  if (accepted === undefined) throw new Saml2ResponseError(failure, 'no acceptable bearer SubjectConfirmationData')

  // Kept in the replay cache until the latest instant at which any part could still be accepted.
  const conditions = firstChildElement(assertion, SAML_ASSERTION_NS, 'Conditions')
  const instants = [
    ...bearers.map((data) => parseInstant(attributeOf(data, 'NotOnOrAfter'))),
    conditions === undefined ? undefined : parseInstant(attributeOf(conditions, 'NotOnOrAfter'))
  ].filter((instant): instant is number => instant !== undefined)
  const expiresAtMs = Math.max(...instants) + skewMs

  const claims: Claim[] = [{ type: NAME_ID_CLAIM_TYPE, value: nameId, issuer: input.idp.entityId }]
  const attributeNames: string[] = []
  for (const statement of childElements(assertion, SAML_ASSERTION_NS, 'AttributeStatement')) {
    for (const attribute of childElements(statement, SAML_ASSERTION_NS, 'Attribute')) {
      const name = attributeOf(attribute, 'Name')?.trim() ?? ''
      if (name === '') continue
      attributeNames.push(name)
      for (const value of childElements(attribute, SAML_ASSERTION_NS, 'AttributeValue')) {
        // Complex (element-valued) attribute values are not claims.
        if (elementChildren(value).length > 0) continue
        const text = textOf(value)
        if (text !== '') claims.push({ type: name, value: text, issuer: input.idp.entityId })
      }
    }
  }
  return { assertionId, nameId, claims, attributeNames, expiresAtMs }
}

/**
 * Signature wrapping (XSW7: an unsigned assertion parked in samlp:Extensions beside the signed
 * one) passes node-saml, which reads only the direct child. The signed assertion must be the only
 * saml:Assertion anywhere in the message.
 */
function assertSingleAssertion (xml: string, encrypted: boolean): void {
  let plain: number
  let hidden: number
  try {
    const document = parseXmlDocument(xml, RESPONSE_SHAPE)
    plain = document.getElementsByTagNameNS(SAML_ASSERTION_NS, 'Assertion').length
    hidden = document.getElementsByTagNameNS(SAML_ASSERTION_NS, 'EncryptedAssertion').length
  } catch (error) {
    throw new Saml2ResponseError('malformed', 'SAMLResponse is not well-formed', { cause: error })
  }
  if (plain + hidden !== 1 || (encrypted ? hidden : plain) !== 1) throw new Saml2ResponseError('malformed', 'more than one assertion in the message')
}

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

/** What to change at the IdP, per role (fixed text; docs/providers.md, "Encrypted assertions"). */
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

/**
 * True when the Response carries a valid signature by a trusted IdP certificate while its one
 * assertion (decrypted, when encrypted) has no signature of its own: what an IdP set to sign the
 * response only sends (ADFS, Entra ID and Keycloak can be). Read only to name the refusal; the
 * response has already been refused.
 */
async function signedOnlyAtResponseLevel (xml: string, idpCert: readonly string[], decryptionPvk: string | undefined): Promise<boolean> {
  try {
    const document = parseXmlDocument(xml, RESPONSE_SHAPE)
    const response = document.documentElement as Element
    if (childElements(response, XMLDSIG_NS, 'Signature').length !== 1) return false
    if (getVerifiedXml(xml, response as unknown as Parameters<typeof getVerifiedXml>[1], [...idpCert]) === null) return false
    let assertion = childElements(response, SAML_ASSERTION_NS, 'Assertion')[0]
    const encrypted = childElements(response, SAML_ASSERTION_NS, 'EncryptedAssertion')[0]
    if (assertion === undefined && encrypted !== undefined && decryptionPvk !== undefined) {
      const plain = await decryptXml(new XMLSerializer().serializeToString(encrypted), decryptionPvk)
      assertion = parseXmlDocument(plain, RESPONSE_SHAPE).documentElement as Element
    }
    return assertion !== undefined && childElements(assertion, XMLDSIG_NS, 'Signature').length === 0
  } catch {
    return false
  }
}

/**
 * Validates a posted response completely. Throws {@link Saml2ResponseError} (or a node-saml
 * error, see {@link classifyLibraryError}) on any failure.
 */
export async function validateResponse (input: ValidateResponseInput): Promise<ValidatedAssertion> {
  const nowMs = input.nowMs ?? Date.now()
  checkEnvelope(input)
  const idpCert = trustedCertificates(input, nowMs)
  let decryptionPvk: string | undefined
  if (input.envelope.encrypted === true) {
    if (input.settings.decryption === undefined) throw new Saml2ResponseError('malformed', 'encrypted assertions are not accepted without an EncryptionKey')
    decryptionPvk = (await decryptAssertion(input.envelope.xml, input.settings.decryption.privateKeysPem)).keyPem
  }
  const saml = new SAML({
    ...baseOptions(input.settings, input.idp, input.acsUrl, idpCert),
    ...(decryptionPvk === undefined ? {} : { decryptionPvk }),
    validateInResponseTo: input.expectedRequestId === undefined ? ValidateInResponseTo.ifPresent : ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: 10 * 60 * 1000,
    cacheProvider: new CorrelationCacheProvider(input.expectedRequestId)
  })
  let validated: Awaited<ReturnType<SAML['validatePostResponseAsync']>>
  try {
    validated = await saml.validatePostResponseAsync({ SAMLResponse: Buffer.from(input.envelope.xml, 'utf8').toString('base64') })
  } catch (error) {
    if (input.settings.requireSignedAssertions && classifyLibraryError(error) === 'signature' &&
      await signedOnlyAtResponseLevel(input.envelope.xml, idpCert, decryptionPvk)) {
      throw new Saml2ResponseError('assertion_unsigned', 'the response is signed but the assertion is not, and RequireSignedAssertions is true', {
        cause: error,
        diagnostics: { detail: 'response_signed_assertion_unsigned', setting: REQUIRE_SIGNED_ASSERTIONS_KEY }
      })
    }
    throw error
  }
  const { profile } = validated
  const verifiedXml = profile?.getAssertionXml?.()
  if (verifiedXml === undefined) throw new Saml2ResponseError('malformed', 'no verified assertion')
  assertSingleAssertion(input.envelope.xml, input.envelope.encrypted === true)
  const assertion = readVerifiedAssertion(input, verifiedXml, nowMs)
  if (!(await input.replayCache.remember(assertion.assertionId, assertion.expiresAtMs, nowMs))) {
    throw new Saml2ResponseError('replay', 'assertion already used')
  }
  const text = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined
  return {
    assertionId: assertion.assertionId,
    nameId: assertion.nameId,
    claims: assertion.claims,
    attributeNames: assertion.attributeNames,
    session: {
      nameId: assertion.nameId,
      nameIdFormat: text(profile?.nameIDFormat),
      nameQualifier: text(profile?.nameQualifier),
      spNameQualifier: text(profile?.spNameQualifier),
      sessionIndex: text(profile?.sessionIndex)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Single Logout (SAML Profiles 4.4, SP-initiated, HTTP-Redirect binding out, Redirect or POST back)

/** The IdP's HTTP-Redirect SLO URL carrying a signed LogoutRequest for `session`. */
export async function buildLogoutRequestUrl (options: {
  readonly settings: Saml2ServiceProviderSettings
  readonly idp: IdentityProviderDescription & { readonly singleLogoutUrl: string }
  readonly acsUrl: string
  readonly requestId: string
  readonly relayState: string
  readonly session: SamlSessionReference
}): Promise<string> {
  if (options.settings.signing === undefined) throw new Error('Single Logout needs the SP signing key')
  const saml = new SAML({
    ...baseOptions(options.settings, options.idp, options.acsUrl, [...options.idp.signingCertificates]),
    logoutUrl: options.idp.singleLogoutUrl,
    generateUniqueId: () => options.requestId,
    cacheProvider: new CorrelationCacheProvider(options.requestId)
  })
  const { session } = options
  return await saml.getLogoutUrlAsync({
    issuer: options.idp.entityId,
    nameID: session.nameId,
    nameIDFormat: session.nameIdFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
    ...(session.nameQualifier === undefined ? {} : { nameQualifier: session.nameQualifier }),
    ...(session.spNameQualifier === undefined ? {} : { spNameQualifier: session.spNameQualifier }),
    ...(session.sessionIndex === undefined ? {} : { sessionIndex: session.sessionIndex })
  }, options.relayState, {})
}

/** Largest inflated logout message (LogoutRequest or LogoutResponse). */
export const LOGOUT_MESSAGE_MAX_BYTES = 64 * 1024

export interface LogoutResponseInput {
  readonly binding: 'redirect' | 'post'
  /** The SAMLResponse parameter as received (base64; deflated for the redirect binding). */
  readonly samlResponse: string
  /** Redirect binding: the request's raw query string, whose exact octets the signature covers. */
  readonly rawQuery?: string
  /** Redirect binding: Signature, SigAlg and RelayState parameters as the caller read them. */
  readonly signature?: string | undefined
  readonly sigAlg?: string | undefined
  readonly relayState?: string | undefined
  readonly settings: Saml2ServiceProviderSettings
  readonly idp: IdentityProviderDescription
  readonly expectedRequestId: string
  /** This SP's logout endpoint URL (a present Destination must equal it). */
  readonly logoutUrl: string
  readonly nowMs?: number
}

/**
 * Validates the IdP's LogoutResponse to our LogoutRequest: signed by a trusted IdP key (the
 * redirect binding's query signature, or an enveloped XML signature of the message for POST,
 * whose signed bytes alone are read), Issuer the IdP, InResponseTo our request id, Destination
 * (when present) our logout URL. Returns whether the IdP reports success.
 */
export async function validateLogoutResponse (input: LogoutResponseInput): Promise<{ success: boolean }> {
  const nowMs = input.nowMs ?? Date.now()
  const certificates = trustedCertificates(input, nowMs)
    .map((value) => readCertificate(value).toString())
  const root = await openSignedLogoutMessage({ ...input, kind: 'LogoutResponse', value: input.samlResponse }, certificates)
  const issuer = firstChildElement(root, SAML_ASSERTION_NS, 'Issuer')
  if (issuer === undefined || textOf(issuer).trim() !== input.idp.entityId) throw new Saml2ResponseError('issuer', 'LogoutResponse Issuer is not the IdP')
  if (attributeOf(root, 'InResponseTo') !== input.expectedRequestId) throw new Saml2ResponseError('correlation', 'LogoutResponse InResponseTo does not match the request')
  const destination = attributeOf(root, 'Destination')
  if (destination !== undefined && destination !== input.logoutUrl) throw new Saml2ResponseError('destination', 'LogoutResponse Destination is not this endpoint')
  const status = firstChildElement(root, SAML_PROTOCOL_NS, 'Status')
  const statusCode = status === undefined ? undefined : firstChildElement(status, SAML_PROTOCOL_NS, 'StatusCode')
  return { success: statusCode !== undefined && attributeOf(statusCode, 'Value') === SUCCESS }
}
