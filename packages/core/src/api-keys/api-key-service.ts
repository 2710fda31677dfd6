/**
 * API keys of one ApiKey scheme as a plain service (issue 42, item 4): what `app.apiKeys` and the
 * `/Account/ApiKeys` pages call, and what the request path calls to authenticate a key. No
 * Fastify types: the caller is a {@link Principal}, answers are records and typed refusals.
 *
 * Management (create, list, revoke) takes the signed-in caller, never an owner from input: the
 * owner is the caller's own identity, or the caller's tenant when the caller meets the scheme's
 * TenantAdministratorPolicy. A key or bearer token is never a session and can manage no key.
 * Creating needs a sign-in at most `CreationMaxAgeSeconds` old ({@link creationPolicyOf}: a step-up
 * policy). A request that names anything else (`userId`, an owner object, a tenant) is refused as
 * a whole (CVE-2025-61928: an unauthenticated body naming a user minted a key for that user).
 *
 * Authentication checks, in order, without the store until the shape passed: prefix, length,
 * checksum; then the digest (constant time), revocation, expiry and the owner's status (a revoked
 * user, a deprovisioned person, a removed tenant); a verified key is cached by digest for at most
 * one second ({@link ApiKeyCache}), and its last use is written at most once a minute.
 */
import { BearerPrincipal } from '../bearer/bearer-principal.js'
import { Secret } from '../config/secret.js'
import { AppError, messageOf, type ErrorCode } from '../errors.js'
import { decidePolicy, type AuthorizationPolicy } from '../authorization/policies.js'
import { tenantOf } from '../authorization/tenants.js'
import type { AuthenticationRequirement } from '../session/authentication-proof.js'
import { ApplicationClaimTypes, type Principal } from '../session/principal.js'
import { identityOfTicket, sameIdentity, type UserIdentity } from '../session/user-identity.js'
import { ApiKeyCache, MAX_API_KEY_CACHE_MS } from './api-key-cache.js'
import { API_KEY_DIGESTS, digestMatches, digestOf, digestVersionOf, type DigestScheme } from './api-key-digest.js'
import {
  actorAuditFields, API_KEY_CREATED_EVENT, API_KEY_DIGEST_UPGRADED_EVENT, API_KEY_LAST_USED_FAILED_EVENT, API_KEY_MANAGEMENT_REFUSED_EVENT,
  API_KEY_REFUSED_EVENT, API_KEY_REVOKED_EVENT, keyAuditFields, ownerAuditFields, type ApiKeyLog
} from './api-key-events.js'
import { API_KEY_BODY_LENGTH, generateApiKey, parseApiKey } from './api-key-format.js'
import { apiKeyPrincipalOf, type ApiKeyPrincipal } from './api-key-principal.js'
import { ApiKeyLimitError, type ApiKeyOwner, type ApiKeyRecord, type ApiKeyRevocationReason, type ApiKeyStore } from './api-key-store.js'
import type { ApiKeySettings } from './settings-schema.js'

/** Longest key name, in characters. */
export const MAX_API_KEY_NAME_LENGTH = 100
/** A key's last use is written at most this often (issue 42, item 6). */
export const LAST_USED_INTERVAL_MS = 60_000
const DAY_MS = 86_400_000

/**
 * What a signed-in user asks for. The owner is a kind, never an identity: the API has no way to
 * name another user or tenant.
 *
 * @public @experimental
 */
export interface ApiKeyCreateRequest {
  /** Shown on the key list: 1-100 characters, no control or format characters. */
  readonly name: string
  /** A non-empty subset of the scheme's `Scopes` (for a user-owned key, of the scopes the user holds). */
  readonly scopes: readonly string[]
  /** 1 to `MaxLifetimeDays`; default `DefaultLifetimeDays`. */
  readonly lifetimeDays?: number
  /** The caller's own key (default), or the caller's tenant's (`Owners` must include Tenant). */
  readonly owner?: 'user' | 'tenant'
}

