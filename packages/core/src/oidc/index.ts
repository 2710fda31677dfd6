/** oidc/: the OpenID Connect relying party and back-channel logout token validation (no Fastify types). Internal: the package's public API is src/index.ts. */
export * from './back-channel-logout.js'
export * from './relying-party.js'
