/**
 * The ApiKey request-credential type (bearer/credential-types.ts) over the enabled ApiKey
 * schemes' services (issue 42): a token goes to the scheme whose prefix it starts with (no
 * scheme's prefix starts another's), never to JwtBearer or an introspection endpoint.
 *
 * - **Headers.** `Authorization: Bearer <key>` always; `X-API-Key: <key>` too when a scheme sets
 *   `AllowXApiKeyHeader` (the type then declares the header as its own, and the bearer handler
 *   refuses a request that sends both). A key of a scheme without the setting sent in
 *   `X-API-Key` is refused (`header`), as is a value that is no key (`malformed`). Never the query
 *   string.
 * - **Limits** (api-key-limits.ts): an address over its failed look-ups is held (429) before any
 *   look-up; a well-formed key the store refuses counts against the address; an accepted key
 *   counts against its own per-key limit.
 * - **Audit.** An accepted key's id and prefix are bound to every log line of the request
 *   (`keyId`, `keyPrefix`); a refusal's `api_key.refused` line (the service's) names the id and
 *   prefix only.
 *
 * Plain inputs, no Fastify types.
 */
import { BearerTokenError, CredentialHeldError, type BearerFailure } from '../bearer/failures.js'
import type { CredentialType } from '../bearer/credential-types.js'
import type { BearerAuthentication } from '../bearer/jwt-bearer-scheme.js'
import type { ApiKeyLimits } from './api-key-limits.js'
import type { ApiKeyPrincipal } from './api-key-principal.js'
import type { ApiKeyRefusal, ApiKeyService } from './api-key-service.js'

/** The header a key may also come in, when its scheme sets AllowXApiKeyHeader (Node's lower-case name). */
export const X_API_KEY_HEADER = 'x-api-key'

/** The failure class of a refused key (bearer/failures.ts), as `bearer.refused` names it. */
const FAILURES = { malformed: 'malformed', unknown: 'inactive', revoked: 'inactive', expired: 'expired', owner_denied: 'denied' } as const satisfies Record<ApiKeyRefusal, BearerFailure>

/** The ApiKey type over `services` (the enabled schemes'), with its rate limits (none: RateLimits:Enabled false). */
export function apiKeyCredentialType (services: readonly ApiKeyService[], limits?: ApiKeyLimits): CredentialType {
  const serviceOf = (token: string): ApiKeyService | undefined => services.find((service) => token.startsWith(service.settings.Prefix))
  const readsHeader = services.some((service) => service.settings.AllowXApiKeyHeader)
  // One caller object per verified key for its cached second (the service keeps one principal as long),
  // so a cached call allocates nothing and its log bindings are rendered once (request-child-logger.ts).
  const cachedCallers = new WeakMap<ApiKeyPrincipal, BearerAuthentication>()
  const cachedCallerOf = (service: ApiKeyService, principal: ApiKeyPrincipal): BearerAuthentication => {
    let caller = cachedCallers.get(principal)
    if (caller === undefined) {
      caller = authenticationOf(service, principal, true)
      cachedCallers.set(principal, caller)
    }
    return caller
  }
  return {
    type: 'ApiKey',
    recognises: (token) => serviceOf(token) !== undefined,
    // A key verified within its second, answered at once when its count left room (api-key-limits.ts).
    cached: (token, _path, names) => {
      const service = serviceOf(token)
      if (service === undefined || (names !== undefined && !names.has(service.scheme))) return undefined
      const principal = service.cachedPrincipal(token)
      if (principal === undefined || (limits !== undefined && !limits.admitsAtOnce(principal.apiKey.id))) return undefined
      return cachedCallerOf(service, principal)
    },
    // Counted once per served call, when the handler accepts it (the deny checks passed).
    admitted: (authentication) => { limits?.countAdmitted(authentication.clientId as string) },
    ...(readsHeader ? { ownHeader: X_API_KEY_HEADER } : {}),
    verify: async (token, _path, names, context): Promise<BearerAuthentication> => {
      const service = serviceOf(token) as ApiKeyService
      // A route restricted to named JwtBearer schemes (config.bearerSchemes) takes no key.
      if (names !== undefined && !names.has(service.scheme)) throw new BearerTokenError('issuer')
      if (context?.header === X_API_KEY_HEADER && !service.settings.AllowXApiKeyHeader) throw new BearerTokenError('header')
      const client = context?.client
      const held = client === undefined ? undefined : limits?.heldAddress(client)
      if (held !== undefined) throw new CredentialHeldError('api_key_failures', held)
      const result = await service.authenticate(token)
      if (!result.ok) {
        // Only a look-up counts: a malformed key cost nothing (BearerRefusalsPerWindow counts it).
        if (result.refusal !== 'malformed' && client !== undefined) await limits?.countFailure(client)
        throw new BearerTokenError(FAILURES[result.refusal])
      }
      const { principal } = result
      const wait = await limits?.admitKey(principal.apiKey.id)
      if (wait !== undefined) throw new CredentialHeldError('api_key_requests', wait)
      return result.cached ? cachedCallerOf(service, principal) : authenticationOf(service, principal, false)
    },
    // A key is a bearer credential: sent as DPoP it is refused (it is bound to no key).
    refusalOf: (_authentication, presentation) => presentation === 'Bearer' ? undefined : 'dpop_unbound'
  }
}

/** A key's caller as the bearer handler takes it: its id the acting client, its id and prefix on every log line. */
function authenticationOf (service: ApiKeyService, principal: ApiKeyPrincipal, fromCache: boolean): BearerAuthentication {
  return {
    scheme: service.scheme,
    principal,
    clientId: principal.apiKey.id,
    scopes: principal.access.scopes,
    machine: principal.access.machine,
    expiresAtMs: principal.ticket.expiresAt * 1000,
    logBindings: { keyId: principal.apiKey.id, keyPrefix: principal.apiKey.prefix },
    // Within the service's second the key was verified already: one `bearer.authenticated` line per verification.
    fromCache
  }
}
