/**
 * Static files from `public/`, registered before the authorization plugin so that, as the contract
 * says, they are served ahead of routing and authorization does not apply. No directory listing,
 * no index files, no dotfiles. Sensitive files must never be placed under `public/`.
 */
import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'

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
}

export default fp(staticFiles, { name: 'static-files' })
