/** The local OpenID Provider of `@project-template/core/testing` (src/testing/oidc-provider.ts), under the names the core's suites use. */
export { startOidcProvider as startOidcIdp } from '../../../src/testing/oidc-provider.js'
export type { TestOidcProvider as OidcIdp, TestOidcProviderOptions as OidcIdpOptions } from '../../../src/testing/oidc-provider.js'
