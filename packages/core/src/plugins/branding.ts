/**
 * Page branding: decorates the app with its one {@link Pages} set (`app.pages`), built from the
 * app's {@link Branding}. Every page the core renders (login, access denied, error, provider
 * sign-out) comes from it, and an app's own pages can use `app.pages.layout`.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createPages, DEFAULT_PAGES, type Branding, type Pages } from '../views/pages.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The branded pages (see `Branding`); `layout` is there for the app's own pages. */
    pages: Pages
  }
}

export interface BrandingPluginOptions {
  readonly branding?: Branding | undefined
}

async function brandingPlugin (app: FastifyInstance, options: BrandingPluginOptions): Promise<void> {
  app.decorate('pages', createPages(options.branding))
}

/** The pages of the app that serves `request` (the default set outside a branded app). */
export function pagesFor (request: FastifyRequest): Pages {
  return (request.server as { pages?: Pages }).pages ?? DEFAULT_PAGES
}

export default fp(brandingPlugin, { name: 'branding' })
