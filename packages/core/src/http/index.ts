/** http/: Basic credentials, host trust, forwarded headers, local URLs, request input limits, negotiated responses, outbound diagnostics. Internal: the package's public API is src/index.ts. */
export * from './basic-credentials.js'
export * from './host-trust.js'
export * from './local-url.js'
export * from './outbound-diagnostics.js'
export * from './request-input.js'
export * from './responses.js'
