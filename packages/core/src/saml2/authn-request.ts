/** The AuthnRequest (SP-initiated sign-in, HTTP-Redirect binding). */
import { randomBytes } from 'node:crypto'
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml'
import type { IdentityProviderDescription } from './metadata.js'
import { baseOptions, CorrelationCacheProvider, type Saml2ServiceProviderSettings } from './node-saml-options.js'

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
}): Promise<string> {
  const saml = new SAML({
    ...baseOptions(options.settings, options.idp, options.acsUrl, [...options.idp.signingCertificates]),
    generateUniqueId: () => options.requestId,
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider: new CorrelationCacheProvider(options.requestId)
  })
  return await saml.getAuthorizeUrlAsync(options.relayState, undefined, {})
}
