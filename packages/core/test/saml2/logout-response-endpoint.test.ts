/**
 * Where the LogoutResponse to an IdP's LogoutRequest goes (saml2/metadata.ts): the IdP's
 * SingleLogoutService, HTTP-Redirect preferred over HTTP-POST, its ResponseLocation before its
 * Location (SAML Metadata 2.2.2); none when the IdP advertises neither binding.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseIdentityProviderMetadata } from '../../src/saml2/metadata.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'

const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
const ARTIFACT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact'
const key = createSigningKey('metadata-slo')

function metadata (services: string): string {
  return `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.example.test">
<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${key.certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
${services}
<md:SingleSignOnService Binding="${REDIRECT}" Location="https://idp.example.test/sso"/>
</md:IDPSSODescriptor></md:EntityDescriptor>`
}

const cases: ReadonlyArray<readonly [string, string, unknown]> = [
  ['HTTP-Redirect and HTTP-POST: HTTP-Redirect', `<md:SingleLogoutService Binding="${POST}" Location="https://idp.example.test/slo-post"/><md:SingleLogoutService Binding="${REDIRECT}" Location="https://idp.example.test/slo"/>`, { binding: 'redirect', url: 'https://idp.example.test/slo' }],
  ['HTTP-POST only: HTTP-POST', `<md:SingleLogoutService Binding="${POST}" Location="https://idp.example.test/slo-post"/>`, { binding: 'post', url: 'https://idp.example.test/slo-post' }],
  ['a ResponseLocation: that, not the Location', `<md:SingleLogoutService Binding="${REDIRECT}" Location="https://idp.example.test/slo" ResponseLocation="https://idp.example.test/slo-response"/>`, { binding: 'redirect', url: 'https://idp.example.test/slo-response' }],
  ['only another binding (Artifact): none', `<md:SingleLogoutService Binding="${ARTIFACT}" Location="https://idp.example.test/slo-artifact"/>`, undefined],
  ['no SingleLogoutService: none', '', undefined],
  ['an unusable HTTP-Redirect Location: the HTTP-POST one', `<md:SingleLogoutService Binding="${REDIRECT}" Location="javascript:alert(1)"/><md:SingleLogoutService Binding="${POST}" Location="https://idp.example.test/slo-post"/>`, { binding: 'post', url: 'https://idp.example.test/slo-post' }]
]

for (const [name, services, expected] of cases) {
  test(`LogoutResponse endpoint, ${name}`, () => {
    assert.deepEqual(parseIdentityProviderMetadata(metadata(services)).logoutResponseEndpoint, expected)
  })
}
