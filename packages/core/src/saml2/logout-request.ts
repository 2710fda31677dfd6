/**
 * IdP-initiated Single Logout (SAML Profiles 4.4, the session participant's side), without
 * Fastify types: validating the IdP's LogoutRequest (HTTP-Redirect or HTTP-POST), the index keys
 * that find the sessions it names, and the signed LogoutResponse that answers it.
 *
 * Checks, each a failure class the endpoint logs: the message decodes and is one strictly parsed
 * samlp:LogoutRequest (`malformed`); it is signed by a trusted IdP key, the HTTP-Redirect query
 * signature over SAMLRequest, RelayState and SigAlg exactly as received or, for HTTP-POST, an
 * enveloped XML signature of the request whose signed bytes alone are read (`signature`;
 * unsigned requests are refused); Issuer is the IdP entity id (`issuer`); Destination is this
 * SP's logout URL (`destination`; SAML Bindings 3.4.5.2 and 3.5.5.2 make it mandatory on a signed
 * message); IssueInstant is not in the future and the request is inside its acceptance window
 * (`expired`): NotOnOrAfter when given, and never longer than {@link MAX_LOGOUT_REQUEST_AGE_SECONDS}
 * after IssueInstant, both with ClockSkewSeconds. Replay (the request ID seen before) is checked
 * by the caller against the state store, after all of these.
 *
 * @node-saml/node-saml's `validateRedirectAsync` and `validatePostRequestAsync` are not used as
 * they stand: the redirect check accepts a query without a Signature and any hash Node knows
 * (SHA-1 included), and the POST path reads the NameID from the whole document instead of the
 * signed bytes and returns neither the NameID qualifiers nor more than one SessionIndex. What is
 * used is node-saml's XML signature verification (`getVerifiedXml`), as for LogoutResponses.
 */
import { randomBytes } from 'node:crypto'
import type { Element } from '@xmldom/xmldom'
import { signSamlPost } from '@node-saml/node-saml/lib/saml-post-signing.js'
import { saml2NameIdIndexKey, saml2SessionIndexKey } from '../state/keys.js'
import type { IdentityProviderDescription, LogoutResponseEndpoint } from './metadata.js'
import { openSignedLogoutMessage } from './logout-message.js'
import { signedRedirectUrl } from './redirect-binding.js'
import {
  Saml2ResponseError, trustedCertificates, type Saml2ServiceProviderSettings, type SamlSessionReference
} from './service-provider.js'
import {
  attributeOf, childElements, SAML_ASSERTION_NS, SAML_PROTOCOL_NS, textOf
} from './xml.js'
import { sha256Base64url } from '../sha256.js'

/** A LogoutRequest is accepted at most this long after its IssueInstant (plus ClockSkewSeconds). */
export const MAX_LOGOUT_REQUEST_AGE_SECONDS = 600
/** More SessionIndex elements than this in one request is `malformed`. */
export const MAX_SESSION_INDEXES = 32

const UNSPECIFIED_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified'
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'
const PARTIAL_LOGOUT = 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout'

/** The NameID a LogoutRequest names, as sent. */
export interface SamlNameIdentifier {
  readonly nameId: string
  readonly nameIdFormat?: string | undefined
  readonly nameQualifier?: string | undefined
  readonly spNameQualifier?: string | undefined
}

export interface LogoutRequestInput {
  readonly binding: 'redirect' | 'post'
  /** The SAMLRequest parameter as received (base64; deflated for the redirect binding). */
  readonly samlRequest: string
  /** Redirect binding: the request's raw query string, whose exact octets the signature covers. */
  readonly rawQuery?: string | undefined
  /** Redirect binding: Signature and SigAlg as the caller read them. */
  readonly signature?: string | undefined
  readonly sigAlg?: string | undefined
  readonly relayState?: string | undefined
  readonly settings: Saml2ServiceProviderSettings
  readonly idp: IdentityProviderDescription
  /** This SP's logout endpoint URL (Destination must equal it). */
  readonly logoutUrl: string
  readonly nowMs?: number
}

export interface ValidatedLogoutRequest {
  /** The request ID (InResponseTo of the answer; the replay record). */
  readonly id: string
  readonly nameIdentifier: SamlNameIdentifier
  /** Empty: every session of the NameID at this IdP. */
  readonly sessionIndexes: readonly string[]
  /** Milliseconds since the epoch after which the request is no longer accepted (replay record lifetime). */
  readonly acceptableUntilMs: number
}

function parseInstant (value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const parsed = Date.parse(value)
  return Number.isFinite(parsed) ? parsed : undefined
}

/** Validates an IdP's LogoutRequest (everything but replay). Throws {@link Saml2ResponseError}. */
export async function validateLogoutRequest (input: LogoutRequestInput): Promise<ValidatedLogoutRequest> {
  const nowMs = input.nowMs ?? Date.now()
  const certificates = trustedCertificates(input, nowMs)
  const root = await openSignedLogoutMessage({ ...input, kind: 'LogoutRequest', value: input.samlRequest }, certificates)
  return readSignedRequest(root, input, nowMs)
}

