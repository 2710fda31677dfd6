/**
 * The login page as /Account/Login and e-mail discovery (/External/Challenge?email=) send it:
 * every configured provider by DisplayName (not those from the app's provider source), the e-mail field when some provider declares Domains,
 * and an optional fixed message (with the address the user entered back in the e-mail field).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'

export interface LoginPageOptions {
  readonly returnUrl?: string | undefined
  /** A fixed, safe sentence; never a submitted value or a provider list. */
  readonly failureMessage?: string | undefined
  /** The address the e-mail field held, shown in it again (escaped); only with a failure message. */
  readonly email?: string | undefined
}

export function sendLoginPage (app: FastifyInstance, reply: FastifyReply, options: LoginPageOptions): FastifyReply {
  // Providers from the app's provider source are customers' IdPs: reached by e-mail or provider= links, never listed (the list would publish the customers).
  // Request-credential schemes (JwtBearer) sign no one in: never listed either.
  const providers = [...app.authentication.providers.values()].filter((provider) => provider.runtime !== true && provider.credentialScheme === undefined)
    .map((provider) => ({ scheme: provider.scheme, displayName: provider.displayName, available: provider.status().available }))
    .sort((a, b) => a.displayName.localeCompare(b.displayName, 'en'))
  // A page that shows an address back is the user's own: not kept by a shared cache.
  if (options.email !== undefined) reply.header('cache-control', 'no-store')
  return reply.type('text/html; charset=utf-8').send(app.pages.loginPage({
    providers,
    returnUrl: options.returnUrl,
    failureMessage: options.failureMessage,
    emailDiscovery: app.authentication.discoversByEmail,
    email: options.email
  }))
}
