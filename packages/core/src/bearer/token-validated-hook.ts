/**
 * The token-validated hooks (issue 40, item 13; ASP.NET's `JwtBearerEvents.OnTokenValidated`):
 * functions an app registers with `app.requestCredentials.onTokenValidated(hook)` that see every
 * JwtBearer token once, when it has just been verified (never on a verified-token cache hit), and
 * decide: keep the caller as it is, add claims (the app's own roles or permissions for a client
 * or a user, from its database), or refuse the token (401 `invalid_token`, failure `hook`). What
 * the hooks answer is what the verified-token cache keeps, so every later call with the same
 * token carries the added claims without a hook call; a refusal is not cached (the next call asks
 * again). Added claims are issued by {@link TOKEN_VALIDATED_CLAIM_ISSUER}, like the sign-in hook's
 * (sign-in/sign-in-hook.ts), and never change who the caller is or what the token grants: the
 * subject, the tenant and the scopes are the token's. A hook that throws or answers nonsense
 * fails the request (500), never lets the token pass unchanged. Plain data, no Fastify types.
 */
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'
import { TENANT_CLAIM_TYPE } from '../sign-in/completion.js'
import { BearerPrincipal } from './bearer-principal.js'
import { BearerTokenError } from './failures.js'
import type { BearerAuthentication } from './jwt-bearer-scheme.js'

/** The issuer recorded on claims a token-validated hook adds (the sign-in hook's too). */
export const TOKEN_VALIDATED_CLAIM_ISSUER = 'application'

/** Claim types a hook may not add: who the caller is, its tenant, what the token grants. */
const PROTECTED_CLAIM_TYPES: ReadonlySet<string> = new Set([ApplicationClaimTypes.Subject, TENANT_CLAIM_TYPE, ApplicationClaimTypes.Scope])

/**
 * A token-validated hook's answer: `{ allow: true }` keeps the caller, `add` appends claim values
 * (one string or several per claim type), `{ allow: false }` refuses the token. @public @experimental
 */
export type TokenValidatedResult =
  | { readonly allow: true, readonly add?: Readonly<Record<string, string | readonly string[]>> }
  | { readonly allow: false }

/**
 * Called once per verified JwtBearer token with the caller (scheme, principal, client, scopes,
 * machine), before the verified-token cache keeps it; keep it fast (it runs on the request).
 * @public @experimental
 */
export type TokenValidatedHook = (authentication: BearerAuthentication) => TokenValidatedResult | Promise<TokenValidatedResult>

function addedClaims (add: unknown): Claim[] {
  if (add === undefined) return []
  if (add === null || typeof add !== 'object' || Array.isArray(add)) throw new TypeError('A token-validated hook answered an add that is not an object of claim values.')
  const claims: Claim[] = []
  for (const [type, values] of Object.entries(add)) {
    if (type === '' || PROTECTED_CLAIM_TYPES.has(type)) throw new TypeError(`A token-validated hook may not add the claim type ${JSON.stringify(type)}.`)
    for (const value of Array.isArray(values) ? values as unknown[] : [values]) {
      if (typeof value !== 'string') throw new TypeError(`A token-validated hook answered a value of ${type} that is not a string.`)
      claims.push({ type, value, issuer: TOKEN_VALIDATED_CLAIM_ISSUER })
    }
  }
  return claims
}

/**
 * `authentication` after every hook, in registration order (each sees the claims the ones before
 * it added); throws a {@link BearerTokenError} (`hook`) when one refuses, a TypeError when one
 * answers nonsense, and whatever a hook throws.
 */
export async function runTokenValidatedHooks (hooks: readonly TokenValidatedHook[], authentication: BearerAuthentication): Promise<BearerAuthentication> {
  let current = authentication
  for (const hook of hooks) {
    const answer: unknown = await hook(current)
    if (answer === null || typeof answer !== 'object') throw new TypeError('A token-validated hook answered something that is not an object.')
    const { allow, add } = answer as { allow?: unknown, add?: unknown }
    if (allow === false) throw new BearerTokenError('hook')
    if (allow !== true) throw new TypeError('A token-validated hook answered no allow: true or false.')
    const claims = addedClaims(add)
    if (claims.length === 0) continue
    const principal = current.principal
    current = { ...current, principal: new BearerPrincipal({ ...principal.ticket, claims: [...principal.claims, ...claims] }, principal.access) }
  }
  return current
}
