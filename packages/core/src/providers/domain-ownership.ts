/**
 * Who owns a verified e-mail domain that several providers from the provider source claim (issue
 * 33, item 3; docs/providers/runtime-providers.md, "Verified domains"). The rule is
 * the same on every instance, across restarts and whatever order the source lists its rows in, so
 * that a display-name edit, a restart or a new instance never hands a domain to another customer:
 *
 *   1. a configured provider's domain (`Authentication:...:Domains`) is never given to a runtime one;
 *   2. else the claim verified earliest (`verifiedAt` of the source's domain row) keeps it: the
 *      customer who proved the domain first stays its owner until its own row drops the domain;
 *   3. claims without `verifiedAt` come after every dated claim; among equals the scheme name
 *      decides (ordinal order), which no edit other than a rename changes.
 *
 * A claim that loses refuses that domain for that row only: the provider is added with its other
 * domains, and the reload result lists the domain refused. Plain data: no Fastify types.
 *
 * The same rule decides an Entra ID tenant id that several OpenID Connect providers from the source
 * list in `AllowedTenants` ({@link contestedTenants}; issue 40, item 20), dated by each definition's
 * `createdAt`: a configured provider's tenant is never given to a runtime one, else the earliest
 * row keeps it, and a row that loses is refused as a whole (its other users would otherwise sign
 * in through a provider that does not speak for them).
 */

/** One row's claim on one verified domain. */
export interface DomainClaim {
  readonly scheme: string
  /** Lower case. */
  readonly domain: string
  /** When the row's domain proof succeeded (milliseconds since the epoch), if the source says. */
  readonly verifiedAtMs?: number
}

/** A domain a row claimed and does not get. */
export interface LostDomainClaim {
  readonly scheme: string
  readonly domain: string
  /** `configured`: a configured provider serves it; `earlier_claim`: another row keeps it by rule 2 or 3. */
  readonly reason: 'configured' | 'earlier_claim'
}

export interface DomainAssignment {
  /** The domains each scheme keeps, in the order it claimed them. */
  readonly kept: ReadonlyMap<string, readonly string[]>
  readonly lost: readonly LostDomainClaim[]
}

/** A `verifiedAt` as the source gives it (an ISO 8601 text, milliseconds, a Date) in milliseconds; undefined when absent or not a time. */
export function verifiedAtMsOf (value: unknown): number | undefined {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Date.parse(value) : Number.NaN
  return Number.isFinite(ms) ? ms : undefined
}

/** Whether claim `a` goes before claim `b` for the same domain (rules 2 and 3). */
function precedes (a: DomainClaim, b: DomainClaim): boolean {
  const at = a.verifiedAtMs ?? Number.POSITIVE_INFINITY
  const bt = b.verifiedAtMs ?? Number.POSITIVE_INFINITY
  if (at !== bt) return at < bt
  return a.scheme < b.scheme
}

/** Assigns every claimed domain to one scheme; `configured` holds the configured providers' domains (lower case). */
export function assignDomains (claims: readonly DomainClaim[], configured: ReadonlySet<string>): DomainAssignment {
  const owner = new Map<string, DomainClaim>()
  for (const claim of claims) {
    if (configured.has(claim.domain)) continue
    const current = owner.get(claim.domain)
    if (current === undefined || precedes(claim, current)) owner.set(claim.domain, claim)
  }
  const kept = new Map<string, string[]>()
  const lost: LostDomainClaim[] = []
  for (const claim of claims) {
    const domains = kept.get(claim.scheme) ?? []
    kept.set(claim.scheme, domains)
    if (configured.has(claim.domain)) lost.push({ scheme: claim.scheme, domain: claim.domain, reason: 'configured' })
    else if (owner.get(claim.domain) === claim) domains.push(claim.domain)
    else lost.push({ scheme: claim.scheme, domain: claim.domain, reason: 'earlier_claim' })
  }
  return { kept, lost }
}

/** One row's claim on one tenant id of its `AllowedTenants` (canonical, oidc/tenant-issuer.ts). */
export interface TenantClaim {
  readonly scheme: string
  readonly tenantId: string
  /** When the row was created (the definition's `createdAt`, milliseconds), if the source says. */
  readonly createdAtMs?: number
}

/** The tenant claims that lose (rules 1 to 3 of this module); `configured` holds the configured providers' tenant ids. */
export function contestedTenants (claims: readonly TenantClaim[], configured: ReadonlySet<string>): Array<TenantClaim & { readonly reason: LostDomainClaim['reason'] }> {
  const asDomains = claims.map((claim) => ({ scheme: claim.scheme, domain: claim.tenantId, ...(claim.createdAtMs === undefined ? {} : { verifiedAtMs: claim.createdAtMs }) }))
  return assignDomains(asDomains, configured).lost.map((lost) => ({ ...claims.find((claim) => claim.scheme === lost.scheme && claim.tenantId === lost.domain)!, reason: lost.reason }))
}