const REQUEST_FIELDS = new Set(['name', 'scopes', 'lifetimeDays', 'owner'])

/** A key as the key list shows it: everything but its digest. @public @experimental */
export type ApiKeyView = Omit<ApiKeyRecord, 'digest'>

/** A created key: its record, and the key itself, shown once (a {@link Secret}: logging it prints `[redacted]`). @public @experimental */
export interface CreatedApiKey {
  readonly apiKey: ApiKeyView
  readonly secret: Secret
}

/** Whether a key's owner may still act: what the owner check answers. @public @experimental */
export type ApiKeyOwnerStatus = 'valid' | 'revoked' | 'deprovisioned' | 'tenant_removed'

/** Why a key was refused. @public @experimental */
export type ApiKeyRefusal = 'malformed' | 'unknown' | 'expired' | 'revoked' | 'owner_denied'

/** The outcome of {@link ApiKeyService.authenticate}. @public @experimental */
export type ApiKeyAuthentication =
  | {
    readonly ok: true
    readonly principal: ApiKeyPrincipal
    /** Answered from the one-second cache (no store look-up). */
    readonly cached: boolean
  }
  | { readonly ok: false, readonly refusal: ApiKeyRefusal, readonly keyId?: string }

/**
 * A refused management call: a catalogue code (`APP_ERR_AUTH_REQUIRED`, `APP_ERR_API_KEY_SESSION_REQUIRED`,
 * `APP_ERR_AUTH_STEP_UP_REQUIRED`, `APP_ERR_AUTH_FORBIDDEN`, `APP_ERR_API_KEY_REQUEST_INVALID`,
 * `APP_ERR_API_KEY_LIMIT`), the field it names, and for a step-up the requirement the provider is
 * asked for.
 *
 * @public @experimental
 */
export class ApiKeyManagementError extends AppError {
  readonly field?: string
  readonly requirement?: AuthenticationRequirement

  constructor (code: ErrorCode, options: { readonly field?: string, readonly requirement?: AuthenticationRequirement } = {}) {
    super(code, code === 'APP_ERR_API_KEY_REQUEST_INVALID' ? messageOf(code, options.field ?? 'request') : (messageOf as (code: ErrorCode) => string)(code))
    this.name = 'ApiKeyManagementError'
    if (options.field !== undefined) this.field = options.field
    if (options.requirement !== undefined) this.requirement = options.requirement
  }
}

/** What a service is built with. @experimental */
export interface ApiKeyServiceOptions {
  /** The scheme's name (its instance's `scheme`): each key records it, audit lines name it. */
  readonly scheme: string
  /** The scheme's settings (its instance's: Prefix filled in). */
  readonly settings: ApiKeySettings
  readonly store: ApiKeyStore
  readonly log: ApiKeyLog
  /**
   * Whether a key's owner may still act, asked on every store look-up (at most once a second per
   * key): the user's sessions revoked (`app.session.revokeUser`), the person deprovisioned (SCIM),
   * the tenant removed from the provider source. Required: there is no default that trusts.
   */
  readonly ownerStatus: (owner: ApiKeyOwner) => ApiKeyOwnerStatus | Promise<ApiKeyOwnerStatus>
  /**
   * The offered scopes a signed-in user holds (a user-owned key may grant no other). Default: the
   * offered scopes the user has as `application:permission` claims of the same name.
   */
  readonly userScopes?: (principal: Principal, offered: readonly string[]) => readonly string[]
  /** The scheme's TenantAdministratorPolicy, resolved by name; without it no tenant-owned key is managed. */
  readonly tenantAdministrator?: AuthorizationPolicy
  /**
   * Called with the ids of revoked keys: publish them so every instance calls
   * {@link ApiKeyService.invalidate}. A revocation resolves once the promise it returns does, so
   * the other instances have dropped the keys before the caller's next request.
   */
  readonly onRevoked?: (ids: readonly string[]) => void | Promise<void>
  readonly now?: () => number
  /** Digest versions (tests; a later release adds one). */
  readonly digests?: DigestScheme
  /** How long a verified key is reused, 0-1000 ms (default 1000). */
  readonly cacheMs?: number
}

