/** authorization/: the named policies and their evaluation (no Fastify types). Internal: the package's public API is src/index.ts. */
export * from './policies.js'
export * from './tenants.js'
export * from './route-access.js'
