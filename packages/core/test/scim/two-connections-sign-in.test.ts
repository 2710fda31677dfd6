/**
 * Two customers' connections and their real sign-ins over HTTP (issue 41, items 3 to 5, "a real
 * sign-in through the SAML test IdP before and after deactivation" and "the isolation cases
 * between two connections"): Contoso's people sign in through oidc-provider (its connection lists
 * the OpenIdConnect scheme), Fabrikam's through the SAML test IdP (its connection lists the Saml2
 * scheme); both directories hold a `grace` with the externalId `grace`, the subject at either
 * IdP. Each SCIM request is sent over HTTP as its directory sends it (Okta's deactivation, path-less).
 *
 * - SAML: a sign-in through the IdP's page works and links Fabrikam's user; Fabrikam deactivates
 *   her: the session ends, her next sign-in is refused at the ACS (`deprovisioned`, no session
 *   cookie, the page says her organisation turned off her access); reactivated: signs in again.
 * - Isolation: each sign-in links only its own connection's user; one connection's deactivation
 *   leaves the other connection's grace signed in, able to sign in, and not marked; a group of the
 *   same name grants roles only through the connection that maps it; one connection's token
 *   reaches no user of the other. (test/scim/bad-input.test.ts covers the other connection's ids
 *   and memberships request by request; test/scim/connection-tokens.test.ts its token.)
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { signInOverHttp, type HttpSignIn } from '../helpers/providers/api-sign-in.js'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { SP_ENTITY_ID, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { GROUP_SCHEMA, userBody } from '../helpers/scim.js'
import { oktaDeactivateUser } from './corpora/okta.js'

const CLIENT_ID = 'two-connections-client'
const CLIENT_SECRET = 'two-connections-secret-PLANTED-41'
const REACTIVATE = { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: true } }] }
const TURNED_OFF = /your organisation has turned off your access to this application/

type Connection = 'Contoso' | 'Fabrikam'

/** The hidden fields and action of the IdP's auto-posting form (its values are XML-escaped). */
function formOf (html: string): { action: string, fields: Record<string, string> } {
  const unescape = (value: string): string => value.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')
  const action = /<form method="post" action="([^"]*)">/.exec(html)?.[1]
  assert.ok(action !== undefined, 'the IdP answered its form')
  const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1] as string, unescape(match[2] as string)]))
  return { action: unescape(action), fields }
}

