/**
 * The log events of API keys (issue 42, item 7; docs/events.md, docs/audit-events.md), named once.
 * No line ever carries a key: a refusal names the key's id and prefix only (and the id only once
 * the key's shape was valid), a creation the owner and the creator by their audit fields.
 */
import { auditFieldsOf, identityAuditFields } from '../session/user-identity.js'
import type { Principal } from '../session/principal.js'
import type { ApiKeyOwner, ApiKeyRecord } from './api-key-store.js'

/** A key was created (the secret shown once to its creator). */
export const API_KEY_CREATED_EVENT = 'api_key.created'
/** A key was revoked: by a user, or because its owner was revoked, deprovisioned or removed. */
export const API_KEY_REVOKED_EVENT = 'api_key.revoked'
/** A request to create, list or revoke keys was refused (no session, a key or token, step-up, bad input, the limit). */
export const API_KEY_MANAGEMENT_REFUSED_EVENT = 'api_key.management_refused'
/** A key presented to the API was refused (`failure`: malformed, unknown, expired, revoked, owner_denied). */
export const API_KEY_REFUSED_EVENT = 'api_key.refused'
/** A key's stored digest was rewritten in the current digest version on its first use. */
export const API_KEY_DIGEST_UPGRADED_EVENT = 'api_key.digest_upgraded'
/** Writing a key's last-used time failed (the call itself was served). */
export const API_KEY_LAST_USED_FAILED_EVENT = 'api_key.last_used_failed'

/** The log lines the service writes (a pino logger fits). @experimental */
export interface ApiKeyLog {
  info: (data: object, message: string) => void
  warn: (data: object, message: string) => void
}

/** A key's own fields in an audit line: scheme, id and prefix (never the key or its digest). */
export const keyAuditFields = (record: Pick<ApiKeyRecord, 'scheme' | 'id' | 'prefix'>): Record<string, string> =>
  ({ scheme: record.scheme, keyId: record.id, prefix: record.prefix })

/** The owner in an audit line: `ownerKind`, and the owner's identity fields prefixed `owner` or the tenant. */
export function ownerAuditFields (owner: ApiKeyOwner): Record<string, string> {
  if (owner.kind === 'tenant') return { ownerKind: 'tenant', tenant: owner.tenant }
  const fields = identityAuditFields(owner.identity)
  return {
    ownerKind: 'user',
    ownerProvider: fields.provider ?? '',
    ownerIssuer: fields.issuer ?? '',
    ownerSubject: fields.subject ?? '',
    ownerUserKey: fields.userKey ?? '',
    ...(owner.tenant === undefined ? {} : { tenant: owner.tenant })
  }
}

/** The acting user of a management call (a session), as every session audit line names it. */
export const actorAuditFields = (principal: Principal | undefined): Record<string, string> =>
  principal === undefined ? {} : auditFieldsOf(principal.ticket)
