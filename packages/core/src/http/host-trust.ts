/**
 * Host and origin trust without Fastify types (docs/security.md, "Host and origin trust"): the
 * configured public origin, the Host header syntax, the allowed-hosts patterns and the proxy
 * address notation that `ForwardedHeaders:KnownProxies` accepts. The startup rules and the
 * request-time host check use the same functions, so `check-config` and startup agree.
 */
import { isIP } from 'node:net'
import { isDevelopment } from '../environment-name.js'

/**
 * The origin (`https://app.example.com[:port]`, lower-case, no trailing slash) of a configured
 * PublicOrigin, or undefined when the value is not an absolute http(s) origin: no user
 * information, path, query or fragment. `https` is required outside Development.
 */
export function parsePublicOrigin (value: string, environmentName: string): string | undefined {
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return undefined
  }
  const allowedProtocol = url.protocol === 'https:' || (url.protocol === 'http:' && isDevelopment(environmentName))
  if (!allowedProtocol || url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return undefined
  // `new URL` accepts `https://app.example.com/?#` and the like: insist on what an origin looks like.
  if (!/^https?:\/\/[^/?#]+\/?$/i.test(value.trim())) return undefined
  return url.origin
}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

/** True for a loopback host name (`localhost`, `127.0.0.1`, `[::1]` as URL and Fastify write it). */
export function isLoopbackHost (hostName: string): boolean {
  return LOOPBACK_HOSTS.has(hostName)
}

/**
 * The one loopback-http rule: a plain-http URL is acceptable only for a loopback host in
 * Development (provider endpoints, the OpenID Connect insecure-request switch).
 */
export function isDevelopmentLoopbackHttp (url: URL, environmentName: string): boolean {
  return url.protocol === 'http:' && isDevelopment(environmentName) && isLoopbackHost(url.hostname)
}

/**
 * The host part (`name`, `name:port`, `[v6]:port`) a URL may carry; what a Host header must be.
 * Labels allow `_` (container service names use it).
 */
const HOST_HEADER = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

/** True for a syntactically valid Host header value (or X-Forwarded-Host from a trusted proxy). */
export function isValidHost (host: string): boolean {
  if (host.length === 0 || host.length > 261 || !HOST_HEADER.test(host)) return false
  if (host.startsWith('[')) return isIP(host.slice(1, host.indexOf(']'))) === 6
  return true
}

/** The host name of a valid Host value, lower-case, without port. */
export function hostNameOf (host: string): string {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':', 1)[0] ?? ''
  return name.toLowerCase()
}

/** An AllowedHosts entry: `*`, `*.example.com`, a host name or an IP literal (IPv6 in brackets); no port. */
export function isAllowedHostPattern (pattern: string): boolean {
  if (pattern === '*') return true
  const name = pattern.startsWith('*.') ? pattern.slice(2) : pattern
  return isValidHost(name) && !/:\d+$/.test(name.replace(/^\[.*\]/, ''))
}

/** Matches a request's host name against the allowed names and patterns (lower-case). */
export function createHostMatcher (patterns: readonly string[]): (hostName: string) => boolean {
  const exact = new Set<string>()
  const suffixes: string[] = []
  let any = false
  for (const pattern of patterns.map((value) => value.trim().toLowerCase())) {
    if (pattern === '*') any = true
    else if (pattern.startsWith('*.')) suffixes.push(pattern.slice(1))
    else exact.add(pattern)
  }
  return (hostName) => any || exact.has(hostName) || suffixes.some((suffix) => hostName.endsWith(suffix) && hostName.length > suffix.length)
}

/**
 * Whether `AllowedHosts` restricts the host to names the operator chose: at least one entry and
 * no `*`. Only then is the request's own Host a validated origin (host filtering refuses any
 * other), fit to build a URL the app checks a client's proof against (a DPoP `htu`).
 */
export function restrictsHosts (allowedHosts: readonly string[]): boolean {
  return allowedHosts.length > 0 && !allowedHosts.some((pattern) => pattern.trim() === '*')
}

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

function prefixOfMask (mask: string): number | undefined {
  const bits = mask.split('.').map((octet) => Number(octet).toString(2).padStart(8, '0')).join('')
  return /^1*0*$/.test(bits) ? bits.indexOf('0') === -1 ? 32 : bits.indexOf('0') : undefined
}

/**
 * A `ForwardedHeaders:KnownProxies` entry Fastify's proxy-addr accepts: an IPv4 or IPv6 address,
 * optionally with a prefix length (1 to 32 or 128) or an IPv4 netmask, or one of `loopback`,
 * `linklocal`, `uniquelocal`. Stricter than proxy-addr in one respect: the IPv4 short and octal
 * forms it tolerates (`10.1`, `010.0.0.1`) are refused.
 */
export function isProxyAddress (value: string): boolean {
  if (PROXY_RANGE_NAMES.has(value)) return true
  const slash = value.lastIndexOf('/')
  const address = slash === -1 ? value : value.slice(0, slash)
  const kind = isIP(address)
  if (kind === 0 || address.includes('%')) return false
  if (slash === -1) return true
  const range = value.slice(slash + 1)
  const max = kind === 4 ? 32 : 128
  if (/^\d{1,3}$/.test(range)) return Number(range) >= 1 && Number(range) <= max
  if (kind === 4 && isIP(range) === 4) return (prefixOfMask(range) ?? 0) >= 1
  return false
}
