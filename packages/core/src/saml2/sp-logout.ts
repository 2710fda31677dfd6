/** Single Logout started here (SAML Profiles 4.4, SP-initiated): the LogoutRequest out, the IdP's LogoutResponse back. */
import { SAML } from '@node-saml/node-saml'
import { readCertificate } from './certificates.js'
import type { IdentityProviderDescription } from './metadata.js'
import { openSignedLogoutMessage } from './logout-message.js'
import { attributeOf, firstChildElement, SAML_ASSERTION_NS, SAML_PROTOCOL_NS, textOf } from './xml.js'
import { SUCCESS } from './constants.js'
import { Saml2ResponseError } from './errors.js'
import { baseOptions, CorrelationCacheProvider, type Saml2ServiceProviderSettings } from './node-saml-options.js'
import type { SamlSessionReference } from './session-reference.js'
import { trustedCertificates } from './assertion.js'

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
