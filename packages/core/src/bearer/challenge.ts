/**
 * The `WWW-Authenticate` challenges of a protected resource (RFC 6750 section 3; RFC 9728 section
 * 5.1 for `resource_metadata`): `Bearer` alone when no token was sent, `error="invalid_token"`
 * for any refused token (no description: the failure class is logged, never sent), and
 * `error="insufficient_scope"` with the `scope` the route needs; RFC 9470's
 * `error="insufficient_user_authentication"` with the `acr_values` and `max_age` a step-up policy
 * requires; and the `DPoP` challenge (RFC 9449 section 7.1): `algs` always,
 * `error="invalid_dpop_proof"` for a refused proof and `error="invalid_token"` for a refused
 * token. Every challenge of a request names the same `resource_metadata` and, on a 401, the
 * configured scopes (issue 40, items 15 and 17: an MCP client asks for them). Plain strings, no
 * Fastify types.
 */

export interface ChallengeParameters {
  /** RFC 6750 section 3.1; absent when the request carried no token. */
  readonly error?: 'invalid_token' | 'insufficient_scope' | 'invalid_request' | 'insufficient_user_authentication' | 'invalid_dpop_proof'
  /** Space-separated scopes the resource needs (insufficient_scope). */
  readonly scope?: string
  /** The absolute URL of the protected-resource metadata (RFC 9728). */
  readonly resourceMetadata?: string
  /** RFC 9470 section 3: space-separated acceptable `acr` values (insufficient_user_authentication). */
  readonly acrValues?: string
  /** RFC 9470 section 3: the maximum authentication age in seconds (insufficient_user_authentication). */
  readonly maxAge?: number
}

/** A quoted-string value (RFC 9110 section 5.6.4): backslash and quote escaped, control characters dropped. */
function quoted (value: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${value.replace(/[\u0000-\u001f\u007f]/g, '').replace(/["\\]/g, (character) => `\\${character}`)}"`
}

/** The `WWW-Authenticate` value. */
export function bearerChallenge (parameters: ChallengeParameters = {}): string {
  const items: string[] = []
  if (parameters.error !== undefined) items.push(`error=${quoted(parameters.error)}`)
  if (parameters.scope !== undefined && parameters.scope !== '') items.push(`scope=${quoted(parameters.scope)}`)
  if (parameters.acrValues !== undefined && parameters.acrValues !== '') items.push(`acr_values=${quoted(parameters.acrValues)}`)
  if (parameters.maxAge !== undefined) items.push(`max_age=${Math.max(0, Math.floor(parameters.maxAge))}`)
  if (parameters.resourceMetadata !== undefined) items.push(`resource_metadata=${quoted(parameters.resourceMetadata)}`)
  return items.length === 0 ? 'Bearer' : `Bearer ${items.join(', ')}`
}

/** The `DPoP` challenge: `algs` (space-separated JWS algorithms accepted for proofs), `error` for a refusal, and `scope` as in a Bearer challenge (RFC 9449 section 7.1). */
export function dpopChallenge (algorithms: readonly string[], parameters: ChallengeParameters = {}): string {
  const items: string[] = []
  if (parameters.error !== undefined) items.push(`error=${quoted(parameters.error)}`)
  items.push(`algs=${quoted(algorithms.join(' '))}`)
  if (parameters.scope !== undefined && parameters.scope !== '') items.push(`scope=${quoted(parameters.scope)}`)
  if (parameters.resourceMetadata !== undefined) items.push(`resource_metadata=${quoted(parameters.resourceMetadata)}`)
  return `DPoP ${items.join(', ')}`
}
