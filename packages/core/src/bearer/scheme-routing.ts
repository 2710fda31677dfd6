/**
 * Which bearer scheme may receive a token (issue 40, items 1 and 5): decided by configuration the
 * operator controls, never by trying issuers in turn. A request's candidate schemes are those
 * whose `PathPrefixes` its path starts with (none: every bearer route) and that its route's
 * `config.bearerSchemes` names (absent: all). A JWT goes to the candidate its `iss` names; an
 * opaque token to the one introspecting candidate whose `Introspection:TokenPrefix` it starts
 * with, else to the only introspecting candidate without a TokenPrefix, and never to one without
 * a TokenPrefix when it starts with any scheme's TokenPrefix. What the rules below refuse (at
 * startup for configured schemes, at a reload for those from the provider source) keeps that
 * choice unique: two introspecting schemes whose TokenPrefixes are nested, or that share API
 * paths with one TokenPrefix or none; a scheme from the provider source shares API paths with
 * another introspecting scheme only when both have a TokenPrefix (a customer's prefix could
 * otherwise take the tokens of a scheme that has none), and has a TokenPrefix or PathPrefixes.
 * Plain inputs, no Fastify types.
 */
import type { ConfigurationProblem } from '../config/bind.js'

/** What routing reads of a bearer scheme. */
export interface RoutingFacts {
  readonly scheme: string
  /** `PathPrefixes`; empty: every bearer route. */
  readonly pathPrefixes: readonly string[]
  /** `Introspection:TokenPrefix`; '' for none. */
  readonly tokenPrefix: string
  readonly introspects: boolean
  /** Defined by the provider source (a customer's issuer), not by configuration. */
  readonly runtime: boolean
}

/** Whether a scheme with `pathPrefixes` accepts tokens on a request to `path` (before the query, as sent). */
export function servesPath (pathPrefixes: readonly string[], path: string): boolean {
  if (pathPrefixes.length === 0) return true
  for (const prefix of pathPrefixes) if (path.startsWith(prefix)) return true
  return false
}

/** Whether `scheme` is a candidate of a request to `path` on a route restricted to `names` (undefined: not restricted). */
export function isCandidate (scheme: RoutingFacts, path: string, names: ReadonlySet<string> | undefined): boolean {
  return (names === undefined || names.has(scheme.scheme)) && servesPath(scheme.pathPrefixes, path)
}

/** Whether some request path could be served by both (case-insensitive, so spellings that differ in case count as shared). */
export function pathScopesOverlap (a: readonly string[], b: readonly string[]): boolean {
  if (a.length === 0 || b.length === 0) return true
  return a.some((left) => b.some((right) => left.toLowerCase().startsWith(right.toLowerCase()) || right.toLowerCase().startsWith(left.toLowerCase())))
}

/**
 * The introspecting scheme that alone may receive the opaque `token` on this request, or
 * undefined (refused, no outbound call): the candidate whose TokenPrefix it starts with, else the
 * only candidate without one, unless the token starts with the TokenPrefix of any scheme (`all`).
 */
export function introspectingSchemeFor<S extends RoutingFacts> (token: string, candidates: readonly S[], all: readonly S[]): S | undefined {
  let matched: S | undefined
  let matches = 0
  let unprefixed: S | undefined
  let unprefixedCount = 0
  for (const scheme of candidates) {
    if (!scheme.introspects) continue
    if (scheme.tokenPrefix === '') {
      unprefixed = scheme
      unprefixedCount++
    } else if (token.startsWith(scheme.tokenPrefix)) {
      matched = scheme
      matches++
    }
  }
  if (matches > 0) return matches === 1 ? matched : undefined
  if (unprefixedCount !== 1) return undefined
  for (const scheme of all) if (scheme.introspects && scheme.tokenPrefix !== '' && token.startsWith(scheme.tokenPrefix)) return undefined
  return unprefixed
}

/** Why two schemes could both receive one opaque token. */
export type RoutingConflict = 'nested_token_prefix' | 'same_token_prefix' | 'no_token_prefix'

/** Whether introspecting schemes `a` and `b` could both be offered one opaque token (the rules above), and why. */
export function routingConflictOf (a: RoutingFacts, b: RoutingFacts): RoutingConflict | undefined {
  if (!a.introspects || !b.introspects) return undefined
  const [left, right] = [a.tokenPrefix, b.tokenPrefix]
  if (left !== '' && right !== '' && left !== right && (left.startsWith(right) || right.startsWith(left))) return 'nested_token_prefix'
  if (!pathScopesOverlap(a.pathPrefixes, b.pathPrefixes)) return undefined
  if (left === right) return left === '' ? 'no_token_prefix' : 'same_token_prefix'
  if ((left === '' || right === '') && (a.runtime || b.runtime)) return 'no_token_prefix'
  return undefined
}

