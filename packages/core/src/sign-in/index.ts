/** sign-in/: the pending flow (correlation cookies), what a verified response becomes, claims normalization (claim paths, group overage), the group-path check, refusals. Internal: the package's public API is src/index.ts. */
export * from './claim-paths.js'
export * from './claims-normalization.js'
export * from './group-overage.js'
export * from './group-paths.js'
export * from './refusal.js'
export * from './sign-in-failure.js'
export * from './completion.js'
export * from './pending-flows.js'
