/**
 * A built-in machines-only policy (issue 40, item 13): `machinePolicy` passes client-credentials
 * callers only (optionally named clients), never a user's token or a session. Against real
 * issuers on loopback: oidc-provider issuing client-credentials tokens, and an issuer whose user
 * tokens jose mints.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT } from 'jose'
import { machinePolicy } from '../../src/authorization/scopes.js'
import type { TestApp } from '../helpers/app.js'
import { buildBearerApp } from '../helpers/bearer-app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const RESOURCE = 'https://api.example.test/'
const PARTNER_AUDIENCE = 'api://jobs'

describe('machinePolicy', () => {
  let resourceIdp: ResourceIdp
  let partnerIdp: TokenIdp
  let built: TestApp

  before(async () => {
    resourceIdp = await startResourceIdp({ resource: RESOURCE, scopes: ['jobs.run'], clients: { 'batch-runner': 'batch-secret', 'report-tool': 'report-secret' } })
    partnerIdp = await startTokenIdp('unused')
    built = await buildBearerApp({
      schemes: {
        Api: { Authority: resourceIdp.issuer, Audiences: [RESOURCE] },
        Partner: { Issuer: partnerIdp.issuer, JwksUri: `${partnerIdp.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE] }
      },
      policies: [machinePolicy('jobs.Machines'), machinePolicy('jobs.Batch', 'batch-runner')],
      routes: (app) => {
        app.post('/api/jobs', { config: { authorize: 'jobs.Machines' } }, async () => ({ ran: true }))
        app.post('/api/jobs/batch', { config: { authorize: 'jobs.Batch' } }, async () => ({ ran: true }))
      }
    })
  })
  after(async () => {
    await built?.app.close()
    await resourceIdp?.close()
    await partnerIdp?.close()
  })

  async function userToken (): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ iss: partnerIdp.issuer, aud: PARTNER_AUDIENCE, sub: 'ada', azp: 'batch-runner', iat: now, exp: now + 300, scp: 'jobs.run' })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(partnerIdp.signingKey)
  }

  const post = async (url: string, token: string): Promise<number> =>
    (await built.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })).statusCode

  test('a client-credentials token passes; a user\'s token of the same client id is refused (403)', async () => {
    assert.equal(await post('/api/jobs', await resourceIdp.clientCredentialsToken('report-tool', 'jobs.run')), 200)
    assert.equal(await post('/api/jobs', await userToken()), 403)
  })

  test('with client ids, only those machine clients pass', async () => {
    assert.equal(await post('/api/jobs/batch', await resourceIdp.clientCredentialsToken('batch-runner', 'jobs.run')), 200)
    assert.equal(await post('/api/jobs/batch', await resourceIdp.clientCredentialsToken('report-tool', 'jobs.run')), 403)
    assert.equal(await post('/api/jobs/batch', await userToken()), 403, 'a user acting through batch-runner is not the machine')
  })

  test('no caller at all is challenged, not passed', async () => {
    const response = await built.app.inject({ method: 'POST', url: '/api/jobs', headers: { accept: 'application/json' } })
    assert.equal(response.statusCode, 401)
  })

  test('an empty or spaced client id is a programming error', () => {
    assert.throws(() => machinePolicy('x', ''), TypeError)
    assert.throws(() => machinePolicy('x', 'a b'), TypeError)
  })
})
