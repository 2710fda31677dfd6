/** oidc-provider's dev interaction pages driven over HTTP: `@project-template/core/testing` (src/testing/oidc-interaction.ts). */
export { confirmIdpLogout, throughIdpLogin } from '../../../src/testing/oidc-interaction.js'
