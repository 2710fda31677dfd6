/**
 * A client acting as itself is never a user (issue 40, item 6): a client-credentials token whose
 * client id equals a user's subject, at the same scheme and issuer, against real issuers on
 * loopback (oidc-provider's client-credentials grant, whose tokens carry no `sub`, and an issuer
 * whose tokens jose mints). The user has a session, a bearer identity, a governance grant keyed
 * on their user key and audit lines; the machine token's identity, user key and audit lines are
 * its own, it passes none of the user's grants and `revokeUser` of its identity ends none of the
 * user's sessions.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT, type JWTPayload } from 'jose'
import type { FastifyRequest } from 'fastify'
import { claim, cookieHeaderFrom, TEST_SIGN_IN_PATH } from '../../src/testing/app.js'
import { sameIdentity, userKeyOf, type UserIdentity } from '../../src/session/user-identity.js'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const RESOURCE = 'https://api.example.test/'
const PARTNER_AUDIENCE = 'api://orders'
/** The client id of the machine, and the subject of a user at the same issuer. */
const SHARED = 'billing'

function identityOf (request: FastifyRequest): Record<string, unknown> {
  return { identity: request.user?.identity ?? null, userKey: request.user?.userKey ?? null, sub: request.user?.find('sub') ?? null, machine: request.bearer?.machine ?? null }
}

describe('a client-credentials token whose client id is a user\'s subject', () => {
  let resourceIdp: ResourceIdp
  let partnerIdp: TokenIdp
  let t: BearerTestApp
  /** User keys the app's governance has granted `orders.approve` (what an app keys its data on). */
  const approvers = new Set<string>()

  before(async () => {
    resourceIdp = await startResourceIdp({ resource: RESOURCE, scopes: ['orders.read'], clients: { [SHARED]: 'billing-secret' } })
    partnerIdp = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: {
        Api: { Authority: resourceIdp.issuer, Audiences: [RESOURCE] },
        Partner: { Issuer: partnerIdp.issuer, JwksUri: `${partnerIdp.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE] }
      },
      routes: (app) => {
        app.get('/api/whoami', async (request) => identityOf(request))
        app.post('/api/approve', { config: { governance: { action: 'orders.approve' } } }, async () => ({ approved: true }))
        app.authorization.useGovernanceEvaluator(({ principal }) => principal?.userKey !== undefined && approvers.has(principal.userKey))
      }
    })
  })
  after(async () => {
    await t?.app.close()
    await resourceIdp?.close()
    await partnerIdp?.close()
  })

  async function partnerToken (claims: JWTPayload): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ iss: partnerIdp.issuer, aud: PARTNER_AUDIENCE, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(partnerIdp.signingKey)
  }

  async function whoami (token: string): Promise<{ identity: UserIdentity, userKey: string, sub: string | null, machine: boolean }> {
    const response = await t.app.inject({ url: '/api/whoami', headers: { authorization: `Bearer ${token}` } })
    assert.equal(response.statusCode, 200)
    return response.json()
  }

  const approve = async (token: string): Promise<number> =>
    (await t.app.inject({ method: 'POST', url: '/api/approve', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })).statusCode

  test('a bearer user and a machine of the same scheme and issuer: two identities, two user keys, the user\'s grant only for the user', async () => {
    const user = await whoami(await partnerToken({ sub: SHARED, azp: 'mobile-app' }))
    const machine = await whoami(await partnerToken({ client_id: SHARED }))
    assert.deepEqual(user.identity, { scheme: 'Partner', issuer: partnerIdp.issuer, subject: SHARED })
    assert.deepEqual(machine.identity, { scheme: 'Partner', issuer: partnerIdp.issuer, subject: SHARED, kind: 'client' })
    assert.equal(machine.machine, true)
    assert.equal(sameIdentity(user.identity, machine.identity), false)
    assert.notEqual(machine.userKey, user.userKey)
    assert.equal(machine.userKey, userKeyOf(machine.identity))
    assert.equal(machine.sub, null, 'no made-up sub claim for a token without one')

    approvers.add(user.userKey)
    try {
      assert.equal(await approve(await partnerToken({ sub: SHARED, azp: 'mobile-app' })), 200, 'the user holds the grant')
      assert.equal(await approve(await partnerToken({ client_id: SHARED })), 403, 'the client does not act as the user')
      assert.equal(await approve(await partnerToken({ sub: SHARED, client_id: SHARED })), 403, 'nor a token whose sub is the client')
    } finally {
      approvers.delete(user.userKey)
    }
  })

  test('oidc-provider\'s client-credentials token (no sub) is not the session user of the same scheme, issuer and subject', async () => {
    // A session of the user (Api, <issuer>, billing): what a bearer token for that user would name.
    const signedIn = await t.app.inject({
      method: 'POST',
      url: TEST_SIGN_IN_PATH,
      payload: { scheme: 'Api', claims: [{ type: 'application:subject', value: SHARED, issuer: resourceIdp.issuer }, claim('application:name', 'Bill Ing')] }
    })
    assert.equal(signedIn.statusCode, 204)
    const cookie = cookieHeaderFrom(signedIn)
    const sessionUser = (await t.app.inject({ url: '/api/whoami', headers: { cookie } })).json() as { identity: UserIdentity, userKey: string }
    assert.deepEqual(sessionUser.identity, { scheme: 'Api', issuer: resourceIdp.issuer, subject: SHARED })

    const token = await resourceIdp.clientCredentialsToken(SHARED, 'orders.read')
    const machine = await whoami(token)
    assert.deepEqual(machine.identity, { ...sessionUser.identity, kind: 'client' })
    assert.notEqual(machine.userKey, sessionUser.userKey)
    assert.equal((await t.app.session.list(sessionUser.userKey)).sessions.length, 1)
    assert.equal((await t.app.session.list(machine.userKey)).sessions.length, 0, 'the client has no sessions of the user')

    approvers.add(sessionUser.userKey)
    try {
      assert.equal(await approve(token), 403, 'the client does not pass the user\'s grant')
    } finally {
      approvers.delete(sessionUser.userKey)
    }
    const line = t.logs.events('bearer.authenticated').find((event) => event.clientId === SHARED && event.provider === 'Api') ?? {}
    assert.equal(line.userKey, machine.userKey, 'audit lines name the client, not the user')
    assert.notEqual(line.userKey, sessionUser.userKey)

    assert.equal(await t.app.session.revokeUser(machine.identity), 0, 'revoking the client ends none of the user\'s sessions')
    assert.equal((await t.app.inject({ url: '/api/whoami', headers: { cookie } })).statusCode, 200, 'the user is still signed in')
    assert.equal(await t.app.session.revokeUser(sessionUser.identity), 1)
  })

  test('revokeUser takes a client identity (kind client) and refuses an unknown kind', async () => {
    await assert.rejects(t.app.session.revokeUser({ scheme: 'Api', issuer: resourceIdp.issuer, subject: SHARED, kind: 'robot' } as never), /identity\.kind/)
    assert.equal(await t.app.session.revokeUser({ scheme: 'Api', issuer: resourceIdp.issuer, subject: SHARED, kind: 'client' }), 0)
  })
})