/**
 * The problem of `facts` (the scheme at `keyPrefix`, refused) conflicting with `other`; `otherName`
 * is how the message names the other scheme (a scheme from the provider source is not named: the
 * refusal may reach another customer).
 */
export function routingConflictProblem (keyPrefix: string, conflict: RoutingConflict, otherName: string): ConfigurationProblem {
  const key = `${keyPrefix}:Introspection:TokenPrefix`
  const why = conflict === 'nested_token_prefix'
    ? `starts with the TokenPrefix of ${otherName}, or that one starts with it`
    : conflict === 'same_token_prefix'
      ? `equals the TokenPrefix of ${otherName}, which accepts tokens on the same API paths (PathPrefixes)`
      : `is empty, or ${otherName}'s is, while both accept opaque tokens on the same API paths (PathPrefixes): two schemes without a TokenPrefix may not share paths, nor may a scheme from the provider source share them with one`
  return { key, message: `${key} ${why}: an opaque token must go to one issuer only. Give each introspecting scheme a distinct TokenPrefix none starts with, or PathPrefixes the other does not share.` }
}

/** The problems of one scheme's routing keys: PathPrefixes are paths, TokenPrefix is token text and needs introspection. */
export function routingSettingsProblems (settings: { readonly PathPrefixes?: readonly string[], readonly Introspection?: { readonly ClientId: string, readonly TokenPrefix?: string } }, schemeKey: string): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  ;(settings.PathPrefixes ?? []).forEach((prefix, index) => {
    const key = `${schemeKey}:PathPrefixes:${index}`
    if (!/^\/[^\s?#]*$/.test(prefix)) problems.push({ key, message: `${key} must be a path starting with / (no spaces, query or fragment), such as /api/contoso/.` })
  })
  const tokenPrefix = settings.Introspection?.TokenPrefix ?? ''
  const key = `${schemeKey}:Introspection:TokenPrefix`
  if (tokenPrefix !== '' && !/^[A-Za-z0-9\-._~+/]+$/.test(tokenPrefix)) problems.push({ key, message: `${key} may hold only the characters of a bearer token (letters, digits, - . _ ~ + /).` })
  if (tokenPrefix !== '' && (settings.Introspection?.ClientId.trim() ?? '') === '') problems.push({ key, message: `${key} is set while introspection is off (${schemeKey}:Introspection:ClientId is empty).` })
  return problems
}

/** The routing facts of a configured or defined scheme's settings. */
export function routingFactsOf (scheme: string, settings: { readonly PathPrefixes?: readonly string[], readonly Introspection?: { readonly ClientId: string, readonly TokenPrefix?: string } }, introspects: boolean, runtime: boolean): RoutingFacts {
  return { scheme, pathPrefixes: settings.PathPrefixes ?? [], tokenPrefix: settings.Introspection?.TokenPrefix ?? '', introspects, runtime }
}

/**
 * The problems of a set of schemes checked in order: each scheme against those before it, the
 * later one named (at startup: the configured schemes; at a reload: a new scheme from the source
 * against every registered one, see {@link runtimeRoutingProblems}).
 */
export function routingProblems (schemes: ReadonlyArray<{ readonly facts: RoutingFacts, readonly keyPrefix: string }>): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  schemes.forEach(({ facts, keyPrefix }, index) => {
    for (const { facts: earlier } of schemes.slice(0, index)) {
      const conflict = routingConflictOf(facts, earlier)
      if (conflict !== undefined) {
        problems.push(routingConflictProblem(keyPrefix, conflict, `the scheme ${earlier.scheme}`))
        break
      }
    }
  })
  return problems
}

/**
 * The problems of a scheme from the provider source (`facts`, at `keyPrefix`) against the schemes
 * registered now, the first conflict named. An introspecting one without a TokenPrefix needs
 * PathPrefixes: else every opaque token sent to the API that no other scheme claims would reach
 * a customer's endpoint.
 */
export function runtimeRoutingProblems (facts: RoutingFacts, keyPrefix: string, registered: Iterable<RoutingFacts>): ConfigurationProblem[] {
  if (facts.introspects && facts.tokenPrefix === '' && facts.pathPrefixes.length === 0) {
    const key = `${keyPrefix}:Introspection:TokenPrefix`
    return [{ key, message: `${key} is required for an introspecting scheme from the provider source without ${keyPrefix}:PathPrefixes: an opaque token must go only to the issuer that can have issued it. Set the issuer's TokenPrefix, or PathPrefixes no other introspecting scheme shares.` }]
  }
  for (const other of registered) {
    if (other.scheme === facts.scheme) continue
    const conflict = routingConflictOf(facts, other)
    if (conflict !== undefined) return [routingConflictProblem(keyPrefix, conflict, other.runtime ? 'another scheme from the provider source' : `the configured scheme ${other.scheme}`)]
  }
  return []
}
