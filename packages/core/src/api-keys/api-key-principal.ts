/**
 * The principal of a call authenticated with an API key (issue 42, item 1): a
 * {@link BearerPrincipal}, so that `scopePolicy`, `clientPolicy`, `userPolicy` and `tenantPolicy`
 * read it unchanged, with the key's scopes as `application:scope` claims and the key's id as the
 * acting client.
 *
 * - **A user-owned key** acts as its owner: the ticket's scheme, issuer and subject are the
 *   owner's (so `request.user.userKey` is the owner's and the app's data joins), plus the tenant the
 *   owner had when the key was created. Nothing else of the owner is carried: no role, permission
 *   or group claim, so a role or permission policy refuses a key (its scopes are what it may do).
 * - **A tenant-owned key** is a client acting for the tenant (`kind: 'client'`, `machine`): its
 *   subject is the key id at the ApiKey scheme, and the scheme issues its `application:tenant`.
 *
 * No authentication proof: a step-up policy never passes with a key. Plain data.
 */
import { BearerPrincipal } from '../bearer/bearer-principal.js'
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'
import type { ApiKeyRecord } from './api-key-store.js'

/** The tenant claim type (authorization/tenants.ts). */
const TENANT = 'application:tenant'

/** What a key principal says about its key: what audit lines name. @public @experimental */
export interface ApiKeyFacts {
  readonly id: string
  readonly scheme: string
  readonly prefix: string
  readonly owner: 'user' | 'tenant'
}

/** @public @experimental */
export class ApiKeyPrincipal extends BearerPrincipal {
  readonly apiKey: ApiKeyFacts

  constructor (ticket: ConstructorParameters<typeof BearerPrincipal>[0], access: ConstructorParameters<typeof BearerPrincipal>[1], apiKey: ApiKeyFacts) {
    super(ticket, access)
    this.apiKey = apiKey
  }
}

/** The ticket's `sessionId` of a key principal: `api_key.` and the key id (no session exists; no secret in it). */
export const apiKeySessionIdOf = (id: string): string => `api_key.${id}`

/** The principal of a valid key at `nowSeconds`. */
export function apiKeyPrincipalOf (record: ApiKeyRecord, nowSeconds: number): ApiKeyPrincipal {
  const { owner } = record
  const scheme = owner.kind === 'user' ? owner.identity.scheme : record.scheme
  const issuer = owner.kind === 'user' ? owner.identity.issuer : record.scheme
  const subject = owner.kind === 'user' ? owner.identity.subject : record.id
  const client = owner.kind === 'tenant' || owner.identity.kind === 'client'
  const tenant = owner.tenant
  const claims: Claim[] = [
    { type: ApplicationClaimTypes.Subject, value: subject, issuer },
    ...(tenant === undefined ? [] : [{ type: TENANT, value: tenant, issuer: scheme }]),
    ...record.scopes.map((scope) => ({ type: ApplicationClaimTypes.Scope, value: scope, issuer: record.scheme }))
  ]
  const expiresAt = Math.floor(Date.parse(record.expires) / 1000)
  return new ApiKeyPrincipal({
    sessionId: apiKeySessionIdOf(record.id),
    scheme,
    claims,
    issuedAt: nowSeconds,
    expiresAt,
    absoluteExpiresAt: expiresAt,
    ...(client ? { kind: 'client' as const } : {})
  }, { scopes: record.scopes, clientId: record.id, machine: client }, { id: record.id, scheme: record.scheme, prefix: record.prefix, owner: owner.kind })
}
