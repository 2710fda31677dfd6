/**
 * The consuming application's use of `app.session.accessToken`: a route that needs the provider's
 * access token (401 without one), and the request a client makes to it.
 */
import type { FastifyInstance } from 'fastify'

export const TOKEN_PATH = '/test-only/access-token'

export function addTokenRoute (app: FastifyInstance): void {
  app.get(TOKEN_PATH, async (request, reply) => {
    const token = await app.session.accessToken(request, reply)
    if (token === undefined) return await reply.code(401).send({ error: 'no_token' })
    return { token }
  })
}

export interface TokenAnswer { readonly status: number, readonly token?: string, readonly setCookie: string[] }

export async function getToken (origin: string, cookie: string): Promise<TokenAnswer> {
  const response = await fetch(`${origin}${TOKEN_PATH}`, { headers: { cookie, accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(20_000) })
  const body = await response.json() as { token?: string }
  return { status: response.status, ...(body.token === undefined ? {} : { token: body.token }), setCookie: response.headers.getSetCookie() }
}
