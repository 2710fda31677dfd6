/** plugins/providers/: the Fastify glue of each external provider (plugins/providers/open-provider.ts opens each instance). Internal. */
export * from './oauth-vendors.js'
export * from './openid-connect.js'
export * from './saml2.js'
