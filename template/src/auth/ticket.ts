/**
 * Sealing and opening the session ticket: a compact JSON form sealed with AES-256-GCM
 * (authenticated-encryption.ts). Why not a library: docs/security.md, "Cookie format".
 * Anything that fails to parse, authenticate, decode or is expired opens as `undefined`.
 */
import { openBytes, sealBytes } from './authenticated-encryption.js'
import type { KeyRing } from './key-ring.js'
import type { AuthenticationTicket, Claim } from './principal.js'

const FORMAT_VERSION = 1
const AAD = Buffer.from('ProjectTemplate.Web.Authentication.v1')
/** Longer sealed values are refused before any work (8 chunks of cookie). */
export const MAX_SEALED_LENGTH = 32_768

/** Claims grouped by issuer, then type: `[issuer, [[type, [value, ...]], ...]]`. */
type CompactClaims = Array<[string, Array<[string, string[]]>]>

interface CompactTicket {
  v: number
  sid: string
  sch: string
  iat: number
  exp: number
  c: CompactClaims
  tk?: Record<string, string>
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
    c: compactClaims(ticket.claims),
    ...(ticket.tokens === undefined ? {} : { tk: { ...ticket.tokens } })
  }
  return sealBytes(JSON.stringify(compact), ring, AAD)
}

function isStringRecord (value: unknown): value is Record<string, string> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === 'string')
}

/** Opens a sealed ticket; undefined when it is not authentic, not well formed or expired. */
export function openTicket (sealed: string, ring: KeyRing, nowSeconds: number): AuthenticationTicket | undefined {
  const plain = openBytes(sealed, ring, AAD, MAX_SEALED_LENGTH)
  if (plain === undefined) return undefined
  let parsed: Partial<CompactTicket>
  try {
    parsed = JSON.parse(plain.toString('utf8')) as Partial<CompactTicket>
  } catch {
    return undefined
  }
  if (parsed === null || typeof parsed !== 'object' || parsed.v !== FORMAT_VERSION) return undefined
  const { sid, sch, iat, exp, tk } = parsed
  if (typeof sid !== 'string' || typeof sch !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return undefined
  if (!(exp > nowSeconds)) return undefined
  if (tk !== undefined && !isStringRecord(tk)) return undefined
  const claims = expandClaims(parsed.c)
  if (claims === undefined) return undefined
  return { sessionId: sid, scheme: sch, claims, issuedAt: iat, expiresAt: exp, ...(tk === undefined ? {} : { tokens: tk }) }
}
