/**
 * Back-channel logout and token refresh on two instances sharing one real redis-server (each with
 * its own Redis connections, as two processes have), against oidc-provider: a session signed in
 * on A and cached on both ends everywhere when the provider's logout token reaches B (deletion
 * plus the pub/sub invalidation); concurrent token requests on A and B make exactly one refresh
 * grant at the provider (the lock record is a Redis SET NX).
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { confirmIdpLogout, throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { waitUntilReady } from '../helpers/providers/provider-app.js'

const SECRET = 'redis-oidc-secret-PLANTED-27'
const CLIENT_ID = 'redis-client'
const TOKEN_PATH = '/test-only/access-token'
const server = new RedisServer()
const keyRing = createKeyRing([randomBytes(32)])

interface Instance extends TestApp { readonly origin: string }

function addTokenRoute (app: FastifyInstance): void {
  app.get(TOKEN_PATH, async (request, reply) => {
    const token = await app.session.accessToken(request, reply)
    if (token === undefined) return await reply.code(401).send({ error: 'no_token' })
    return { token }
  })
}

async function instance (issuer: string): Promise<Instance> {
  const test = await buildTestApp({
    nodeEnv: 'development',
    keyRing,
    testSignIn: false,
    configure: addTokenRoute,
    settings: {
      State: { Provider: 'Redis', Redis: { ConnectionString: server.connectionString, TimeoutMilliseconds: 1000 } },
      Authentication: {
        Providers: { OpenIdConnect: { Enabled: true, Authority: issuer, ClientId: CLIENT_ID, ClientSecret: SECRET, SaveTokens: true, BackChannelLogout: true } }
      }
    }
  })
  await test.app.listen({ host: '127.0.0.1', port: 0 })
  await waitFor(() => test.app.state.status().available, 'the Redis state store')
  return { ...test, origin: `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}` }
}

let idp: OidcIdp
let a: Instance
let b: Instance

before(async () => {
  await server.start()
  // The provider's back channel reaches instance B; browsers use instance A.
  let backChannel = ''
  idp = await startOidcIdp({
    clientId: CLIENT_ID,
    clientSecret: SECRET,
    accounts: { ada: { name: 'Ada Lovelace' } },
    refreshTokens: { accessTokenTtlSeconds: 30, refreshedAccessTokenTtlSeconds: 3600 },
    backChannelLogoutUri: () => backChannel
  })
  a = await instance(idp.issuer)
  b = await instance(idp.issuer)
  backChannel = `${b.origin}/backchannel-logout-oidc`
  await idp.configure(`${a.origin}/signin-oidc`)
  await waitUntilReady(a.origin)
  await waitUntilReady(b.origin)
})
after(async () => {
  await a?.app.close()
  await b?.app.close()
  await idp?.close()
  await server.dispose()
})

async function signIn (session: HttpSession): Promise<string> {
  const start = await session.request(`${a.origin}/External/Challenge?provider=OpenIdConnect`)
  const callbackUrl = await throughIdpLogin(session, start.location!, a.origin, 'ada')
  const callback = await session.request(callbackUrl)
  assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
  return session.jar.header(new URL(a.origin))
}

async function status (app: Instance, cookie: string): Promise<number> {
  const response = await fetch(`${app.origin}/api/application-information`, { headers: { cookie, accept: 'application/json' } })
  await response.arrayBuffer()
  return response.status
}

async function getToken (app: Instance, cookie: string): Promise<{ status: number, token?: string }> {
  const response = await fetch(`${app.origin}${TOKEN_PATH}`, { headers: { cookie, accept: 'application/json' }, signal: AbortSignal.timeout(20_000) })
  const body = await response.json() as { token?: string }
  return { status: response.status, ...(body.token === undefined ? {} : { token: body.token }) }
}

describe('two instances, one Redis, oidc-provider', () => {
  test('concurrent token requests on both instances make one refresh grant', async () => {
    const cookie = await signIn(new HttpSession())
    assert.equal(await status(a, cookie), 200)
    assert.equal(await status(b, cookie), 200)
    const before = idp.grants.refresh_token ?? 0
    const results = await Promise.all(Array.from({ length: 6 }, async (_, index) => await getToken(index % 2 === 0 ? a : b, cookie)))
    assert.deepEqual(results.map((result) => result.status), Array(6).fill(200))
    assert.equal(new Set(results.map((result) => result.token)).size, 1)
    assert.equal((idp.grants.refresh_token ?? 0) - before, 1, 'exactly one refresh grant')
    assert.equal((await getToken(b, cookie)).token, results[0]?.token, 'B reads the refreshed token A or B wrote')
  })

  test('a logout token delivered to B ends the session that A signed in and cached', async () => {
    const session = new HttpSession()
    const cookie = await signIn(session)
    assert.equal(await status(a, cookie), 200)
    assert.equal(await status(b, cookie), 200)
    const delivered = idp.backChannelLogouts.length
    await confirmIdpLogout(session, new URL(`${idp.issuer}/session/end`))
    await waitFor(() => idp.backChannelLogouts.length > delivered, 'the back-channel POST')
    assert.deepEqual(idp.backChannelLogouts.at(-1), { status: 200 })
    assert.equal(b.logs.events('oidc.back_channel_logout.succeeded').at(-1)?.sessions, 1)
    assert.equal(await status(b, cookie), 401)
    // A learns of it through the Redis invalidation channel (asynchronous, bounded wait).
    await waitFor(async () => await status(a, cookie) === 401, 'instance A to drop the session', 5_000)
    const planted = [SECRET, ...idp.issuedTokenResponseValues, ...idp.issuedCodes]
    assert.deepEqual(findPlanted(a.logs.text() + b.logs.text(), planted), [])
  })
})
