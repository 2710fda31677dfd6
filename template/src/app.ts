/**
 * The app's composition: what this app adds to `@project-template/core` (its routes, its page
 * branding, and where its own named policies and governance evaluator would go). The core
 * registers every security plugin and the contract's baseline endpoints first, in security order;
 * these routes come after it, and the fallback policy covers every one that declares no
 * authorization in its `config`.
 */
import type { FastifyInstance } from 'fastify'
import { createApp, type ApplicationParts, type CreateAppOptions } from '@project-template/core'
import { APPLICATION_NAME } from './application-name.js'
import apiRoutes from './routes/api.js'
import homeRoutes from './routes/home.js'

export const application: ApplicationParts = {
  // Configuration root key, cookie names, key purposes and the name on the pages (application-name.ts).
  // Pages can be branded further: `branding: { applicationName: 'Display name', layout }`.
  applicationName: APPLICATION_NAME,
  // Named policies of this app: `policies: [{ name: 'orders.Approve', requirement: (user) => ... }]`.
  routes: async (app: FastifyInstance) => {
    await app.register(homeRoutes)
    await app.register(apiRoutes)
  }
}

/**
 * The app (core and routes), not listening: what the tests drive with `inject`. A test may pass a
 * sign-in hook of its own, which replaces the app's, and a provider source.
 */
export async function buildApp (options: Omit<CreateAppOptions, keyof ApplicationParts> & Pick<ApplicationParts, 'signInHook' | 'providerSource'>): Promise<FastifyInstance> {
  return await createApp({
    ...options,
    ...application,
    ...(options.signInHook === undefined ? {} : { signInHook: options.signInHook }),
    ...(options.providerSource === undefined ? {} : { providerSource: options.providerSource })
  })
}
