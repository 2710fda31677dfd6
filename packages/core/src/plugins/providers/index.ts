/** plugins/providers/: the Fastify glue of each external provider (plugins/external-providers.ts registers the enabled ones). Internal. */
export * from './oauth-vendors.js'
export * from './openid-connect.js'
export * from './saml2.js'
