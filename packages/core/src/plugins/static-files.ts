/**
 * Static files from `public/`, registered before the authorization plugin so that, as the contract
 * says, they are served ahead of routing and authorization does not apply. No directory listing,
 * no index files, no dotfiles. Sensitive files must never be placed under `public/`.
 *
 * The core's own stylesheet (views/stylesheet.ts) is served the same way at
 * `/_core/site.css`: public, cached for an hour, with an ETag so a revalidation costs a 304.
 */
import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import { CORE_STYLESHEET, CORE_STYLESHEET_ETAG, CORE_STYLESHEET_PATH } from '../views/stylesheet.js'

export interface StaticFilesOptions {
  readonly root: string
}

async function staticFiles (app: FastifyInstance, options: StaticFilesOptions): Promise<void> {
  await app.register(fastifyStatic, {
    root: options.root,
    prefix: '/',
    wildcard: false,
    index: false,
    list: false,
    dotfiles: 'deny',
    serveDotFiles: false,
    cacheControl: true,
    maxAge: '1h',
    decorateReply: false
  })
  app.get(CORE_STYLESHEET_PATH, async (request, reply) => {
    reply.header('cache-control', 'public, max-age=3600').header('etag', CORE_STYLESHEET_ETAG)
    if (request.headers['if-none-match'] === CORE_STYLESHEET_ETAG) return reply.code(304).send()
    return reply.type('text/css; charset=utf-8').send(CORE_STYLESHEET)
  })
}

export default fp(staticFiles, { name: 'static-files' })
