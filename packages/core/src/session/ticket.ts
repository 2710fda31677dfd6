/**
 * Sealing and opening the two halves of a session (docs/security.md, "Session format"), both
 * AES-256-GCM (authenticated-encryption.ts) with their own purpose strings:
 * - the session record, kept in the state store: a compact JSON form of the ticket (claims,
 *   optional provider tokens, lifetimes), so the store never holds claims or tokens in the clear;
 * - the session reference, the session cookie's value: the session id, about 90 characters.
 * Anything that fails to parse, authenticate, decode or is expired opens as `undefined`.
 */
import { openJson, sealBytes } from '../data-protection/authenticated-encryption.js'
import { purposesOf, type KeyRing } from '../data-protection/key-ring.js'
import type { AuthenticationTicket, Claim } from './principal.js'
import { checkedProof } from './authentication-proof.js'

const FORMAT_VERSION = 1
/** The record's and the reference's purposes: the ring's application's (data-protection/key-ring.ts). */
const recordPurpose = (ring: KeyRing): Buffer => Buffer.from(purposesOf(ring).sessionRecord)
const referencePurpose = (ring: KeyRing): Buffer => Buffer.from(purposesOf(ring).sessionReference)
/** Longer sealed records are refused before any work; a larger principal fails sign-in. */
export const MAX_SEALED_LENGTH = 1_048_576
/** Longer cookie values are refused before any work. */
export const MAX_REFERENCE_LENGTH = 256
/** A session id: a random UUID. */
export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Claims grouped by issuer, then type: `[issuer, [[type, [value, ...]], ...]]`. */
type CompactClaims = Array<[string, Array<[string, string[]]>]>

interface CompactTicket {
  v: number
  sid: string
  sch: string
  iat: number
  exp: number
  aexp: number
  c: CompactClaims
  tk?: Record<string, string>
  st?: number
  dv?: string
  /** The authentication proof (claims.ts AuthenticationProof). */
  au?: unknown
}

function compactClaims (claims: readonly Claim[]): CompactClaims {
  const byIssuer = new Map<string, Map<string, string[]>>()
  for (const claim of claims) {
    let byType = byIssuer.get(claim.issuer)
    if (byType === undefined) byIssuer.set(claim.issuer, byType = new Map())
    let values = byType.get(claim.type)
    if (values === undefined) byType.set(claim.type, values = [])
    values.push(claim.value)
  }
  return [...byIssuer].map(([issuer, byType]) => [issuer, [...byType]])
}

function expandClaims (compact: unknown): Claim[] | undefined {
  if (!Array.isArray(compact)) return undefined
  const claims: Claim[] = []
  for (const group of compact) {
    if (!Array.isArray(group) || typeof group[0] !== 'string' || !Array.isArray(group[1])) return undefined
    const issuer = group[0]
    for (const entry of group[1] as unknown[]) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) return undefined
      const type = entry[0]
      for (const value of entry[1] as unknown[]) {
        if (typeof value !== 'string') return undefined
        claims.push({ type, value, issuer })
      }
    }
  }
  return claims
}

export function sealTicket (ticket: AuthenticationTicket, ring: KeyRing): string {
  const compact: CompactTicket = {
    v: FORMAT_VERSION,
    sid: ticket.sessionId,
    sch: ticket.scheme,
    iat: ticket.issuedAt,
    exp: ticket.expiresAt,
    aexp: ticket.absoluteExpiresAt,
    c: compactClaims(ticket.claims),
    ...(ticket.tokens === undefined ? {} : { tk: { ...ticket.tokens } }),
    ...(ticket.startedAt === undefined ? {} : { st: ticket.startedAt }),
    ...(ticket.device === undefined ? {} : { dv: ticket.device }),
    ...(ticket.authentication === undefined ? {} : { au: ticket.authentication })
  }
  return sealBytes(JSON.stringify(compact), ring, recordPurpose(ring))
}

function isStringRecord (value: unknown): value is Record<string, string> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === 'string')
}

/** Opens a sealed ticket; undefined when it is not authentic, not well formed or expired. */
export function openTicket (sealed: string, ring: KeyRing, nowSeconds: number): AuthenticationTicket | undefined {
  const parsed = openJson<CompactTicket>(sealed, ring, recordPurpose(ring), MAX_SEALED_LENGTH)
  if (parsed === undefined || parsed.v !== FORMAT_VERSION) return undefined
  const { sid, sch, iat, exp, aexp, tk, st, dv, au } = parsed
  if (typeof sid !== 'string' || typeof sch !== 'string' || typeof iat !== 'number' || typeof exp !== 'number' || typeof aexp !== 'number') return undefined
  if (!(exp > nowSeconds) || !(aexp > nowSeconds)) return undefined
  if (tk !== undefined && !isStringRecord(tk)) return undefined
  const claims = expandClaims(parsed.c)
  if (claims === undefined) return undefined
  // A malformed proof is dropped: the session then satisfies no step-up requirement.
  const authentication = au === undefined ? undefined : checkedProof(au)
  return {
    sessionId: sid,
    scheme: sch,
    claims,
    issuedAt: iat,
    expiresAt: exp,
    absoluteExpiresAt: aexp,
    ...(tk === undefined ? {} : { tokens: tk }),
    // Optional metadata of the sessions page: a malformed value is dropped, not fatal.
    ...(typeof st === 'number' ? { startedAt: st } : {}),
    ...(typeof dv === 'string' ? { device: dv } : {}),
    ...(authentication === undefined ? {} : { authentication })
  }
}

/** The session cookie's value for a session id. */
export function sealSessionReference (sessionId: string, ring: KeyRing): string {
  return sealBytes(JSON.stringify({ v: FORMAT_VERSION, sid: sessionId }), ring, referencePurpose(ring))
}

/** The session id a cookie value names, or undefined when it is not an authentic reference. */
export function openSessionReference (sealed: string, ring: KeyRing): string | undefined {
  const parsed = openJson<{ v: unknown, sid: unknown }>(sealed, ring, referencePurpose(ring), MAX_REFERENCE_LENGTH)
  if (parsed === undefined || parsed.v !== FORMAT_VERSION || typeof parsed.sid !== 'string' || !SESSION_ID.test(parsed.sid)) return undefined
  return parsed.sid
}
