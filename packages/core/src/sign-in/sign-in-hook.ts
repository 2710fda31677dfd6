/**
 * The application's sign-in hook (issue 29, item 4): one async function the app passes to
 * `createApp({ signInHook })` that sees every verified sign-in (any provider, any scheme) before
 * the session is created, and decides: allow it as it is, allow it with claims added or replaced
 * (the app's own user id and roles from its database, a user record created on first sign-in:
 * just-in-time provisioning), or refuse it with a reason the user reads on the access-denied page.
 *
 * Fail closed: a hook that throws, answers something that is not a decision, tries to change the
 * user's identity (`application:subject`) or does not answer within the time limit
 * (`Authentication:SignInHook:TimeoutSeconds`) refuses the sign-in. The hook receives an
 * AbortSignal that fires at the time limit so it can stop its own work (a database query).
 * Plain data in, plain decision out: no Fastify types.
 */
import { CoreError } from '../errors.js'
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'

/** The issuer recorded on claims the hook adds or replaces. @public @experimental */
export const SIGN_IN_HOOK_CLAIM_ISSUER = 'application'

/** Longest refusal reason shown to the user and logged; a longer one is cut. @public @experimental */
export const MAX_REFUSAL_REASON_LENGTH = 500

/** What the hook sees: the verified principal, after claims normalization. @public @experimental */
export interface VerifiedSignIn {
  /** The provider scheme (OpenIdConnect, Saml2, VendorA... or a named scheme). */
  readonly scheme: string
  /** The issuer of the subject: OIDC `iss`, SAML2 IdP entity id, or the vendor slot's name. */
  readonly issuer: string
  /** The `application:subject` value (unique only at its issuer). */
  readonly subject: string
  /** The stable user key (session/user-identity.ts `userKeyOf`): what the app keys its records on. */
  readonly userKey: string
  /** Every claim the session would hold (normalized and, unless removed, original ones). */
  readonly claims: readonly Claim[]
}

/** Claim values by claim type: one string or several. @public @experimental */
export type ClaimValues = Readonly<Record<string, string | readonly string[]>>

/**
 * The hook's answer.
 * - `{ allow: true }`: sign in with the claims as they are;
 * - `{ allow: true, set, add }`: `set` replaces every claim of each type it names (an empty array
 *   removes that type), `add` appends values; both take effect in that order. The subject
 *   (`application:subject`) cannot be changed: it is who the user is to the provider.
 * - `{ allow: false, reason }`: refused; the user sees the access-denied page with `reason`
 *   (escaped, at most {@link MAX_REFUSAL_REASON_LENGTH} characters), and the refusal is logged.
 *
 * @public @experimental
 */
export type SignInHookResult =
  | { readonly allow: true, readonly set?: ClaimValues, readonly add?: ClaimValues }
  | { readonly allow: false, readonly reason: string }

/** The hook's second argument. @public @experimental */
export interface SignInHookContext {
  /** Fires when the time limit passes: stop the work, the sign-in is refused already. */
  readonly signal: AbortSignal
}

/** The application's sign-in hook. @public @experimental */
export type SignInHook = (signIn: VerifiedSignIn, context: SignInHookContext) => Promise<SignInHookResult>

/** The hook as `createApp({ signInHook })` passed it, with its time limit (`Authentication:SignInHook:TimeoutSeconds`). */
export interface SignInHookSettings {
  readonly hook: SignInHook
  readonly timeoutMs: number
}

/** Why a hook refused: the app said no, or the hook failed in one of three ways. */
export type SignInHookRefusalClass = 'refused' | 'failed' | 'timeout' | 'invalid'

export type SignInHookDecision =
  | { readonly allowed: true, readonly claims: readonly Claim[] }
  | {
    readonly allowed: false
    readonly refusal: SignInHookRefusalClass
    /** What the user reads: the app's reason, or a fixed text when the hook failed. */
    readonly reason: string
    /** The hook's error (failed), for the log's errorName only. */
    readonly error?: unknown
  }

/** The text the user reads when the hook failed, timed out or answered nonsense. */
export const SIGN_IN_HOOK_FAILED_REASON = 'Your sign-in could not be completed right now. Please try again later.'

class InvalidHookResult extends CoreError {
  constructor (message: string) {
    super(message)
    this.name = 'InvalidHookResult'
  }
}

function valuesOf (values: unknown, type: string): string[] {
  const list = Array.isArray(values) ? values as unknown[] : [values]
  for (const value of list) if (typeof value !== 'string') throw new InvalidHookResult(`claim ${type} has a value that is not a string`)
  return list as string[]
}

function entriesOf (values: unknown, member: string): Array<[string, string[]]> {
  if (values === undefined) return []
  if (values === null || typeof values !== 'object' || Array.isArray(values)) throw new InvalidHookResult(`${member} is not an object of claim values`)
  return Object.entries(values).map(([type, value]) => {
    if (type === '' || type === ApplicationClaimTypes.Subject) throw new InvalidHookResult(`${member} may not change the claim type ${JSON.stringify(type)}`)
    return [type, valuesOf(value, type)]
  })
}

/** The claims after an allowing answer's `set` and `add`. */
export function applyClaimChanges (claims: readonly Claim[], result: { readonly set?: unknown, readonly add?: unknown }): Claim[] {
  const set = entriesOf(result.set, 'set')
  const add = entriesOf(result.add, 'add')
  const replaced = new Set(set.map(([type]) => type))
  const next: Claim[] = claims.filter((claim) => !replaced.has(claim.type))
  for (const [type, values] of [...set, ...add]) {
    for (const value of values) next.push({ type, value, issuer: SIGN_IN_HOOK_CLAIM_ISSUER })
  }
  return next
}

function reasonOf (reason: unknown): string {
  if (typeof reason !== 'string' || reason.trim() === '') throw new InvalidHookResult('a refusal has no reason')
  return reason.length > MAX_REFUSAL_REASON_LENGTH ? `${reason.slice(0, MAX_REFUSAL_REASON_LENGTH - 1)}…` : reason
}

/**
 * Runs `hook` for a verified sign-in with a time limit and returns the decision; never throws
 * and never allows after a failure (throw, rejection, timeout, malformed answer).
 */
export async function runSignInHook (hook: SignInHook, signIn: VerifiedSignIn, timeoutMs: number): Promise<SignInHookDecision> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => { controller.abort(); resolve('timeout') }, timeoutMs)
  })
  try {
    // Frozen copies: the hook cannot change what the core signs in except through its answer.
    const claims = Object.freeze(signIn.claims.map((claim) => Object.freeze({ ...claim })))
    const answer = await Promise.race([
      Promise.resolve().then(async () => await hook(Object.freeze({ ...signIn, claims }), { signal: controller.signal })),
      timedOut
    ])
    if (answer === 'timeout') return { allowed: false, refusal: 'timeout', reason: SIGN_IN_HOOK_FAILED_REASON }
    if (answer === null || typeof answer !== 'object') throw new InvalidHookResult('the answer is not an object')
    if (answer.allow === false) return { allowed: false, refusal: 'refused', reason: reasonOf((answer as { reason?: unknown }).reason) }
    if (answer.allow !== true) throw new InvalidHookResult('the answer has no allow: true or false')
    return { allowed: true, claims: applyClaimChanges(signIn.claims, answer) }
  } catch (error) {
    return { allowed: false, refusal: error instanceof InvalidHookResult ? 'invalid' : 'failed', reason: SIGN_IN_HOOK_FAILED_REASON, error }
  } finally {
    clearTimeout(timer)
  }
}
