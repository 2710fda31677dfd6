/**
 * A Redis node address as configured for Sentinel and Cluster (`host:port`, `[::1]:26379`): parsed
 * here once, for the startup rules (settings-rules.ts) and for the store (redis-topology.ts).
 */

export interface RedisNodeAddress {
  readonly host: string
  readonly port: number
}

// Labels of letters, digits, hyphens and (as container names resolved by Docker have) underscores.
const HOST_NAME = /^[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})?(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})?)*\.?$/
const IPV6 = /^[0-9A-Fa-f:.]+$/

/** `host:port` (a host name or IPv4 address, or `[IPv6]`) and a port 1-65535; undefined otherwise. */
export function parseRedisNode (text: string): RedisNodeAddress | undefined {
  const value = text.trim()
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value)
  if (match === null) return undefined
  const port = Number(match[3])
  if (!(port >= 1 && port <= 65535)) return undefined
  if (match[1] !== undefined) return IPV6.test(match[1]) && match[1].includes(':') ? { host: match[1], port } : undefined
  const host = match[2] ?? ''
  return HOST_NAME.test(host) ? { host, port } : undefined
}
