/** This SP's metadata document (its entity id, ACS, keys and Single Logout endpoints). */
import { generateServiceProviderMetadata } from '@node-saml/node-saml'
import { XMLSerializer } from '@xmldom/xmldom'
import { parseXmlDocument, SAML_METADATA_NS } from './xml.js'
import { METADATA_SHAPE } from './message-shape.js'
import type { Saml2ServiceProviderSettings } from './node-saml-options.js'

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
