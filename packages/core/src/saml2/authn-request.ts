/** The AuthnRequest (SP-initiated sign-in, HTTP-Redirect binding; a step-up's ForceAuthn and RequestedAuthnContext). */
import { randomBytes } from 'node:crypto'
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml'
import type { IdentityProviderDescription } from './metadata.js'
import { baseOptions, CorrelationCacheProvider, type Saml2ServiceProviderSettings } from './node-saml-options.js'
import { stepUpRequestOptions } from './step-up.js'
import type { AuthenticationRequirement } from '../session/authentication-proof.js'

/** A fresh AuthnRequest ID (an NCName: it must not start with a digit). */
export function newRequestId (): string {
  return `_${randomBytes(20).toString('hex')}`
}

/** The IdP's HTTP-Redirect SSO URL carrying a deflated AuthnRequest with this ID and RelayState. */
export async function buildAuthnRequestUrl (options: {
  readonly settings: Saml2ServiceProviderSettings
  readonly idp: IdentityProviderDescription
  readonly acsUrl: string
  readonly requestId: string
  readonly relayState: string
  /** A step-up (saml2/step-up.ts): ForceAuthn and RequestedAuthnContext. */
  readonly stepUp?: AuthenticationRequirement
}): Promise<string> {
  const saml = new SAML({
    ...baseOptions(options.settings, options.idp, options.acsUrl, [...options.idp.signingCertificates]),
    generateUniqueId: () => options.requestId,
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider: new CorrelationCacheProvider(options.requestId),
    ...stepUpRequestOptions(options.stepUp)
  })
  return await saml.getAuthorizeUrlAsync(options.relayState, undefined, {})
}
