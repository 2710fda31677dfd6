/**
 * The assertion: the response validated completely (envelope against the flow, trusted IdP
 * certificates, node-saml's signature and condition checks, then this product's own checks on the
 * signature-covered XML), and the replay cache. Everything that becomes a claim is read from the
 * verified XML, never from the posted document.
 */
import type { X509Certificate } from 'node:crypto'
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml'
import { XMLSerializer, type Element } from '@xmldom/xmldom'
import { decryptXml, getVerifiedXml } from '@node-saml/node-saml/lib/xml.js'
import type { Claim } from '../session/principal.js'
import { partitionByValidity, readCertificate } from './certificates.js'
import type { IdentityProviderDescription } from './metadata.js'
import type { ReplayCache } from '../state/replay-cache.js'
import { attributeOf, childElements, elementChildren, firstChildElement, isElement, parseXmlDocument, SAML_ASSERTION_NS, textOf, XMLDSIG_NS } from './xml.js'
import { RESPONSE_SHAPE } from './message-shape.js'
import { BEARER, NAME_ID_CLAIM_TYPE } from './constants.js'
import { classifyLibraryError, Saml2ResponseError, type Saml2FailureClass } from './errors.js'
import { baseOptions, CorrelationCacheProvider, type Saml2ServiceProviderSettings } from './node-saml-options.js'
import type { SamlSessionReference } from './session-reference.js'
import { decryptAssertion } from './encrypted-assertion.js'
import type { ResponseEnvelope } from './response-envelope.js'
import type { AuthnStatementFacts } from './step-up.js'

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
  /** The first AuthnStatement's AuthnContextClassRef and AuthnInstant (step-up, saml2/step-up.ts). */
  readonly authnStatement: AuthnStatementFacts
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
  return { assertionId, nameId, claims, attributeNames, expiresAtMs, authnStatement: authnStatementOf(assertion) }
}

/** The first AuthnStatement's class reference and instant, each when present and well formed. */
function authnStatementOf (assertion: Element): AuthnStatementFacts {
  const statement = firstChildElement(assertion, SAML_ASSERTION_NS, 'AuthnStatement')
  if (statement === undefined) return {}
  const instant = parseInstant(attributeOf(statement, 'AuthnInstant'))
  const context = firstChildElement(statement, SAML_ASSERTION_NS, 'AuthnContext')
  const classRef = context === undefined ? undefined : firstChildElement(context, SAML_ASSERTION_NS, 'AuthnContextClassRef')
  const reference = classRef === undefined ? '' : textOf(classRef).trim()
  return { ...(reference === '' ? {} : { authnContextClassRef: reference }), ...(instant === undefined ? {} : { authnInstantMs: instant }) }
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
        diagnostics: { detail: 'response_signed_assertion_unsigned', setting: `${input.settings.sectionKey}:RequireSignedAssertions` }
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
    authnStatement: assertion.authnStatement,
    session: {
      nameId: assertion.nameId,
      nameIdFormat: text(profile?.nameIDFormat),
      nameQualifier: text(profile?.nameQualifier),
      spNameQualifier: text(profile?.spNameQualifier),
      sessionIndex: text(profile?.sessionIndex)
    }
  }
}
