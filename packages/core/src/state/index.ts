/** state/: the state store interface, the embedded and Redis stores, the replay cache, and keys.ts. Internal: the package's public API is src/index.ts. */
export * from './embedded-store.js'
export * from './keys.js'
export * from './redis-store.js'
export * from './replay-cache.js'
export * from './state-store.js'
