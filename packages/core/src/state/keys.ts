/**
 * Every state-store key and pub/sub channel name, in one place. A key is `<kind>:<rest>`; the kind
 * (the text before the first colon) selects the embedded store's bound for that kind of record
 * (state-store.ts {@link STATE_KINDS}). The Redis store puts its configured `KeyPrefix` before
 * every key and channel. Changing a name here orphans what is stored under the old one.
 *
 * Redis Cluster: no name here carries a hash tag (`{...}`), on purpose, so records spread over
 * every shard. No operation needs two keys in one slot: a set's SADD and PEXPIRE are one MULTI on
 * one key, and a DEL of several keys is split per slot by node-redis (redis-topology.ts). A new
 * operation that must touch several keys atomically (MULTI, a script) needs them in one slot:
 * give those keys a shared hash tag here, and say which.
 */

/** The kinds of record, each bounded on its own in the embedded store. @public */
export const STATE_KINDS = ['session', 'index', 'flow', 'replay', 'lock'] as const

/** The prefix of every session record's key. */
export const SESSION_KEY_PREFIX = 'session:'

/** A server-side session record (the sealed ticket), by session id. */
export const sessionKey = (sessionId: string): string => `${SESSION_KEY_PREFIX}${sessionId}`

/**
 * The set of session ids of one user; `userKey` is the hash of (scheme, issuer, subject)
 * (session/user-identity.ts). "Sign out everywhere" and `revokeUser` read it.
 */
export const userIndexKey = (userKey: string): string => `index:user:${userKey}`

/**
 * Legacy (before issue 23): the set of session ids of one bare subject, `hash` its SHA-256. No
 * longer written; read only to find sessions created before the upgrade, whose tickets are then
 * checked for the full identity (session/session-store.ts). Empty once AbsoluteExpireMinutes has
 * passed after the upgrade; remove with the next major version.
 */
export const subjectIndexKey = (hash: string): string => `index:subject:${hash}`

/** The set of session ids of one OpenID provider session (`sid` at an issuer), hashed. */
export const providerSessionIndexKey = (hash: string): string => `index:oidc-sid:${hash}`

/** The set of session ids of one OpenID provider subject (`sub` at an issuer), hashed. */
export const providerSubjectIndexKey = (hash: string): string => `index:oidc-sub:${hash}`

/** The set of session ids of one SAML2 NameID (with Format and qualifiers) at an IdP, hashed (saml2/logout-request.ts). */
export const saml2NameIdIndexKey = (hash: string): string => `index:saml2-name-id:${hash}`

/** The set of session ids of one SAML2 NameID and SessionIndex at an IdP, hashed (saml2/logout-request.ts). */
export const saml2SessionIndexKey = (hash: string): string => `index:saml2-session:${hash}`

/**
 * The set of session ids signed in through one provider from the app's provider source (issue 28),
 * `hash` of its scheme: `reloadProviders({ revokeSessions: true })` ends them when it is removed.
 */
export const providerSchemeIndexKey = (hash: string): string => `index:provider:${hash}`

/**
 * The invalidation message announcing that the app's provider source changed: every instance
 * reloads its runtime providers (plugins/runtime-providers.ts). Nothing follows the prefix.
 */
export const PROVIDERS_INVALIDATION_MESSAGE = 'providers:reload'

/** A pending external sign-in (correlation state), by flow id (sign-in/pending-flows.ts). */
export const flowKey = (flowId: string): string => `flow:${flowId}`

/** A SAML2 logout request in progress, by RelayState (plugins/providers/saml2.ts). */
export const saml2LogoutKey = (relayState: string): string => `flow:saml2-logout:${relayState}`

/** The single-flight lock of one session's token refresh (plugins/session.ts). */
export const tokenRefreshLockKey = (sessionId: string): string => `lock:token-refresh:${sessionId}`

/**
 * A rate-limit counter (plugins/rate-limits.ts): `bucket` names the group of endpoints
 * (`challenge`, `callback`, `sign-out`, `logout-receiver`), `client` a hash of the client address
 * (an IPv6 address by its /64). Not a {@link STATE_KINDS} kind: the embedded store keeps counters
 * apart, in memory only and bounded; Redis expires each with its window.
 */
export const rateLimitKey = (bucket: string, client: string): string => `rate:${bucket}:${client}`

/**
 * A deprovisioned person (issue 41, item 4): `hash` of their issuer and subject
 * (scim/deprovisioned-identities.ts). Kept with the replay records on purpose: like a replay
 * record it must never be forgotten to make room (the embedded store refuses a new one when full,
 * so the SCIM request answers 503 and changes nothing), and it lives long (a year).
 */
export const deprovisionedKey = (hash: string): string => `replay:deprovisioned:${hash}`

/**
 * The invalidation message announcing that people's deprovisioned marks changed (issue 41 item 4,
 * issue 43): this prefix, then the hashes of {@link deprovisionedKey} separated by spaces. Every
 * instance drops its cached answers for them (scim/deprovisioned-identities.ts), so the bearer
 * deny check reads the mark again on the next request.
 */
export const DEPROVISIONED_INVALIDATION_PREFIX = 'deprovisioned:'

/**
 * The invalidation message announcing revoked API keys (issue 42): this prefix, then key ids
 * separated by spaces. Every instance drops them from its key cache (plugins/api-keys.ts), so a
 * revoked key is refused on the next request everywhere.
 */
export const API_KEYS_INVALIDATION_PREFIX = 'api-keys:'

/** A redeemed one-time value (assertion id, logout token jti) in `scope`; `hash` of the value. */
export const replayKey = (scope: string, hash: string): string => `replay:${scope}:${hash}`

/**
 * The invalidation message that drops sessions from every instance's cache: this prefix, then
 * session ids separated by spaces (session/session-store.ts publishes it; the embedded store sends it
 * when it evicts a session to make room).
 */
export const SESSION_INVALIDATION_PREFIX = 'sessions:'

/**
 * The Redis pub/sub channel on which instances announce invalidations (state/redis-store.ts); in a
 * Redis Cluster a sharded channel (SPUBLISH/SSUBSCRIBE), on the shard that owns its slot.
 */
export const invalidationChannel = (keyPrefix: string): string => `${keyPrefix}invalidate`

/** A message on the invalidation channel that starts with this is a reset proof token, not a key. */
export const RESET_MESSAGE_PREFIX = '\u0000reset:'
