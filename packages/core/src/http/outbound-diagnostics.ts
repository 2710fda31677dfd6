/**
 * What a log line may say about a failed outbound call (token endpoint, user information,
 * discovery, metadata) so that an operator can tell the causes apart without the log ever holding
 * a secret: the OAuth `error` code (RFC 6749 section 5.2) reduced to its safe character set, the
 * HTTP status, the network cause code from `error.cause` (ENOTFOUND, ECONNREFUSED, certificate
 * errors) and the URL without credentials, query or fragment. Never a description text (it may
 * echo input), never a token.
 */

/** An OAuth `error` value as logged: its own characters when they are a plain code, else `unrecognized`. */
export function oauthErrorCode (value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  return /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : 'unrecognized'
}

/** The `error` parameter of a `WWW-Authenticate: Bearer error="..."` header (RFC 6750 section 3). */
export function bearerChallengeError (header: string | null): string | undefined {
  if (header === null) return undefined
  const match = /(?:^|[\s,])error="([^"]{1,64})"/.exec(header)
  return oauthErrorCode(match?.[1])
}

const CAUSE_CODE = /^[A-Z][A-Z0-9_]{1,63}$/

/**
 * The first system or TLS error code along the `cause` chain (undici wraps them: `TypeError: fetch
 * failed` with `cause.code` ENOTFOUND, ECONNREFUSED, UNABLE_TO_VERIFY_LEAF_SIGNATURE,
 * DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED...), or `TIMEOUT` for an aborted-by-timeout call.
 */
export function networkCauseCode (error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && CAUSE_CODE.test(code) && !code.startsWith('OAUTH_')) return code
    if ((current as { name?: unknown }).name === 'TimeoutError') return 'TIMEOUT'
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** `url` without user information, query and fragment: safe to log. */
export function urlForLog (url: string | URL): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return 'invalid-url'
  }
}
