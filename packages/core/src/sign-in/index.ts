/** sign-in/: pending-flow outcomes and refusals, claims normalization and the group-path check. Internal: the package's public API is src/index.ts. */
export * from './claims-normalization.js'
export * from './group-paths.js'
export * from './sign-in-failure.js'