/** Reads the signature-covered request and applies the Issuer, Destination and time checks. */
function readSignedRequest (root: Element, input: LogoutRequestInput, nowMs: number): ValidatedLogoutRequest {
  const id = attributeOf(root, 'ID') ?? ''
  if (id === '' || attributeOf(root, 'Version') !== '2.0') throw new Saml2ResponseError('malformed', 'LogoutRequest ID or Version missing')
  const issuers = childElements(root, SAML_ASSERTION_NS, 'Issuer')
  if (issuers.length !== 1 || textOf(issuers[0] as Element).trim() !== input.idp.entityId) throw new Saml2ResponseError('issuer', 'LogoutRequest Issuer is not the IdP')
  if (attributeOf(root, 'Destination') !== input.logoutUrl) throw new Saml2ResponseError('destination', 'LogoutRequest Destination is not this endpoint')

  const skewMs = input.settings.clockSkewSeconds * 1000
  const issuedAt = parseInstant(attributeOf(root, 'IssueInstant'))
  if (issuedAt === undefined) throw new Saml2ResponseError('malformed', 'LogoutRequest IssueInstant missing')
  const notOnOrAfterText = attributeOf(root, 'NotOnOrAfter')
  const notOnOrAfter = parseInstant(notOnOrAfterText)
  if (notOnOrAfterText !== undefined && notOnOrAfter === undefined) throw new Saml2ResponseError('malformed', 'LogoutRequest NotOnOrAfter is not a time')
  const acceptableUntilMs = Math.min(notOnOrAfter ?? Number.POSITIVE_INFINITY, issuedAt + MAX_LOGOUT_REQUEST_AGE_SECONDS * 1000) + skewMs
  if (issuedAt > nowMs + skewMs || nowMs >= acceptableUntilMs) throw new Saml2ResponseError('expired', 'LogoutRequest outside its validity period')

  // SAML Core 3.7.1: exactly one identifier; an encrypted or base identifier is not supported.
  if (childElements(root, SAML_ASSERTION_NS, 'EncryptedID').length > 0 || childElements(root, SAML_ASSERTION_NS, 'BaseID').length > 0) {
    throw new Saml2ResponseError('malformed', 'LogoutRequest identifier is not a NameID')
  }
  const nameIds = childElements(root, SAML_ASSERTION_NS, 'NameID')
  const nameIdElement = nameIds[0]
  const nameId = nameIdElement === undefined ? '' : textOf(nameIdElement).trim()
  if (nameIds.length !== 1 || nameIdElement === undefined || nameId === '') throw new Saml2ResponseError('malformed', 'LogoutRequest needs exactly one NameID')
  // SAML Core 2.2.2: SPNameQualifier names the SP the identifier was issued to; one naming
  // another SP (a hostile IdP copying a victim SP's public entity id) is not about this SP's users.
  const spNameQualifier = attributeOf(nameIdElement, 'SPNameQualifier')
  if (spNameQualifier !== undefined && spNameQualifier !== '' && spNameQualifier !== input.settings.entityId) throw new Saml2ResponseError('audience', 'LogoutRequest SPNameQualifier is not this SP')
  const sessionIndexes = childElements(root, SAML_PROTOCOL_NS, 'SessionIndex').map((element) => textOf(element).trim())
  if (sessionIndexes.length > MAX_SESSION_INDEXES || sessionIndexes.some((value) => value === '')) throw new Saml2ResponseError('malformed', 'LogoutRequest SessionIndex empty or too many')
  return {
    id,
    nameIdentifier: {
      nameId,
      nameIdFormat: attributeOf(nameIdElement, 'Format'),
      nameQualifier: attributeOf(nameIdElement, 'NameQualifier'),
      spNameQualifier
    },
    sessionIndexes: [...new Set(sessionIndexes)],
    acceptableUntilMs
  }
}

// ---------------------------------------------------------------------------------------------
// Finding the sessions a LogoutRequest names

const hashed = (...parts: readonly string[]): string => sha256Base64url(parts.join('\u0000'))

/** Where a NameID was issued: the scheme that received it, its IdP and this SP. */
export interface NameIdScope {
  /** The scheme (provider) that signed the session in or received the LogoutRequest. */
  readonly scheme: string
  readonly idpEntityId: string
  readonly spEntityId: string
}

/**
 * The NameID as SAML Core compares it: value, Format (absent: unspecified, 8.3.1), NameQualifier
 * (absent: the IdP) and SPNameQualifier (absent: this SP), as 8.3.7 defines the defaults, within
 * the scheme that received it (issue 33, item 6: another provider naming the same IdP entity id
 * and NameID finds nothing). Without a scheme: the keys written before sessions were scoped.
 */
