/**
 * Linking by e-mail address (issue 41, item 3) with a real sign-in through oidc-provider over
 * real HTTP: a connection with `LinkByEmail` links a person whose subject is no SCIM user's
 * externalId to the one SCIM user with their verified address at a verified domain, and nobody
 * else (ciso-assistant PR #4658): an address the IdP did not verify, another domain, a homoglyph
 * of the verified domain, two SCIM users with the same address, and an address the directory
 * moved to another SCIM user after that user was linked. Once linked, the person is found by
 * their identity alone: a later e-mail change at the IdP (even unverified) changes nothing.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { GROUP_SCHEMA, userBody } from '../helpers/scim.js'
import { entraUpdateMultiValued } from './corpora/entra-id.js'

const CLIENT_ID = 'project-template-web'
const CLIENT_SECRET = 'oidc-client-secret-link-by-email'

/** The IdP's accounts (login -> claims); read at each sign-in, so a test may change them. */
const ACCOUNTS: Record<string, Record<string, unknown>> = {
  grace: { name: 'Grace Hopper', email: 'grace@contoso.test', email_verified: true },
  unverified: { name: 'Mallory', email: 'victim@contoso.test', email_verified: false },
  otherdomain: { name: 'Mallory', email: 'guest@fabrikam.test', email_verified: true },
  homoglyph: { name: 'Mallory', email: 'victim@c\u043Entoso.test', email_verified: true },
  twin: { name: 'Twin', email: 'shared@contoso.test', email_verified: true },
  // Entra's documented PATCH below moves grace's SCIM address to this one.
  mover: { name: 'Mover', email: 'updatedEmail@contoso.test', email_verified: true }
}

let idp: OidcIdp
let app: ListeningApp
let token: string

async function scim (method: string, path: string, body?: unknown): Promise<{ status: number, json: Record<string, any> }> {
  const response = await app.app.inject({ method: method as 'GET', url: `/scim/v2/Contoso${path}`, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
  return { status: response.statusCode, json: response.body === '' ? {} : response.json() }
}

async function provision (userName: string, email: string): Promise<string> {
  // externalId as Entra's default mapping sends it (mailNickname): not the subject, so no externalId link.
  const created = await scim('POST', '/Users', userBody(userName, { externalId: `nick-${userName}`, emails: [{ primary: true, type: 'work', value: email }] }))
  assert.equal(created.status, 201)
  return created.json.id as string
}

async function signInAs (login: string): Promise<{ session: HttpSession, callback: Awaited<ReturnType<HttpSession['request']>> }> {
  const session = new HttpSession()
  const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect&returnUrl=%2F`)
  const callback = await session.request(await throughIdpLogin(session, start.location!, app.origin, login))
  return { session, callback }
}

/** A sign-in refused as unknown to the directory, with the reason linking by e-mail gave. */
async function assertNotLinked (login: string, reason: string): Promise<void> {
  const refused = await signInAs(login)
  assert.equal(refused.callback.response.status, 403, `${login} is not signed in`)
  assert.equal(sessionCookiesSet(refused.callback.response).length, 0, 'no session cookie')
  assert.equal(app.logs.events('external.sign_in.failed').at(-1)?.failure, 'not_provisioned')
  const note = app.logs.events('provisioning.sign_in.email_not_linked').at(-1)
  assert.equal(note?.reason, reason)
  assert.equal(note?.subject, login)
}

const linkedIdentity = async (id: string): Promise<unknown> => (await app.app.directory!.getUser('Contoso', id))?.identity

describe('LinkByEmail with a real OpenID Connect sign-in', () => {
  let grace: string
  before(async () => {
    idp = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] } })
    app = await startProviderApp({
      Authentication: { DefaultChallengeScheme: 'OpenIdConnect', Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } } },
      Provisioning: {
        Enabled: true,
        Connections: { Contoso: { Tenant: 'contoso', Schemes: ['OpenIdConnect'], RequireProvisionedUsers: true, LinkByEmail: true, VerifiedDomains: ['contoso.test'], GroupRoles: ['Orders Admins=Orders.Admin'] } }
      }
    })
    await idp.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
    token = (await app.app.provisioning!.createToken('Contoso')).token
    grace = await provision('Grace.Hopper', 'Grace@Contoso.test')
    assert.equal((await scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Orders Admins', members: [{ value: grace }] })).status, 201)
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  test('a verified address at a verified domain links the one SCIM user with it (case-insensitively), with its group\'s role', async () => {
    const first = await signInAs('grace')
    assert.equal(first.callback.location?.pathname, '/', `signed in (${JSON.stringify(app.logs.events('external.sign_in.failed'))})`)
    assert.match((await first.session.request(`${app.origin}/`)).body, /<tr><td>application:role<\/td><td>Orders\.Admin<\/td>/)
    assert.deepEqual(await linkedIdentity(grace), { scheme: 'OpenIdConnect', issuer: idp.issuer, subject: 'grace' })
    const linked = app.logs.events('provisioning.sign_in.linked')
    assert.equal(linked.length, 1)
    assert.equal(linked[0]?.by, 'email')
    assert.equal(linked[0]?.subject, 'grace')
  })

  test('an address the IdP did not verify links nothing', async () => {
    const victim = await provision('victim', 'victim@contoso.test')
    await assertNotLinked('unverified', 'unverified')
    assert.equal(await linkedIdentity(victim), undefined)
  })

  test('a verified address at a domain the customer did not prove links nothing, though a SCIM user has it', async () => {
    const guest = await provision('guest', 'guest@fabrikam.test')
    await assertNotLinked('otherdomain', 'other_domain')
    assert.equal(await linkedIdentity(guest), undefined)
  })

  test('a homoglyph of the verified domain (a Cyrillic о) links nothing', async () => {
    await assertNotLinked('homoglyph', 'other_domain')
    const victim = (await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "victim"')}`)).json.Resources[0]
    assert.equal(await linkedIdentity(victim.id as string), undefined)
  })

  test('two SCIM users with the same address: neither is linked', async () => {
    const a = await provision('twin-a', 'shared@contoso.test')
    const b = await provision('twin-b', 'SHARED@contoso.test')
    await assertNotLinked('twin', 'ambiguous')
    assert.equal(await linkedIdentity(a), undefined)
    assert.equal(await linkedIdentity(b), undefined)
  })

  test('an address changed in SCIM after linking never moves the link: its new owner at the IdP is not linked, the linked person keeps signing in', async () => {
    const moved = await scim('PATCH', `/Users/${grace}`, { ...entraUpdateMultiValued, Operations: [{ op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@contoso.test' }] })
    assert.equal(moved.status, 200)
    assert.deepEqual(moved.json.emails, [{ primary: true, type: 'work', value: 'updatedEmail@contoso.test' }])
    await assertNotLinked('mover', 'linked_to_another')
    assert.deepEqual(await linkedIdentity(grace), { scheme: 'OpenIdConnect', issuer: idp.issuer, subject: 'grace' })
    assert.equal((await signInAs('grace')).callback.location?.pathname, '/')
  })

  test('once linked, the person is found by their identity, never by e-mail again: an unverified address at another domain changes nothing', async () => {
    ACCOUNTS.grace = { name: 'Grace Hopper', email: 'grace@fabrikam.test', email_verified: false }
    const again = await signInAs('grace')
    assert.equal(again.callback.location?.pathname, '/')
    assert.match((await again.session.request(`${app.origin}/`)).body, /Orders\.Admin/, 'still the linked SCIM user, with its role')
    assert.equal(app.logs.events('provisioning.sign_in.linked').length, 1, 'linked once')
  })
})
