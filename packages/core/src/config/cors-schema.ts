/**
 * `<Root>:Cors` (issue 40 item 13): cross-origin calls from a browser to the bearer routes
 * (Authentication:Bearer:PathPrefixes) only, closed by default: no AllowedOrigins, no CORS headers.
 * Credentials (cookies) are never allowed cross-origin; a bearer token travels in a header.
 * docs/guides/protect-an-api.md, docs/security/api-credentials.md "Cross-origin API calls". Plain data; the
 * answer itself is http/cross-origin.ts.
 */
import { Type, type Static } from '@sinclair/typebox'
import { strings } from './schema-parts.js'

export const CorsSchema = Type.Object({
  AllowedOrigins: strings([], 'Extension. Origins (https://spa.example.com: scheme, host and port, no path, no wildcard) whose pages may call the bearer routes (Authentication:Bearer:PathPrefixes) from a browser: their preflights are answered without authentication and their calls get Access-Control-Allow-Origin with that origin. https only (http for a loopback host in Development). Empty (default): no CORS headers, preflights are treated as any request. Credentials (cookies) are never allowed cross-origin.'),
  AllowedMethods: strings(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], 'Extension. Methods a preflight may ask for (Access-Control-Allow-Methods).'),
  AllowedHeaders: strings(['Authorization', 'DPoP', 'Content-Type', 'X-API-Key'], 'Extension. Request headers a preflight may ask for (Access-Control-Allow-Headers), compared without regard to case. A preflight asking for another is not answered. X-API-Key is read only where an ApiKey scheme sets AllowXApiKeyHeader.'),
  ExposedHeaders: strings(['WWW-Authenticate', 'DPoP-Nonce'], 'Extension. Response headers the calling page may read (Access-Control-Expose-Headers): the challenge of a 401 and the DPoP nonce by default.'),
  MaxAgeSeconds: Type.Integer({ default: 600, minimum: 0, maximum: 86400, description: 'Extension. How long a browser may keep a preflight\'s answer (Access-Control-Max-Age).' })
}, { additionalProperties: false, default: {} })

/** `<Root>:Cors`, as bound. */
export type CorsConfiguration = Static<typeof CorsSchema>
