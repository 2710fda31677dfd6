/** routes/: the contract's baseline endpoints: /Account, /External/Challenge, /Home/Error, /health. Internal: the package's public API is src/index.ts. */
export * from './account.js'
export { default as accountRoutes } from './account.js'
export * from './error.js'
export { default as errorRoutes } from './error.js'
export * from './external.js'
export { default as externalRoutes } from './external.js'
export * from './health.js'
export { default as healthRoutes } from './health.js'
