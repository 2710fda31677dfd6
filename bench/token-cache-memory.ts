/**
 * `npx tsx --expose-gc bench/token-cache-memory.ts`: what the verified-token cache holds (issue
 * 40, item 6; docs/performance.md, "The verified-token cache's memory"). One process: a JwtBearer
 * scheme (Issuer and JwksUri of a loopback key set) behind BearerSchemes, as plugins/bearer.ts
 * builds them, verifies N distinct RS256 tokens of about 3 KB (an Entra-like payload: names,
 * roles, 40 group ids, scopes) through `verify`, which caches each. Reported after a forced GC:
 * the heap the cache retains (heap used with the cache full, minus after `clear`), per entry, and
 * what the cache's own estimate says (`TokenCache.bytes`), and the RSS growth over the run.
 *
 *   options: --shape groups|many|large|unicode (default groups)  --tokens N (default 6000)  --budget-mib M (exit 1 when the retained heap is over it; default 16)
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, importPKCS8, SignJWT } from 'jose'
import { BearerSchemes, type CachedAuthentication } from '../packages/core/src/bearer/bearer-schemes.ts'
import { JwtBearerScheme } from '../packages/core/src/bearer/jwt-bearer-scheme.ts'
import { MAX_CACHED_BYTES, TokenCache } from '../packages/core/src/bearer/token-cache.ts'

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(name)
  return index === -1 ? fallback : Number(process.argv[index + 1])
}
const TOKENS = argument('--tokens', 6000)
const BUDGET_MIB = argument('--budget-mib', 16)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with --expose-gc: npx tsx --expose-gc bench/token-cache-memory.ts')
const MiB = 1024 * 1024

function collect (): { heap: number, committed: number, rss: number } {
  for (let round = 0; round < 3; round++) gc!()
  const usage = process.memoryUsage()
  return { heap: usage.heapUsed, committed: usage.heapTotal, rss: usage.rss }
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const jwk = { ...await exportJWK(publicKey), kid: 'bench', alg: 'RS256', use: 'sig' }
const server = createServer((_request, response) => { response.setHeader('content-type', 'application/json'); response.end(JSON.stringify({ keys: [jwk] })) })
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const issuer = `http://localhost:${(server.address() as AddressInfo).port}`
const signingKey = await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256')

const SHAPES = ['groups', 'many', 'large', 'unicode', 'minimal'] as const
const shapeIndex = process.argv.indexOf('--shape')
const SHAPE = (shapeIndex === -1 ? 'groups' : process.argv[shapeIndex + 1]) as (typeof SHAPES)[number]
if (!SHAPES.includes(SHAPE)) throw new Error(`--shape is one of ${SHAPES.join(', ')}`)

/** The claims that make a token of about 3 KB, by shape. */
function bulk (index: number): Record<string, unknown> {
  switch (SHAPE) {
    // 40 group ids, as Entra ID sends them.
    case 'groups': return { roles: ['Reader', 'Writer', 'Approver'], groups: Array.from({ length: 40 }, () => randomUUID()) }
    // 300 short values: the per-claim overhead dominates.
    case 'many': return { roles: Array.from({ length: 300 }, (_, role) => `r${role}`) }
    // One long claim.
    case 'large': return { description: `${index}:${'x'.repeat(1800)}` }
    // Names outside Latin-1: two bytes per character in V8.
    // Nothing beyond the standard claims: the per-entry overhead.
    case 'minimal': return {}
    case 'unicode': return { roles: Array.from({ length: 40 }, (_, role) => `роль-${role}-${index}`), display: 'Ада Лавлейс'.repeat(20) }
  }
}

/** An Entra-like access token of about 3 KB. */
async function token (index: number): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return await new SignJWT({
    iss: issuer, aud: 'api://orders', sub: `user-${index}-${randomUUID()}`, oid: randomUUID(), tid: randomUUID(), iat: now, nbf: now, exp: now + 3600,
    name: `User Number ${index}`, preferred_username: `user${index}@contoso.example`, email: `user${index}@contoso.example`,
    azp: 'b2f1d7c4-6a1e-4f55-9a55-2b1b1c1e1f10', scp: 'orders.read orders.write profile', ver: '2.0', uti: randomUUID().slice(0, 22),
    ...bulk(index)
  }).setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' }).sign(signingKey)
}

const scheme = new JwtBearerScheme({
  scheme: 'Bench',
  settings: { Authority: '', Issuer: issuer, JwksUri: `${issuer}/jwks`, Audiences: ['api://orders'], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {} },
  allowInsecureRequests: true,
  timeoutMs: 5000
})
const maxMiB = argument('--max-mib', 0)
const cache = new TokenCache<CachedAuthentication>(process.argv.includes('--no-cache') ? { maxEntries: 1 } : maxMiB > 0 ? { maxBytes: maxMiB * MiB } : {})
const schemes = new BearerSchemes(() => [scheme], (name) => name === 'Bench' ? scheme : undefined, { transformation: { Enabled: true, RemoveOriginalClaims: false }, cache })

// Warm up (code loaded, keys fetched), then start from an empty cache.
for (let index = 0; index < 50; index++) await schemes.verify(await token(-index), '/api/orders')
cache.clear()
const tokens: string[] = []
for (let index = 0; index < TOKENS; index++) tokens.push(await token(index))
const tokenBytes = tokens.reduce((sum, value) => sum + value.length, 0) / tokens.length
const start = collect()
for (const value of tokens) await schemes.verify(value, '/api/orders')
const full = collect()
const entries = cache.size
const estimated = cache.bytes
cache.clear()
const empty = collect()
server.close()

const retained = full.heap - empty.heap
const report = {
  shape: SHAPE,
  tokens: TOKENS,
  averageTokenBytes: Math.round(tokenBytes),
  entriesKept: entries,
  claimsPerEntry: (await schemes.verify(await token(0), '/api/orders')).principal.claims.length,
  retainedHeapMiB: +(retained / MiB).toFixed(1),
  retainedBytesPerEntry: Math.round(retained / Math.max(entries, 1)),
  estimatedMiB: +(estimated / MiB).toFixed(1),
  estimatedBytesPerEntry: Math.round(estimated / Math.max(entries, 1)),
  budgetMiB: +(MAX_CACHED_BYTES / MiB).toFixed(1),
  heapCommittedGrowthMiB: +((full.committed - start.committed) / MiB).toFixed(1),
  rssGrowthMiB: +((full.rss - start.rss) / MiB).toFixed(1),
  rssAfterClearMiB: +((empty.rss - start.rss) / MiB).toFixed(1)
}
console.log(JSON.stringify(report, null, 2))
if (report.retainedHeapMiB > BUDGET_MIB) {
  console.error(`retained heap ${report.retainedHeapMiB} MiB is over the documented ${BUDGET_MIB} MiB`)
  process.exitCode = 1
}