describe('two connections, each with its customer\'s real sign-in', () => {
  const saml = new TestIdentityProvider('http://localhost/fabrikam-idp')
  let oidc: OidcIdp
  let app: ListeningApp
  const tokens = {} as Record<Connection, string>
  const users = {} as Record<Connection, string>

  before(async () => {
    await saml.start()
    saml.users.set('grace', { nameId: 'grace', attributes: { email: ['grace@fabrikam.test'] } })
    oidc = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: { grace: { name: 'Grace at Contoso', email: 'grace@contoso.test' } } })
    app = await startProviderApp({
      Authentication: {
        Providers: {
          OpenIdConnect: { Enabled: true, Authority: oidc.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET },
          Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: saml.metadataUrl }
        }
      },
      Provisioning: {
        Enabled: true,
        Connections: {
          Contoso: { Tenant: 'contoso', Schemes: ['OpenIdConnect'], GroupRoles: ['Orders Admins=Orders.Admin'] },
          Fabrikam: { Tenant: 'fabrikam', Schemes: ['Saml2'] }
        }
      }
    })
    await oidc.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
    await waitForSaml2(app.app)
    for (const connection of ['Contoso', 'Fabrikam'] as const) {
      tokens[connection] = (await app.app.provisioning!.createToken(connection)).token
      const created = await scim(connection, 'POST', '/Users', userBody(`grace@${connection.toLowerCase()}.test`, { externalId: 'grace' }))
      assert.equal(created.status, 201)
      users[connection] = created.json.id as string
    }
  })
  after(async () => {
    await app?.close()
    await oidc?.close()
    await saml.stop()
  })

  /** A SCIM request of `connection` over HTTP (its token unless `token` is given). */
  async function scim (connection: Connection, method: string, path: string, body?: unknown, token = tokens[connection]): Promise<{ status: number, json: Record<string, any> }> {
    const response = await fetch(`${app.origin}/scim/v2/${connection}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000)
    })
    const text = await response.text()
    return { status: response.status, json: text === '' ? {} : JSON.parse(text) }
  }

  /** A full SAML sign-in as `login`: the challenge, the IdP's SSO page, its form posted to the ACS. */
  async function signInWithSaml (login: string): Promise<HttpSignIn> {
    saml.nextUser = login
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=Saml2&returnUrl=%2F`)
    assert.equal(start.location?.origin, saml.origin, 'sent to the SAML IdP')
    const page = await session.request(start.location)
    const form = formOf(page.body)
    const callback = await session.request(form.action, { method: 'POST', form: form.fields })
    return { session, start, callback, cookie: session.jar.header(new URL(app.origin)) }
  }

  const signInWith = async (connection: Connection): Promise<HttpSignIn> => connection === 'Contoso' ? await signInOverHttp(app.origin, 'grace') : await signInWithSaml('grace')

  /** The starter page of a session: its status and the roles it lists. */
  async function home (cookie: string): Promise<{ status: number, roles: string[] }> {
    const response = await fetch(`${app.origin}/`, { headers: { cookie, accept: 'text/html' }, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
    const body = await response.text()
    return { status: response.status, roles: [...body.matchAll(/<tr><td>application:role<\/td><td>([^<]*)<\/td>/g)].map((match) => match[1] as string) }
  }

  const identityOf = (connection: Connection): { issuer: string, subject: string } => ({ issuer: connection === 'Contoso' ? oidc.issuer : saml.entityId, subject: 'grace' })

  test('SAML: signs in and is linked; deactivated by Fabrikam: the session ends and the next sign-in is refused at the ACS; reactivated: signs in again', async () => {
    const first = await signInWithSaml('grace')
    assert.equal(first.callback.location?.pathname, '/', `signed in (${JSON.stringify(app.logs.events('external.sign_in.failed'))})`)
    assert.equal(sessionCookiesSet(first.callback.response).length, 1)
    assert.equal((await home(first.cookie)).status, 200)
    assert.deepEqual((await app.app.directory!.getUser('Fabrikam', users.Fabrikam))?.identity, { scheme: 'Saml2', issuer: saml.entityId, subject: 'grace' })

    assert.equal((await scim('Fabrikam', 'PATCH', `/Users/${users.Fabrikam}`, oktaDeactivateUser)).status, 200)
    assert.equal((await home(first.cookie)).status, 302, 'the session ended before the deactivation answered')
    assert.equal(await app.app.provisioning!.isDeprovisioned(identityOf('Fabrikam')), true)

    const refused = await signInWithSaml('grace')
    assert.equal(refused.callback.response.status, 403)
    assert.match(refused.callback.body, TURNED_OFF)
    assert.equal(sessionCookiesSet(refused.callback.response).length, 0, 'no session cookie')
    const failure = app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(failure?.failure, 'deprovisioned')
    assert.equal(failure?.provider, 'Saml2')

    assert.equal((await scim('Fabrikam', 'PATCH', `/Users/${users.Fabrikam}`, REACTIVATE)).status, 200)
    const again = await signInWithSaml('grace')
    assert.equal(again.callback.location?.pathname, '/', 'reactivated: signs in with no other step')
    assert.equal((await home(again.cookie)).status, 200)
  })

  test('isolation: the same externalId in both connections links each sign-in to its own user; one connection\'s deactivation, groups and token reach nobody of the other', async () => {
    const contosoGroup = await scim('Contoso', 'POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Orders Admins', members: [{ value: users.Contoso }] })
    const fabrikamGroup = await scim('Fabrikam', 'POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Orders Admins', members: [{ value: users.Fabrikam }] })
    assert.deepEqual([contosoGroup.status, fabrikamGroup.status], [201, 201])
    const signedIn = { Contoso: await signInWith('Contoso'), Fabrikam: await signInWith('Fabrikam') }
    for (const connection of ['Contoso', 'Fabrikam'] as const) assert.equal(signedIn[connection].callback.location?.pathname, '/', `${connection}'s grace signed in`)
    assert.deepEqual((await app.app.directory!.getUser('Contoso', users.Contoso))?.identity, { scheme: 'OpenIdConnect', issuer: oidc.issuer, subject: 'grace' })
    assert.deepEqual((await app.app.directory!.getUser('Fabrikam', users.Fabrikam))?.identity, { scheme: 'Saml2', issuer: saml.entityId, subject: 'grace' }, 'Fabrikam\'s user keeps its own link')
    assert.deepEqual((await home(signedIn.Contoso.cookie)).roles, ['Orders.Admin'], 'Contoso maps the group')
    assert.deepEqual((await home(signedIn.Fabrikam.cookie)).roles, [], 'a group of the same name grants nothing through Fabrikam')

    // One connection's token reaches no user of the other: another tenant's id is missing, the other path refuses the token.
    assert.equal((await scim('Contoso', 'PATCH', `/Users/${users.Fabrikam}`, oktaDeactivateUser)).status, 404)
    assert.equal((await scim('Fabrikam', 'PATCH', `/Users/${users.Fabrikam}`, oktaDeactivateUser, tokens.Contoso)).status, 401)
    assert.equal((await app.app.directory!.getUser('Fabrikam', users.Fabrikam))?.active, true)

    for (const [off, other] of [['Fabrikam', 'Contoso'], ['Contoso', 'Fabrikam']] as const) {
      assert.equal((await scim(off, 'PATCH', `/Users/${users[off]}`, oktaDeactivateUser)).status, 200)
      assert.equal((await home(signedIn[off].cookie)).status, 302, `${off}'s grace signed out`)
      assert.equal((await home(signedIn[other].cookie)).status, 200, `${other}'s grace still signed in after ${off}'s deactivation`)
      assert.equal(await app.app.provisioning!.isDeprovisioned(identityOf(other)), false, `${other}'s grace is not marked`)
      const refused = await signInWith(off)
      assert.match(refused.callback.body, TURNED_OFF)
      const allowed = await signInWith(other)
      assert.equal(allowed.callback.location?.pathname, '/', `${other}'s grace signs in while ${off}'s is deactivated`)
      signedIn[other] = allowed
      assert.equal((await scim(off, 'PATCH', `/Users/${users[off]}`, REACTIVATE)).status, 200)
      signedIn[off] = await signInWith(off)
    }
    assert.ok(!JSON.stringify(app.logs.lines).includes(tokens.Contoso) && !JSON.stringify(app.logs.lines).includes(tokens.Fabrikam), 'no connection token in the log')
  })
})
