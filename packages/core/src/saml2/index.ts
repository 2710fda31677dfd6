/** saml2/: the SAML2 service provider: requests, response checks, metadata, keys, certificates (no Fastify types). Internal: the package's public API is src/index.ts. */
export * from './certificates.js'
export * from './keys.js'
export * from './logout-request.js'
export * from './metadata-source.js'
export * from './metadata.js'
export * from './redirect-binding.js'
export * from './service-provider.js'
export * from './xml.js'
