/** data-protection/: the key ring and authenticated encryption every sealed value uses. Internal: the package's public API is src/index.ts. */
export * from './authenticated-encryption.js'
export * from './key-ring.js'
