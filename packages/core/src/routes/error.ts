/**
 * The terminal error page `/Home/Error/{statusCode?}` (anonymous; auth-contract.md, "Endpoints").
 */
import type { FastifyInstance } from 'fastify'
import { sendError } from '../http/responses.js'

/** `/Home/Error/<n>` answers with n for 400-599, 500 when absent, 400 for anything else. */
export function errorStatusFrom (segment: string | undefined): number {
  if (segment === undefined || segment === '') return 500
  if (!/^\d{3}$/.test(segment)) return 400
  const status = Number(segment)
  return status >= 400 && status <= 599 ? status : 400
}

export default async function errorRoutes (app: FastifyInstance): Promise<void> {
  app.get<{ Params: { statusCode?: string } }>('/Home/Error/:statusCode?', { config: { allowAnonymous: true } }, async (request, reply) => {
    return sendError(request, reply, errorStatusFrom(request.params.statusCode))
  })
}
