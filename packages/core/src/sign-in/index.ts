/** sign-in/: pending-flow outcomes and refusals, claims normalization (claim paths, group overage) and the group-path check. Internal: the package's public API is src/index.ts. */
export * from './claim-paths.js'
export * from './claims-normalization.js'
export * from './group-overage.js'
export * from './group-paths.js'
export * from './refusal.js'
export * from './sign-in-failure.js'