function nameIdParts (scope: NameIdScope | Omit<NameIdScope, 'scheme'>, name: SamlNameIdentifier): string[] {
  const given = (value: string | undefined, fallback: string): string => value === undefined || value === '' ? fallback : value
  const { idpEntityId, spEntityId } = scope
  const parts = [idpEntityId, given(name.nameIdFormat, UNSPECIFIED_FORMAT), given(name.nameQualifier, idpEntityId), given(name.spNameQualifier, spEntityId), name.nameId]
  return 'scheme' in scope ? [`scheme:${scope.scheme}`, ...parts] : parts
}

/** The index key of every session of one NameID at one IdP (hashed: the store lists no identifiers). */
export function nameIdIndexKey (scope: NameIdScope | Omit<NameIdScope, 'scheme'>, name: SamlNameIdentifier): string {
  return saml2NameIdIndexKey(hashed(...nameIdParts(scope, name)))
}

/** The index key of the sessions of one NameID and SessionIndex at one IdP. */
export function sessionIndexKey (scope: NameIdScope | Omit<NameIdScope, 'scheme'>, name: SamlNameIdentifier, sessionIndex: string): string {
  return saml2SessionIndexKey(hashed(...nameIdParts(scope, name), sessionIndex))
}

/** The index keys a session signed in with `session` is listed under (the sign-in's `indexKeys`). */
export function signInIndexKeys (scope: NameIdScope, session: SamlSessionReference): string[] {
  return [
    nameIdIndexKey(scope, session),
    ...(session.sessionIndex === undefined || session.sessionIndex === '' ? [] : [sessionIndexKey(scope, session, session.sessionIndex)])
  ]
}

/**
 * The index keys whose sessions a validated request ends: one per SessionIndex, else the NameID's;
 * then the same without the scheme, for sessions signed in before keys were scoped (the caller
 * ends only sessions of its own scheme under any of them: `revokeIndexed(key, scheme)`).
 */
export function logoutIndexKeys (scope: NameIdScope, request: ValidatedLogoutRequest): string[] {
  const { idpEntityId, spEntityId } = scope
  const keysIn = (within: NameIdScope | Omit<NameIdScope, 'scheme'>): string[] => request.sessionIndexes.length === 0
    ? [nameIdIndexKey(within, request.nameIdentifier)]
    : request.sessionIndexes.map((index) => sessionIndexKey(within, request.nameIdentifier, index))
  return [...keysIn(scope), ...keysIn({ idpEntityId, spEntityId })]
}

// ---------------------------------------------------------------------------------------------
// The LogoutResponse

/** How the browser carries the LogoutResponse to the IdP. */
export type LogoutResponseDelivery =
  | { readonly binding: 'redirect', readonly url: string }
  | { readonly binding: 'post', readonly url: string, readonly fields: Readonly<Record<string, string>> }

const escapeXml = (value: string): string =>
  value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;')

/**
 * The signed LogoutResponse to `inResponseTo` for `endpoint`: status Success, with the second-level
 * PartialLogout when `partial` (no session of this SP matched). HTTP-Redirect: the query signature
 * (RSA-SHA256); HTTP-POST: an enveloped XML signature (RSA-SHA256, SHA-256 digest). RelayState is
 * echoed as received.
 */
export function buildLogoutResponse (options: {
  readonly settings: Saml2ServiceProviderSettings
  readonly endpoint: LogoutResponseEndpoint
  readonly inResponseTo: string
  readonly relayState: string | undefined
  readonly partial: boolean
  readonly nowMs?: number
}): LogoutResponseDelivery {
  const signing = options.settings.signing
  if (signing === undefined) throw new Error('Single Logout needs the SP signing key')
  const status = options.partial
    ? `<samlp:StatusCode Value="${SUCCESS}"><samlp:StatusCode Value="${PARTIAL_LOGOUT}"/></samlp:StatusCode>`
    : `<samlp:StatusCode Value="${SUCCESS}"/>`
  const xml = '<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"' +
    ` ID="_${randomBytes(20).toString('hex')}" Version="2.0" IssueInstant="${new Date(options.nowMs ?? Date.now()).toISOString()}"` +
    ` Destination="${escapeXml(options.endpoint.url)}" InResponseTo="${escapeXml(options.inResponseTo)}">` +
    `<saml:Issuer>${escapeXml(options.settings.entityId)}</saml:Issuer><samlp:Status>${status}</samlp:Status></samlp:LogoutResponse>`
  if (options.endpoint.binding === 'redirect') {
    return { binding: 'redirect', url: signedRedirectUrl(options.endpoint.url, 'SAMLResponse', xml, options.relayState, signing.privateKeyPem) }
  }
  const signed = signSamlPost(xml, '/*[local-name(.)="LogoutResponse" and namespace-uri(.)="urn:oasis:names:tc:SAML:2.0:protocol"]', {
    privateKey: signing.privateKeyPem,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'sha256'
  })
  return {
    binding: 'post',
    url: options.endpoint.url,
    fields: { SAMLResponse: Buffer.from(signed, 'utf8').toString('base64'), ...(options.relayState === undefined ? {} : { RelayState: options.relayState }) }
  }
}
