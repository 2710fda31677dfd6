/**
 * Which addresses a provider from the app's provider source may be reached at (issue 33, item 2;
 * docs/security/federation.md "Outbound addresses of customers' providers"). A customer's admin chooses its
 * `Authority` or `MetadataUrl`, so without a rule the app fetches whatever that admin names: the
 * cloud metadata service (`169.254.169.254`), a database on the private network, the app's own
 * loopback ports (a blind SSRF). Outside Development such a provider may only reach public
 * addresses, unless the operator lists the host or network in
 * `Authentication:ProviderSource:AllowedInternalHosts` (an IdP on the premises). Checked twice:
 *
 * - when the definition is validated and applied: a URL with user information, a literal internal
 *   address (every numeric form: the WHATWG URL parser turns `0x7f000001` and `2130706433` into
 *   `127.0.0.1`), `localhost`, and a host name that resolves to an internal address are refused,
 *   naming the key;
 * - at every connection: the dispatcher's lookup refuses an internal address actually dialled, so
 *   a DNS answer that changes after validation (DNS rebinding) gains nothing
 *   (public-address-dispatcher.ts, apart so that undici loads only with a provider source).
 *
 * Configured providers (the operator's own configuration) are not restricted. Redirects are never
 * followed by any outbound call (each sets `redirect: 'error'` or `'manual'`).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'

export type { Dispatcher } from 'undici'

/** Networks that are not the public internet (IANA special-purpose registries, RFC 6890). */
const INTERNAL = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const) INTERNAL.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]
] as const) INTERNAL.addSubnet(network, prefix, 'ipv6')

/** The IPv4 address an IPv4-mapped or -compatible IPv6 address carries, else the address itself. */
function unmapped (address: string): string {
  const match = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (match !== null) return match[1]!
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (hex === null) return address
  const high = Number.parseInt(hex[1]!, 16)
  const low = Number.parseInt(hex[2]!, 16)
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
}

/** Whether `address` (an IP address) is loopback, private, link-local, unique-local or otherwise not public. */
export function isInternalAddress (address: string): boolean {
  const plain = unmapped(address.replace(/^\[|\]$/g, '').split('%', 1)[0]!)
  const family = isIP(plain)
  if (family === 0) return false
  return INTERNAL.check(plain, family === 4 ? 'ipv4' : 'ipv6')
}

/** The operator's exceptions: host names (exact, case-insensitive) and networks (`10.1.0.0/16`, or one address). */
export class InternalHostAllowance {
  readonly #hosts = new Set<string>()
  readonly #networks = new BlockList()

  constructor (entries: readonly string[]) {
    for (const entry of entries.map((value) => value.trim()).filter((value) => value !== '')) {
      const [address, prefix] = entry.split('/', 2) as [string, string | undefined]
      const family = isIP(address)
      if (family === 0) { this.#hosts.add(entry.toLowerCase()); continue }
      const type = family === 4 ? 'ipv4' : 'ipv6'
      if (prefix === undefined) this.#networks.addAddress(address, type)
      else this.#networks.addSubnet(address, Number(prefix), type)
    }
  }

  allowsHost (hostname: string): boolean {
    return this.#hosts.has(hostname.toLowerCase())
  }

  allowsAddress (address: string): boolean {
    const plain = unmapped(address.replace(/^\[|\]$/g, ''))
    const family = isIP(plain)
    return family !== 0 && this.#networks.check(plain, family === 4 ? 'ipv4' : 'ipv6')
  }
}

/** Whether an allow-list entry is well formed: a host name, an address, or an address with a prefix length. */
export function allowanceEntryProblem (entry: string): string | undefined {
  const [address, prefix] = entry.trim().split('/', 2) as [string, string | undefined]
  const family = isIP(address)
  if (prefix !== undefined) {
    const bits = Number(prefix)
    if (family === 0 || !/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128)) return 'a network is an address with a prefix length (10.1.0.0/16)'
    return undefined
  }
  if (family !== 0) return undefined
  return /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(address) ? undefined : 'a host name or a network'
}

/** Why `url` may not be fetched for a provider from the source, before any lookup; undefined when it may. */
export function urlTargetProblem (url: string, allowance: InternalHostAllowance): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined // the URL rules of the provider type name an unparsable URL
  }
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry user information (user:password@)'
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (allowance.allowsHost(host)) return undefined
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not name this host (localhost)'
  if (isIP(unmapped(host)) !== 0 && isInternalAddress(host) && !allowance.allowsAddress(host)) return 'must not name an internal address (loopback, private, link-local or unique-local)'
  return undefined
}

/** How host names are resolved (node:dns `lookup`, all addresses); replaceable in tests. */
export type HostResolver = (hostname: string, options: { all: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void

/** Resolves `url`'s host; why it may not be fetched when any address is internal, else undefined. */
export async function resolvedTargetProblem (url: string, allowance: InternalHostAllowance, resolver: HostResolver = dnsLookup): Promise<string | undefined> {
  const literal = urlTargetProblem(url, allowance)
  if (literal !== undefined) return literal
  let host: string
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  } catch {
    return undefined
  }
  if (isIP(host) !== 0 || allowance.allowsHost(host)) return undefined
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    resolver(host, { all: true }, (error, found) => { resolve(error === null ? found : []) })
  })
  // A name that does not resolve now is the provider's own failure (unreachable), not an internal target.
  return addresses.some(({ address }) => isInternalAddress(address) && !allowance.allowsAddress(address))
    ? 'resolves to an internal address (loopback, private, link-local or unique-local)'
    : undefined
}

/** The error a connection to an internal address fails with (a network cause code in log lines). */
