/** session/: principal and ticket, the session store (revocation, indexes) and token refresh. Internal: the package's public API is src/index.ts. */
export * from './principal.js'
export * from './session-store.js'
export * from './ticket.js'
export * from './token-refresh.js'
export * from './user-identity.js'
