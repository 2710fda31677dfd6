/**
 * The startup rules of `<Root>:State` (docs/scale-out.md): with Provider Redis, a usable
 * connection string, or a `State:Redis:Sentinel` or `State:Redis:Cluster` ("Sentinel and
 * Cluster") whose nodes parse as the store parses them (redis-node.ts). Each message names the
 * full key and never a configured value (a node list can reveal a network; a password never
 * appears).
 */
import type { ConfigurationProblem } from '../config/bind.js'
import { isMissing, problem, type Rule } from '../config/rules.js'
import { ROOT_KEY, type StateConfiguration } from '../config/schema.js'
import { parseRedisNode } from './redis-node.js'

export type RedisShape = 'Standalone' | 'Sentinel' | 'Cluster'

type RedisSettings = StateConfiguration['Redis']

const isSet = (value: string): boolean => value.trim() !== ''

/** Which Redis the settings describe: Sentinel when any of its nodes or its MasterName is set, Cluster when its nodes are. */
export function redisShapeOf (redis: RedisSettings): RedisShape {
  if (isSet(redis.Sentinel.MasterName) || redis.Sentinel.Nodes.length > 0) return 'Sentinel'
  if (redis.Cluster.Nodes.length > 0) return 'Cluster'
  return 'Standalone'
}

function checkNodes (nodes: readonly string[], key: string): ConfigurationProblem[] {
  return nodes.flatMap((node, index) => parseRedisNode(node) !== undefined
    ? []
    : [{ key: `${key}:${index}`, message: `${key}:${index} must be host:port (a host name or IPv4 address, or [IPv6], and a port from 1 to 65535).` }])
}

/** The problems of a Sentinel or Cluster configuration under `path` (`<Root>:State:Redis`). */
export function checkRedisShape (redis: RedisSettings, path: string): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  const sentinel = `${path}:Sentinel`
  const cluster = `${path}:Cluster`
  const sentinelSet = isSet(redis.Sentinel.MasterName) || redis.Sentinel.Nodes.length > 0
  if (sentinelSet && redis.Cluster.Nodes.length > 0) {
    problems.push({ key: `${cluster}:Nodes`, message: `${sentinel} and ${cluster} cannot both be set: a Redis is either behind Sentinel or a cluster.` })
  }
  if (!redis.ConnectionString.isEmpty && isSet(redis.ConnectionString.reveal())) {
    problems.push({ key: `${path}:ConnectionString`, message: `${path}:ConnectionString must be empty when ${sentinelSet ? sentinel : cluster} is set: the nodes, user and password are given there.` })
  }
  if (sentinelSet) {
    if (!isSet(redis.Sentinel.MasterName)) {
      problems.push({ key: `${sentinel}:MasterName`, message: `${sentinel}:MasterName is required when ${sentinel}:Nodes is set.` })
    } else if (!/^[A-Za-z0-9._-]{1,128}$/.test(redis.Sentinel.MasterName.trim())) {
      problems.push({ key: `${sentinel}:MasterName`, message: `${sentinel}:MasterName must be 1 to 128 letters, digits, dots, underscores or hyphens.` })
    }
    if (redis.Sentinel.Nodes.length === 0) {
      problems.push({ key: `${sentinel}:Nodes`, message: `${sentinel}:Nodes is required when ${sentinel}:MasterName is set: list the sentinels as host:port.` })
    }
    problems.push(...checkNodes(redis.Sentinel.Nodes, `${sentinel}:Nodes`))
  } else {
    problems.push(...checkNodes(redis.Cluster.Nodes, `${cluster}:Nodes`))
  }
  return problems
}

const STATE = `${ROOT_KEY}:State`

/** A Redis connection string: redis://, rediss:// or unix:/path. The message never repeats it (it may hold a password). */
export function checkRedisConnectionString (value: string): string | undefined {
  const key = `${STATE}:Redis:ConnectionString`
  const text = value.trim()
  if (text.startsWith('unix:')) {
    return /^unix:(\/\/)?\/[^\s?#]+$/.test(text) ? undefined : `${key} must be unix: followed by an absolute socket path.`
  }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return `${key} must be a redis://, rediss:// or unix: connection string.`
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return `${key} must use redis://, rediss:// or unix:.`
  if (url.hostname === '') return `${key} must name a host.`
  if (!/^(\/\d{0,2})?$/.test(url.pathname)) return `${key} may name only a database number as its path.`
  return undefined
}

export const stateStoreSettings: Rule = ({ config }) => {
  const state = config.State
  if (state.Provider !== 'Redis') return []
  const key = `${STATE}:Redis:ConnectionString`
  const shape = redisShapeOf(state.Redis)
  if (shape !== 'Standalone') return checkRedisShape(state.Redis, `${STATE}:Redis`)
  if (isMissing(state.Redis.ConnectionString)) return [problem(key, `${key} is required when ${STATE}:Provider is Redis.`)]
  const message = checkRedisConnectionString(state.Redis.ConnectionString.reveal())
  return message === undefined ? [] : [problem(key, message)]
}
