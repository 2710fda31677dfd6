/** sign-in/: pending-flow outcomes and refusals, and claims normalization. Internal: the package's public API is src/index.ts. */
export * from './claims-normalization.js'
export * from './sign-in-failure.js'
