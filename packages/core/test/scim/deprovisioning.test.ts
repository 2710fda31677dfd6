/**
 * Deprovisioning closes every door (issue 41, items 3 to 5), with a real sign-in through
 * oidc-provider over real HTTP: the person signs in and is linked to their SCIM user by
 * externalId (the subject), their directory group grants an application role at sign-in; Entra's
 * disabling PATCH ends their session before it answers and marks them deprovisioned for the
 * bearer and API-key checks; their next sign-in is refused at the callback (`deprovisioned`, the
 * page that says their organisation turned off their access, no session cookie); reactivation
 * restores sign-in with no other step. A connection requiring provisioned users refuses a person
 * it does not know, and a SCIM change of userName never moves the link.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { signInOverHttp } from '../helpers/providers/api-sign-in.js'
import { sessionCookiesSet } from '../helpers/providers/http-session.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { GROUP_SCHEMA, PATCH_SCHEMA, userBody } from '../helpers/scim.js'
import { entraDisableUserString, entraEnableUserString } from './corpora/entra-id.js'

const CLIENT_ID = 'project-template-web'
const CLIENT_SECRET = 'oidc-client-secret-deprovisioning'

let idp: OidcIdp
let app: ListeningApp
let token: string

async function scim (method: string, path: string, body?: unknown): Promise<{ status: number, json: Record<string, any> }> {
  const response = await app.app.inject({ method: method as 'GET', url: `/scim/v2/Contoso${path}`, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
  return { status: response.statusCode, json: response.body === '' ? {} : response.json() }
}

/** A full sign-in as `login`: the callback's answer and the browser session. */
const signInAs = async (login: string): ReturnType<typeof signInOverHttp> => await signInOverHttp(app.origin, login)

describe('deprovisioning with a real OpenID Connect sign-in', () => {
  before(async () => {
    idp = await startOidcIdp({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      accounts: { grace: { name: 'Grace Hopper', email: 'grace@contoso.test' }, alan: { name: 'Alan Turing', email: 'alan@contoso.test' } }
    })
    app = await startProviderApp({
      Authentication: { DefaultChallengeScheme: 'OpenIdConnect', Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, SaveTokens: true } } },
      Provisioning: { Enabled: true, Connections: { Contoso: { Tenant: 'contoso', Schemes: ['OpenIdConnect'], RequireProvisionedUsers: true, GroupRoles: ['Orders Admins=Orders.Admin'] } } }
    })
    await idp.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
    token = (await app.app.provisioning!.createToken('Contoso')).token
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  test('signed in and linked with the group\'s role; deactivated: session ended, marked, next sign-in refused; reactivated: signs in again', async () => {
    const user = await scim('POST', '/Users', userBody('grace@contoso.test', { externalId: 'grace' }))
    assert.equal(user.status, 201)
    const group = await scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Orders Admins', members: [{ value: user.json.id }] })
    assert.equal(group.status, 201)

    const first = await signInAs('grace')
    assert.equal(first.callback.location?.pathname, '/', `signed in (${JSON.stringify(app.logs.events('external.sign_in.failed'))})`)
    const home = await first.session.request(`${app.origin}/`)
    assert.equal(home.response.status, 200)
    assert.match(home.body, /<tr><td>application:role<\/td><td>Orders\.Admin<\/td>/, 'the mapped group grants its role')
    const linked = await app.app.directory!.getUser('Contoso', user.json.id as string)
    assert.deepEqual(linked?.identity, { scheme: 'OpenIdConnect', issuer: idp.issuer, subject: 'grace' })
    const identity = { issuer: idp.issuer, subject: 'grace' }
    assert.equal(await app.app.provisioning!.isDeprovisioned(identity), false)

    // A SCIM rename does not move the link.
    assert.equal((await scim('PATCH', `/Users/${user.json.id as string}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'userName', value: 'alan@contoso.test' }] })).status, 200)
    assert.deepEqual((await app.app.directory!.getUser('Contoso', user.json.id as string))?.identity, linked?.identity)

    const disabled = await scim('PATCH', `/Users/${user.json.id as string}`, entraDisableUserString)
    assert.equal(disabled.status, 200)
    const ended = await first.session.request(`${app.origin}/`)
    assert.notEqual(ended.response.status, 200, 'the session ended before the PATCH answered')
    assert.equal(await app.app.provisioning!.isDeprovisioned(identity), true, 'bearer tokens and API keys are refused from the next request')
    assert.equal(await app.app.provisioning!.isDeprovisioned({ issuer: 'https://other.example.test', subject: 'grace' }), false, 'another issuer\'s grace is another person')
    const audit = app.logs.events('provisioning.user.deprovisioned')
    assert.equal(audit.length, 1)
    assert.equal(audit[0]?.cause, 'deactivated')
    assert.deepEqual(audit[0]?.revoked, { sessions: 1, apiKeys: 0, savedDownstreamTokens: 'with their sessions', bearerTokensAndApiKeys: 'refused from the next request' })
    assert.ok(!JSON.stringify(app.logs.lines).includes(token), 'no connection token in the log')

    const refused = await signInAs('grace')
    assert.equal(refused.callback.response.status, 403)
    assert.match(refused.callback.body, /your organisation has turned off your access to this application/)
    assert.equal(sessionCookiesSet(refused.callback.response).length, 0, 'no session cookie')
    const failure = app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(failure?.failure, 'deprovisioned')
    assert.ok(refused.callback.body.includes(String(failure?.reqId)), 'the page shows the request id')

    assert.equal((await scim('PATCH', `/Users/${user.json.id as string}`, entraEnableUserString)).status, 200)
    assert.equal(await app.app.provisioning!.isDeprovisioned(identity), false)
    const again = await signInAs('grace')
    assert.equal(again.callback.location?.pathname, '/', 'reactivated: signs in with no other step')

    // Removing the mapped membership ends the session (the next sign-in has no role).
    assert.equal((await scim('PATCH', `/Groups/${group.json.id as string}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'remove', path: `members[value eq "${user.json.id as string}"]` }] })).status, 200)
    assert.notEqual((await again.session.request(`${app.origin}/`)).response.status, 200)
    const third = await signInAs('grace')
    assert.doesNotMatch((await third.session.request(`${app.origin}/`)).body, /Orders\.Admin/)

    // Deleted: the doors close too.
    assert.equal((await scim('DELETE', `/Users/${user.json.id as string}`)).status, 204)
    assert.notEqual((await third.session.request(`${app.origin}/`)).response.status, 200)
    assert.equal(await app.app.provisioning!.isDeprovisioned(identity), true)
  })

  test('RequireProvisionedUsers: a person the directory does not know is refused (not_provisioned)', async () => {
    const refused = await signInAs('alan')
    assert.equal(refused.callback.response.status, 403)
    assert.match(refused.callback.body, /your organisation has not given you access to this application/)
    assert.equal(app.logs.events('external.sign_in.failed').at(-1)?.failure, 'not_provisioned')
  })
})
