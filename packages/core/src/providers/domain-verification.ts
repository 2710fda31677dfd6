/**
 * Proof that a customer controls an e-mail domain before discovery by domain routes its users to
 * the customer's own identity provider (issue 28, item 3). The app shows its customer a DNS TXT
 * record (a random token under a fixed label of the domain); the core looks it up with Node's own
 * resolver, within a time limit, and says whether the token is there. The app records the result
 * in its provider source; discovery uses a runtime provider's domain only once it is verified.
 *
 * Nothing here trusts the answer beyond "the holder of this DNS zone published this token": the
 * token is 32 random bytes, compared exactly, and an unverified domain never routes (the customer
 * can still be given `provider=<scheme>` links).
 */
import { randomBytes } from 'node:crypto'
import { Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'
import { domainToASCII } from 'node:url'

/** The DNS label under the domain that holds the token: `_sso-verification.example.com`. @public @experimental */
export const DOMAIN_VERIFICATION_LABEL = '_sso-verification'
/** The TXT value's prefix, so a zone with other TXT records at that name is read unambiguously. @public @experimental */
export const DOMAIN_VERIFICATION_PREFIX = 'sso-verification='
/** The default time limit of one verification, every try included. @public @experimental */
export const DOMAIN_VERIFICATION_TIMEOUT_MS = 5_000

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/
const LABEL_PATTERN = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** A new verification token: 32 random bytes, base64url (43 characters). @public @experimental */
export function newDomainVerificationToken (): string {
  return randomBytes(32).toString('base64url')
}

/**
 * The domain in the one form it is compared in: lower case, IDNA (punycode) ASCII, without a
 * trailing dot; undefined for anything that is not a multi-label DNS name (an IP address, a
 * single label, an empty label, a label over 63 characters, a name over 253).
 *
 * @public @experimental
 */
export function normalizeDomain (value: string): string | undefined {
  const trimmed = value.trim().replace(/\.$/, '')
  if (trimmed === '' || trimmed.length > 253 || isIP(trimmed) !== 0 || trimmed.includes('@')) return undefined
  const ascii = domainToASCII(trimmed)
  if (ascii === '' || ascii.length > 253) return undefined
  const labels = ascii.split('.')
  if (labels.length < 2 || !labels.every((label) => LABEL_PATTERN.test(label))) return undefined
  return ascii
}

/** The record the customer publishes: its name and its TXT value. @public @experimental */
export function domainVerificationRecord (domain: string, token: string): { readonly name: string, readonly value: string } {
  const normalized = normalizeDomain(domain)
  if (normalized === undefined) throw new TypeError('domain is not a DNS name')
  if (!TOKEN_PATTERN.test(token)) throw new TypeError('token is not a verification token')
  return { name: `${DOMAIN_VERIFICATION_LABEL}.${normalized}`, value: `${DOMAIN_VERIFICATION_PREFIX}${token}` }
}

/** @public @experimental */
export interface DomainVerificationOptions {
  readonly domain: string
  /** The token shown to the customer ({@link newDomainVerificationToken}). */
  readonly token: string
  /** DNS servers (`host` or `host:port`); default: the system's. */
  readonly servers?: readonly string[]
  /** The whole verification's time limit; default {@link DOMAIN_VERIFICATION_TIMEOUT_MS}. */
  readonly timeoutMs?: number
}

/**
 * The outcome: `verified`, or why not: `not_found` (no such name or no TXT record there),
 * `mismatch` (TXT records there, none with this token), `timeout`, `dns_error` (SERVFAIL,
 * refused, unreachable servers; `code` is the resolver's error code, never a record's text).
 *
 * @public @experimental
 */
export type DomainVerificationResult =
  | { readonly verified: true, readonly domain: string }
  | { readonly verified: false, readonly domain: string, readonly reason: 'not_found' | 'mismatch' | 'timeout' | 'dns_error', readonly code?: string }

const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'ENODATA'])
const TIMEOUT_CODES = new Set(['ETIMEOUT', 'ECANCELLED'])

/** Looks the record up and says whether it holds `token`. Never throws for DNS outcomes. @public @experimental */
export async function verifyDomain (options: DomainVerificationOptions): Promise<DomainVerificationResult> {
  const { name, value } = domainVerificationRecord(options.domain, options.token)
  const domain = name.slice(DOMAIN_VERIFICATION_LABEL.length + 1)
  const timeoutMs = options.timeoutMs ?? DOMAIN_VERIFICATION_TIMEOUT_MS
  // The resolver's own timeout is per try; the timer below bounds the whole lookup.
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / 2)), tries: 2 })
  if (options.servers !== undefined) resolver.setServers([...options.servers])
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => { resolver.cancel(); resolve('timeout') }, timeoutMs)
    timer.unref()
  })
  try {
    const records = await Promise.race([resolver.resolveTxt(name), deadline])
    if (records === 'timeout') return { verified: false, domain, reason: 'timeout' }
    // A TXT record longer than 255 characters arrives in chunks: joined, as RFC 7208 3.3 reads them.
    const values = records.map((chunks) => chunks.join(''))
    if (values.includes(value)) return { verified: true, domain }
    return { verified: false, domain, reason: values.length === 0 ? 'not_found' : 'mismatch' }
  } catch (error) {
    const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : undefined
    if (code !== undefined && NOT_FOUND_CODES.has(code)) return { verified: false, domain, reason: 'not_found' }
    if (code !== undefined && TIMEOUT_CODES.has(code)) return { verified: false, domain, reason: 'timeout' }
    return { verified: false, domain, reason: 'dns_error', ...(code === undefined ? {} : { code }) }
  } finally {
    clearTimeout(timer)
  }
}
