/**
 * The sample application-information API. The two information routes carry no metadata and are
 * authenticated by the fallback policy; the administration and management routes name policies.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { ApplicationAuthorizationPolicyNames } from '@project-template/core'

export const API_VERSION = '1.0'

export default async function apiRoutes (app: FastifyInstance): Promise<void> {
  const information = JSON.stringify({ applicationName: app.pages.applicationName, apiVersion: API_VERSION })
  const sendInformation = async (_request: unknown, reply: FastifyReply) =>
    reply.type('application/json; charset=utf-8').send(information)

  app.get('/api/application-information', sendInformation)
  app.get('/api/v1/application-information', sendInformation)

  app.get('/api/application-information/administration', {
    config: { authorize: ApplicationAuthorizationPolicyNames.AdministratorRole }
  }, async (request) => ({ subject: request.user?.subject ?? null, name: request.user?.name ?? null }))

  app.get('/api/application-information/management', {
    config: { authorize: ApplicationAuthorizationPolicyNames.ManageApplicationPermission }
  }, async (request) => ({ subject: request.user?.subject ?? null, name: request.user?.name ?? null }))
}
