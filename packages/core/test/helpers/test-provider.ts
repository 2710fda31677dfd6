/**
 * A provider registered through the real registration API by tests only: its challenge starts a
 * real sign-in flow (stored state, correlation cookie) and redirects to a fictitious IdP; its callback takes the flow and
 * completes sign-in through the real completion path (normalization, session, return URL).
 */
import type { FastifyInstance } from 'fastify'

export const TEST_PROVIDER = 'TestIdP'
export const TEST_PROVIDER_CALLBACK = '/signin-testidp'
export const TEST_IDP_AUTHORIZE = 'https://idp.invalid/authorize'

export function registerTestProvider (app: FastifyInstance, scheme = TEST_PROVIDER, callbackPath = TEST_PROVIDER_CALLBACK): void {
  app.authentication.registerProvider({
    scheme,
    displayName: `Test IdP ${scheme}`,
    paths: [callbackPath],
    status: () => ({ available: true }),
    async challenge (_request, reply, returnUrl) {
      const flowId = await app.externalSignIn.beginFlow(reply, scheme, returnUrl, {})
      return reply.redirect(`${TEST_IDP_AUTHORIZE}?state=${flowId}`, 302)
    }
  })
  app.get<{ Querystring: { state?: string, sub?: string } }>(callbackPath, { config: { allowAnonymous: true } }, async (request, reply) => {
    const flow = await app.externalSignIn.takeFlow(request, reply, scheme, request.query.state)
    if (flow === undefined) return app.externalSignIn.fail(request, reply, scheme, 'correlation')
    return await app.externalSignIn.complete(request, reply, {
      scheme,
      claims: [{ type: 'sub', value: request.query.sub ?? 'user-1', issuer: scheme }],
      returnUrl: flow.returnUrl
    })
  })
}
