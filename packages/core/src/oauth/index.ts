/** oauth/: the OAuth 2.0 authorization-code client behind the VendorA/B/C slots (no Fastify types). Internal: the package's public API is src/index.ts. */
export * from './vendor-client.js'
