/**
 * DPoP proof replay across instances (RFC 9449 section 11.1; issue 35, item 5): two app instances
 * sharing one real redis-server (each with its own connections, as two processes have), against
 * oidc-provider issuing a DPoP-bound token. A proof accepted by instance A is refused as
 * `dpop_replay` by instance B, because the proof id is recorded in the shared state store; a
 * fresh proof is accepted by B.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'
import { dpopKey, dpopProof, startResourceIdp, type DPoPKey, type ResourceIdp } from '../helpers/providers/resource-idp.js'

const RESOURCE = 'https://api.example.test/'
const ORDERS_URL = 'http://localhost:80/api/orders'
const server = new RedisServer()

describe('DPoP proofs on two instances sharing Redis', () => {
  let idp: ResourceIdp
  let a: BearerTestApp
  let b: BearerTestApp
  let key: DPoPKey
  let token: string

  async function instance (): Promise<BearerTestApp> {
    const built = await buildBearerApp({
      schemes: { Api: { Authority: idp.issuer, Audiences: [RESOURCE], RequireDPoP: true } },
      settings: { State: { Provider: 'Redis', Redis: { ConnectionString: server.connectionString, TimeoutMilliseconds: 1000 } } },
      refusalsPerWindow: 1000
    })
    await waitFor(() => built.app.state.status().available, 'the Redis state store')
    return built
  }

  before(async () => {
    await server.start()
    idp = await startResourceIdp({ resource: RESOURCE, scopes: ['orders.read'], clients: { billing: 'billing-secret-PLANTED' } })
    a = await instance()
    b = await instance()
    key = await dpopKey()
    token = await idp.dpopClientCredentialsToken('billing', 'orders.read', key)
  })
  after(async () => {
    await a?.app.close()
    await b?.app.close()
    await idp?.close()
    await server.dispose()
  })

  test('a proof used on A is a replay on B; a fresh proof passes on B', async () => {
    const ath = createHash('sha256').update(token).digest('base64url')
    const proof = await dpopProof(key, 'GET', ORDERS_URL, { ath })
    const headers = { authorization: `DPoP ${token}`, dpop: proof }
    assert.equal((await a.app.inject({ url: '/api/orders', headers })).statusCode, 200)
    const replayed = await b.app.inject({ url: '/api/orders', headers })
    assert.equal(replayed.statusCode, 401)
    assert.match(String(replayed.headers['www-authenticate']), /^DPoP error="invalid_dpop_proof"/)
    assert.equal(b.logs.events('bearer.refused').at(-1)?.failure, 'dpop_replay')
    const fresh = await b.app.inject({ url: '/api/orders', headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(key, 'GET', ORDERS_URL, { ath }) } })
    assert.equal(fresh.statusCode, 200)
    for (const logs of [a.logs.text(), b.logs.text()]) {
      assert.equal(logs.includes(token), false)
      assert.equal(logs.includes(proof), false)
    }
  })
})
