/** config/: the one schema (types and validation), layered loading, cross-key rules, the reference files. Internal: the package's public API is src/index.ts. */
export * from './bind.js'
export * from './environment.js'
export * from './load.js'
export * from './reference.js'
export * from './rules.js'
export * from './schema.js'
export * from './secret.js'
export * from './sources.js'
