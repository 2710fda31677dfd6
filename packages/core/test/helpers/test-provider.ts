/**
 * A provider registered through the real registration API by tests only: its challenge starts a
 * real sign-in flow (stored state, correlation cookie) and redirects to a fictitious IdP; its callback takes the flow and
 * completes sign-in through the real completion path (normalization, session, return URL).
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { cookieHeaderFrom } from '../../src/testing/app.js'

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
    const taken = await app.externalSignIn.takeFlow(request, reply, scheme, request.query.state)
    const flow = taken.flow
    if (flow === undefined) return app.externalSignIn.fail(request, reply, scheme, taken.correlationFailure)
    return await app.externalSignIn.complete(request, reply, taken, {
      scheme,
      claims: [{ type: 'sub', value: request.query.sub ?? 'user-1', issuer: scheme }],
      returnUrl: flow.returnUrl
    })
  })
}

/**
 * Starts a sign-in with the test provider on `first` and completes its callback there, then sends
 * the same callback (state and correlation cookie) to `second`: both answers.
 */
export async function replayCallback (first: FastifyInstance, second: FastifyInstance): Promise<{ accepted: LightMyRequestResponse, replayed: LightMyRequestResponse }> {
  const challenge = await first.inject({ url: `/External/Challenge?provider=${TEST_PROVIDER}` })
  const state = new URL(String(challenge.headers.location)).searchParams.get('state') ?? ''
  const cookie = cookieHeaderFrom(challenge)
  const accepted = await first.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${state}`, headers: { cookie } })
  const replayed = await second.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${state}`, headers: { cookie } })
  return { accepted, replayed }
}
