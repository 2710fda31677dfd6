/**
 * The glue between a sign-in's completion (plugins/external-sign-in.ts `complete`) and the
 * application's sign-in hook (sign-in/sign-in-hook.ts): runs it, and on a refusal logs the audit
 * line `external.sign_in.refused_by_application` and answers 403 with the access-denied page
 * showing the application's reason (escaped). Without a hook the claims pass unchanged.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Claim } from '../session/principal.js'
import { identityAuditFields, userKeyOf, type UserIdentity } from '../session/user-identity.js'
import { runSignInHook, type SignInHook } from '../sign-in/sign-in-hook.js'

export interface SignInHookSettings {
  readonly hook: SignInHook
  readonly timeoutMs: number
}

/** The claims to sign in with, or the reply that refused the sign-in. */
export async function applySignInHook (
  settings: SignInHookSettings | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
  scheme: string,
  identity: UserIdentity | undefined,
  claims: readonly Claim[]
): Promise<{ readonly claims: readonly Claim[] } | { readonly refused: FastifyReply }> {
  if (settings === undefined) return { claims }
  const who = identity ?? { scheme, issuer: '', subject: '' }
  const decision = await runSignInHook(settings.hook, { ...who, userKey: identity === undefined ? '' : userKeyOf(identity), claims }, settings.timeoutMs)
  if (decision.allowed) return { claims: decision.claims }
  const error = decision.error
  request.log.warn({
    event: 'external.sign_in.refused_by_application',
    ...(identity === undefined ? { provider: scheme } : identityAuditFields(identity)),
    refusal: decision.refusal,
    ...(decision.refusal === 'refused' ? { reason: decision.reason } : {}),
    ...(decision.refusal === 'invalid' && error instanceof Error ? { detail: error.message } : {}),
    ...(decision.refusal === 'failed' && error instanceof Error ? { errorName: error.name } : {}),
    ...(decision.refusal === 'timeout' ? { timeoutMs: settings.timeoutMs } : {})
  }, decision.refusal === 'refused' ? 'the application refused the sign-in' : 'the application\'s sign-in hook failed; sign-in refused')
  return { refused: reply.code(403).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(request.server.pages.accessDeniedPage(undefined, decision.reason)) }
}
