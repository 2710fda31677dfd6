/** Node addresses of State:Redis:Sentinel:Nodes and State:Redis:Cluster:Nodes (src/state/redis-node.ts). */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseRedisNode } from '../../src/state/redis-node.js'

test('host:port, [IPv6]:port and host names are read; everything else is refused', () => {
  const accepted: Array<[string, { host: string, port: number }]> = [
    ['127.0.0.1:6379', { host: '127.0.0.1', port: 6379 }],
    [' redis-0.redis.default.svc.cluster.local:26379 ', { host: 'redis-0.redis.default.svc.cluster.local', port: 26379 }],
    ['[::1]:26379', { host: '::1', port: 26379 }],
    ['[fd00::12:1]:1', { host: 'fd00::12:1', port: 1 }],
    ['localhost:65535', { host: 'localhost', port: 65535 }],
    ['project_redis-sentinel_1:26379', { host: 'project_redis-sentinel_1', port: 26379 }]
  ]
  for (const [text, node] of accepted) assert.deepEqual(parseRedisNode(text), node, text)
  for (const text of ['', '127.0.0.1', ':6379', '127.0.0.1:0', 'host:65536', 'host:123456', '::1:6379', '[::1]', '[host]:1', 'redis://host:6379', 'user:pw@host:6379', 'host:6379/0', 'ho st:1', '-host:1', 'host..example:1']) {
    assert.equal(parseRedisNode(text), undefined, text)
  }
})
