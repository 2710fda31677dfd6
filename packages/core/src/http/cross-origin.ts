/**
 * The CORS answer of a bearer route (Fetch standard, "CORS protocol"), without Fastify types: a
 * preflight from an allowed origin asking for allowed methods and headers is answered at once
 * (204, no authentication: a preflight carries no credentials); a call from an allowed origin
 * gets that origin in Access-Control-Allow-Origin. Anything else gets no CORS header, so the
 * browser keeps the answer from the page. Never a wildcard, never Access-Control-Allow-Credentials:
 * cookies are not for cross-origin callers, the token is.
 *
 * Written here rather than with @fastify/cors: that plugin registers a catch-all OPTIONS route
 * and decorates every route, pages included, while this answer belongs to the bearer paths only
 * and must come before the authentication hooks.
 */
/** The `<Root>:Cors` settings a policy is built from (config/cors-schema.ts binds them). */
export interface CorsSettings {
  readonly AllowedOrigins: readonly string[]
  readonly AllowedMethods: readonly string[]
  readonly AllowedHeaders: readonly string[]
  readonly ExposedHeaders: readonly string[]
  readonly MaxAgeSeconds: number
}

/** What the request shows: its method, path (no query), route's `bearer` flag and CORS headers. */
export interface CrossOriginRequest {
  readonly method: string
  readonly path: string
  /** The route's `config.bearer`, when the request matched a route. */
  readonly routeBearer: boolean | undefined
  readonly origin: string | undefined
  readonly requestMethod: string | undefined
  readonly requestHeaders: string | undefined
}

/** The decision: no CORS (`none`), headers to add to the answer (`call`), or the preflight's answer (`preflight`). */
export type CrossOriginAnswer =
  | { readonly kind: 'none', readonly vary: boolean }
  | { readonly kind: 'call' | 'preflight', readonly headers: Readonly<Record<string, string>> }

/** The settings a decision needs, compiled once. */
export interface CrossOriginPolicy {
  readonly origins: ReadonlySet<string>
  readonly methods: ReadonlySet<string>
  readonly headers: ReadonlySet<string>
  readonly pathPrefixes: readonly string[]
  readonly allowMethods: string
  readonly allowHeaders: string
  readonly exposeHeaders: string
  readonly maxAge: string
}

/** The policy of `cors` for the bearer paths `pathPrefixes`; undefined when no origin is allowed. */
export function crossOriginPolicyOf (cors: CorsSettings, pathPrefixes: readonly string[]): CrossOriginPolicy | undefined {
  if (cors.AllowedOrigins.length === 0) return undefined
  return {
    origins: new Set(cors.AllowedOrigins),
    methods: new Set(cors.AllowedMethods),
    headers: new Set(cors.AllowedHeaders.map((name) => name.toLowerCase())),
    pathPrefixes,
    allowMethods: cors.AllowedMethods.join(', '),
    allowHeaders: cors.AllowedHeaders.join(', '),
    exposeHeaders: cors.ExposedHeaders.join(', '),
    maxAge: String(cors.MaxAgeSeconds)
  }
}

/** A bearer route: its route says so, or (no say) its path is under a bearer prefix. */
function isBearerPath (policy: CrossOriginPolicy, request: CrossOriginRequest): boolean {
  if (request.routeBearer !== undefined) return request.routeBearer
  return policy.pathPrefixes.some((prefix) => request.path.startsWith(prefix))
}

/** Every header the preflight asks for is allowed (an empty list asks for none). */
function headersAllowed (policy: CrossOriginPolicy, requested: string | undefined): boolean {
  if (requested === undefined || requested.trim() === '') return true
  return requested.split(',').every((name) => policy.headers.has(name.trim().toLowerCase()))
}

/** The CORS answer to `request` under `policy`. */
export function crossOriginAnswer (policy: CrossOriginPolicy, request: CrossOriginRequest): CrossOriginAnswer {
  if (!isBearerPath(policy, request)) return { kind: 'none', vary: false }
  // The answer depends on Origin on these paths: caches must key on it.
  if (request.origin === undefined || !policy.origins.has(request.origin)) return { kind: 'none', vary: true }
  const base = { 'access-control-allow-origin': request.origin, vary: 'Origin' }
  if (request.method === 'OPTIONS' && request.requestMethod !== undefined) {
    if (!policy.methods.has(request.requestMethod) || !headersAllowed(policy, request.requestHeaders)) return { kind: 'none', vary: true }
    return {
      kind: 'preflight',
      headers: { ...base, 'access-control-allow-methods': policy.allowMethods, 'access-control-allow-headers': policy.allowHeaders, 'access-control-max-age': policy.maxAge }
    }
  }
  return { kind: 'call', headers: policy.exposeHeaders === '' ? base : { ...base, 'access-control-expose-headers': policy.exposeHeaders } }
}
