/** views/: escaped HTML and the core's branded pages. Internal: the package's public API is src/index.ts. */
export * from './auto-post.js'
export * from './html.js'
export * from './pages.js'