/**
 * The policy key creation goes through: a sign-in at most `CreationMaxAgeSeconds` old
 * (`authentication.maxAgeSeconds`, docs/security.md "Step-up"). The integrator puts it on the
 * creation route, so an older session is sent back to its provider first.
 *
 * @experimental
 */
export function creationPolicyOf (scheme: string, settings: Pick<ApiKeySettings, 'CreationMaxAgeSeconds'>): AuthorizationPolicy {
  return { name: `application.ApiKeys.${scheme}.Create`, authentication: { maxAgeSeconds: settings.CreationMaxAgeSeconds } }
}

const defaultUserScopes = (principal: Principal, offered: readonly string[]): readonly string[] =>
  offered.filter((scope) => principal.claims.some((claim) => claim.type === ApplicationClaimTypes.Permission && claim.value === scope))

/** No C0/C1 control characters and no format characters (bidirectional overrides, zero-width). */
const UNPRINTABLE = /[\p{Cc}\p{Cf}]/u

/** @public @experimental */
export class ApiKeyService {
  /** The scheme's name. */
  readonly scheme: string
  readonly settings: ApiKeySettings
  readonly #options: ApiKeyServiceOptions
  readonly #store: ApiKeyStore
  readonly #log: ApiKeyLog
  readonly #now: () => number
  readonly #digests: DigestScheme
  readonly #cache: ApiKeyCache
  readonly #touched = new Map<string, number>()
  readonly #creation: AuthorizationPolicy

  constructor (options: ApiKeyServiceOptions) {
    this.scheme = options.scheme
    this.settings = options.settings
    this.#options = options
    this.#store = options.store
    this.#log = options.log
    this.#now = options.now ?? Date.now
    this.#digests = options.digests ?? API_KEY_DIGESTS
    this.#cache = new ApiKeyCache(options.cacheMs ?? MAX_API_KEY_CACHE_MS)
    this.#creation = creationPolicyOf(options.scheme, options.settings)
  }

  // ------------------------------------------------------------------------------ management

  /** Creates a key for the caller (or the caller's tenant); the key is in `secret`, shown once. */
  async create (caller: Principal | undefined, request: ApiKeyCreateRequest): Promise<CreatedApiKey> {
    const actor = this.#session(caller, 'create')
    const checked = this.#checkRequest(actor.principal, request)
    const owner = this.#owner(actor, checked.ownerKind, 'create')
    const decision = decidePolicy(this.#creation, actor.principal, Math.floor(this.#now() / 1000))
    if (decision.outcome === 'step_up') throw this.#refuse('create', actor.principal, new ApiKeyManagementError('APP_ERR_AUTH_STEP_UP_REQUIRED', { requirement: decision.requirement }))
    if (owner.kind === 'user') {
      const held = new Set((this.#options.userScopes ?? defaultUserScopes)(actor.principal, Object.keys(this.settings.Scopes)))
      if (checked.scopes.some((scope) => !held.has(scope))) throw this.#invalid(actor.principal, 'scopes')
    }
    const generated = generateApiKey(this.settings.Prefix)
    const now = this.#now()
    let record: ApiKeyRecord
    try {
      record = await this.#store.addApiKey({
        id: generated.id,
        scheme: this.scheme,
        prefix: this.settings.Prefix,
        owner,
        createdBy: actor.identity,
        name: checked.name,
        scopes: checked.scopes,
        expires: new Date(now + checked.lifetimeDays * DAY_MS).toISOString(),
        digest: digestOf(generated.text, this.#digests) as string,
        lastFour: generated.lastFour
      }, this.settings.MaxKeysPerOwner)
    } catch (error) {
      if (error instanceof ApiKeyLimitError) throw this.#refuse('create', actor.principal, new ApiKeyManagementError('APP_ERR_API_KEY_LIMIT'))
      throw error
    }
    this.#log.info({
      event: API_KEY_CREATED_EVENT,
      ...keyAuditFields(record),
      ...ownerAuditFields(record.owner),
      ...actorAuditFields(actor.principal),
      scopes: record.scopes,
      expires: record.expires
    }, 'API key created')
    return { apiKey: viewOf(record), secret: new Secret(generated.text) }
  }

