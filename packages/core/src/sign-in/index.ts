/** sign-in/: pending-flow outcomes and refusals, and claims normalization. Internal: the package's public API is src/index.ts. */
export * from './claim-paths.js'
export * from './claims-normalization.js'
export * from './group-overage.js'
export * from './sign-in-failure.js'