  /** The caller's keys (or the caller's tenant's), revoked and expired ones included, oldest first. */
  async list (caller: Principal | undefined, ownerKind: 'user' | 'tenant' = 'user'): Promise<ApiKeyView[]> {
    const actor = this.#session(caller, 'list')
    const owner = this.#owner(actor, ownerKind, 'list')
    return (await this.#store.listApiKeys(owner)).filter((record) => record.scheme === this.scheme).map(viewOf)
  }

  /**
   * Revokes one of the caller's keys (or of the caller's tenant, as its administrator); false when
   * the caller has no such unrevoked key (another owner's key is exactly "not found").
   */
  async revoke (caller: Principal | undefined, id: string): Promise<boolean> {
    const actor = this.#session(caller, 'revoke')
    const record = await this.#store.getApiKey(id)
    if (record === undefined || record.scheme !== this.scheme || record.revoked !== undefined || !this.#manages(actor, record.owner)) return false
    const revoked = await this.#store.revokeApiKey(id, 'user')
    if (revoked === undefined) return false
    await this.#revoked([revoked], 'user', actor.principal)
    return true
  }

  /**
   * Revokes every key of `owner` (of every scheme): what the owner's `revokeUser`, a SCIM
   * deactivation or a tenant's removal calls. Returns how many were revoked.
   */
  async revokeAllOf (owner: ApiKeyOwner, reason: ApiKeyRevocationReason): Promise<number> {
    const revoked = await this.#store.revokeApiKeysOf(owner, reason)
    await this.#revoked(revoked, reason, undefined)
    return revoked.length
  }

  /** Forgets cached keys (`ids`, or all): what the state store's pub/sub calls on each instance after a revocation. */
  invalidate (ids?: readonly string[]): void {
    this.#cache.invalidate(ids)
  }

  // -------------------------------------------------------------------------- authentication

  /** The principal of a key presented to the API, or why it is refused (written to the log with the key's id and prefix only). */
  async authenticate (keyText: string): Promise<ApiKeyAuthentication> {
    const parsed = parseApiKey(keyText, [this.settings.Prefix])
    if (!parsed.ok) return this.#refusal('malformed', undefined, parsed.reason)
    const now = this.#now()
    const digest = digestOf(keyText, this.#digests) as string
    let verified = this.#cache.get(digest, now)
    const cached = verified !== undefined
    if (verified === undefined) {
      const stored = await this.#store.getApiKey(parsed.id)
      if (stored === undefined || stored.scheme !== this.scheme || !digestMatches(keyText, stored.digest, this.#digests)) return this.#refusal('unknown', parsed.id)
      if (stored.revoked !== undefined) return this.#refusal('revoked', parsed.id)
      const expiresAtMs = Date.parse(stored.expires)
      if (expiresAtMs <= now) return this.#refusal('expired', parsed.id)
      const status = await this.#options.ownerStatus(stored.owner)
      if (status !== 'valid') return this.#refusal('owner_denied', parsed.id, status)
      await this.#upgradeDigest(stored, digest)
      verified = { record: stored, principal: apiKeyPrincipalOf(stored, Math.floor(now / 1000)), expiresAtMs }
      this.#cache.set(digest, verified, now)
    } else if (verified.expiresAtMs <= now) {
      return this.#refusal('expired', parsed.id)
    }
    await this.#touch(verified.record.id, now)
    return { ok: true, principal: verified.principal, cached }
  }

  /**
   * The principal of a key verified within its cached second, synchronously (the bearer handler's
   * cached path), or undefined: not cached, or expired (then {@link authenticate} decides). The
   * same principal object for the whole cached second. The key is looked up by its digest alone:
   * only a verified key is in the cache, so a text of the key's length that is no key misses it
   * (its shape and checksum are checked by {@link authenticate}). Its last use is written in the
   * background, at most once a minute.
   */
  cachedPrincipal (keyText: string): ApiKeyPrincipal | undefined {
    if (keyText.length !== this.settings.Prefix.length + API_KEY_BODY_LENGTH) return undefined
    const now = this.#now()
    const verified = this.#cache.get(digestOf(keyText, this.#digests) as string, now)
    if (verified === undefined || verified.expiresAtMs <= now) return undefined
    if (this.#touchDue(verified.record.id, now)) this.#touch(verified.record.id, now).catch(() => {})
    return verified.principal
  }

  // --------------------------------------------------------------------------------- helpers

  /** The caller as a session user with an identity; a key or bearer token, or no one, is refused. */
  #session (caller: Principal | undefined, action: string): { principal: Principal, identity: UserIdentity } {
    if (!(caller instanceof Object) || typeof (caller as Partial<Principal>).ticket !== 'object') {
      throw this.#refuse(action, undefined, new ApiKeyManagementError('APP_ERR_AUTH_REQUIRED'))
    }
    if (caller instanceof BearerPrincipal) throw this.#refuse(action, caller, new ApiKeyManagementError('APP_ERR_API_KEY_SESSION_REQUIRED'))
    const identity = identityOfTicket(caller.ticket)
    if (identity === undefined || identity.kind === 'client') throw this.#refuse(action, caller, new ApiKeyManagementError('APP_ERR_AUTH_FORBIDDEN'))
    return { principal: caller, identity }
  }

  #checkRequest (principal: Principal, request: ApiKeyCreateRequest): { name: string, scopes: string[], lifetimeDays: number, ownerKind: 'user' | 'tenant' } {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) throw this.#invalid(principal, 'request')
    // A field the API does not take (userId, an owner identity, a tenant) refuses the whole request.
    const unknown = Object.keys(request).find((field) => !REQUEST_FIELDS.has(field))
    if (unknown !== undefined) throw this.#invalid(principal, /^[A-Za-z][A-Za-z0-9_]{0,40}$/.test(unknown) ? unknown : 'request')
    const { name, scopes, lifetimeDays = this.settings.DefaultLifetimeDays, owner = 'user' } = request
    if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_API_KEY_NAME_LENGTH || UNPRINTABLE.test(name)) throw this.#invalid(principal, 'name')
    const offered = this.settings.Scopes
    if (!Array.isArray(scopes) || scopes.length === 0 || new Set(scopes).size !== scopes.length ||
      scopes.some((scope) => typeof scope !== 'string' || !Object.hasOwn(offered, scope))) throw this.#invalid(principal, 'scopes')
    if (!Number.isInteger(lifetimeDays) || lifetimeDays < 1 || lifetimeDays > this.settings.MaxLifetimeDays) throw this.#invalid(principal, 'lifetimeDays')
    if ((owner !== 'user' && owner !== 'tenant') || !this.settings.Owners.includes(owner === 'user' ? 'User' : 'Tenant')) throw this.#invalid(principal, 'owner')
    return { name: name.normalize('NFC'), scopes: [...scopes].sort(), lifetimeDays, ownerKind: owner }
  }

  /** The owner the caller acts for: itself, or its tenant as that tenant's administrator. */
  #owner (actor: { principal: Principal, identity: UserIdentity }, kind: 'user' | 'tenant', action: string): ApiKeyOwner {
    const tenant = tenantOf(actor.principal)
    if (kind === 'user') return { kind: 'user', identity: actor.identity, ...(tenant === undefined ? {} : { tenant }) }
    if (tenant === undefined || !this.#administers(actor.principal)) throw this.#refuse(action, actor.principal, new ApiKeyManagementError('APP_ERR_AUTH_FORBIDDEN'))
    return { kind: 'tenant', tenant }
  }

  #administers (principal: Principal): boolean {
    const policy = this.#options.tenantAdministrator
    return policy !== undefined && this.settings.Owners.includes('Tenant') && decidePolicy(policy, principal, Math.floor(this.#now() / 1000)).outcome === 'allow'
  }

  #manages (actor: { principal: Principal, identity: UserIdentity }, owner: ApiKeyOwner): boolean {
    if (owner.kind === 'user') return sameIdentity(owner.identity, actor.identity)
    return tenantOf(actor.principal) === owner.tenant && this.#administers(actor.principal)
  }

  #invalid (principal: Principal, field: string): ApiKeyManagementError {
    return this.#refuse('create', principal, new ApiKeyManagementError('APP_ERR_API_KEY_REQUEST_INVALID', { field }))
  }

  #refuse (action: string, principal: Principal | undefined, error: ApiKeyManagementError): ApiKeyManagementError {
    this.#log.warn({
      event: API_KEY_MANAGEMENT_REFUSED_EVENT,
      scheme: this.scheme,
      action,
      code: error.code,
      ...(error.field === undefined ? {} : { field: error.field }),
      ...actorAuditFields(principal),
      ...(principal instanceof BearerPrincipal && principal.access.clientId !== undefined ? { clientId: principal.access.clientId } : {})
    }, 'API key management refused')
    return error
  }

  #refusal (refusal: ApiKeyRefusal, keyId: string | undefined, detail?: string): ApiKeyAuthentication {
    this.#log.info({
      event: API_KEY_REFUSED_EVENT,
      failure: refusal,
      scheme: this.scheme,
      prefix: this.settings.Prefix,
      ...(keyId === undefined ? {} : { keyId }),
      ...(detail === undefined ? {} : { detail })
    }, 'API key refused')
    return { ok: false, refusal, ...(keyId === undefined ? {} : { keyId }) }
  }

  async #revoked (records: readonly ApiKeyRecord[], reason: ApiKeyRevocationReason, by: Principal | undefined): Promise<void> {
    if (records.length === 0) return
    for (const record of records) {
      this.#log.info({ event: API_KEY_REVOKED_EVENT, ...keyAuditFields(record), reason, ...ownerAuditFields(record.owner), ...actorAuditFields(by) }, 'API key revoked')
    }
    const ids = records.map((record) => record.id)
    this.#cache.invalidate(ids)
    await this.#options.onRevoked?.(ids)
  }

  /** Rewrites a digest of an older version in the current one (the key keeps working either way). */
  async #upgradeDigest (record: ApiKeyRecord, current: string): Promise<void> {
    if (digestVersionOf(record.digest) === this.#digests.current) return
    if (await this.#store.replaceDigest(record.id, record.digest, current)) {
      this.#log.info({ event: API_KEY_DIGEST_UPGRADED_EVENT, ...keyAuditFields(record), from: digestVersionOf(record.digest), to: this.#digests.current }, 'API key digest upgraded')
    }
  }

  /** Writes the last use at most once a minute per key (this instance remembers; the store's conditional write covers the others). */
  /** Whether a key's last use is due to be written (not written within the last minute). */
  #touchDue (id: string, now: number): boolean {
    const last = this.#touched.get(id)
    return last === undefined || now - last >= LAST_USED_INTERVAL_MS
  }

  async #touch (id: string, now: number): Promise<void> {
    if (!this.#touchDue(id, now)) return
    if (this.#touched.size >= 10_000) this.#touched.clear()
    this.#touched.set(id, now)
    try {
      await this.#store.touchApiKey(id, LAST_USED_INTERVAL_MS)
    } catch (error) {
      this.#log.warn({ event: API_KEY_LAST_USED_FAILED_EVENT, scheme: this.scheme, keyId: id, errorName: (error as Error).name }, 'API key last use not written')
    }
  }
}

function viewOf (record: ApiKeyRecord): ApiKeyView {
  const { digest: _digest, ...view } = record
  return view
}
