/**
 * /Account/ApiKeys (issue 42, items 3 and 6) through the starter app over `inject()`: the list,
 * creation with the secret shown once (`Cache-Control: no-store`, never logged) and revocation,
 * and every refusal: no session (the sign-in challenge), a key or bearer token (403, audited, with
 * or without a session), a sign-in older than CreationMaxAgeSeconds (the step-up challenge at the
 * session's provider), a body naming another owner (400 naming the field, audited, nothing
 * created), bad input (400/409 naming the field, the form shown again), a missing anti-forgery
 * token, another user's key id (404, as a missing one); several schemes picked by `scheme`, the
 * tenant's keys for its administrator, and no pages without an ApiKey scheme.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { antiforgeryFor, buildTestApp, claim, cookieHeaderFrom, standardUser, TEST_SIGN_IN_PATH, type TestApp } from '../helpers/app.js'
import { antiforgeryTokenIn } from '../helpers/cookies.js'
import type { Claim } from '../../src/session/principal.js'

const IDP = 'https://idp.invalid'
const KEYS = { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'application.read': 'Read the application', 'orders.write': 'Change orders' }, DefaultLifetimeDays: 7, MaxLifetimeDays: 30, MaxKeysPerOwner: 2 }
const PARTNER = { Type: 'ApiKey', Prefix: 'partner_', DisplayName: 'Partner keys', Scopes: { 'application.read': 'Read the application' }, Owners: ['User', 'Tenant'], TenantAdministratorPolicy: 'application.Role.Administrator' }
const SETTINGS = { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: KEYS, Partner: PARTNER } } }

/** A provider that signs nobody in: its challenge (step-up included) redirects to {@link IDP}, naming the maximum age asked for. */
function registerStaff (app: FastifyInstance): void {
  app.authentication.registerProvider({
    scheme: 'Staff',
    displayName: 'Staff account',
    paths: [],
    stepUp: true,
    status: () => ({ available: true }),
    async challenge (_request, reply, returnUrl, hint) {
      const flowId = await app.externalSignIn.beginFlow(reply, 'Staff', returnUrl, {})
      const maxAge = hint?.stepUp?.requirement.maxAgeSeconds
      return reply.redirect(`${IDP}/authorize?${new URLSearchParams({ state: flowId, ...(maxAge === undefined ? {} : { max_age: String(maxAge) }) }).toString()}`, 302)
    }
  })
}

let users = 0
/** A user of its own (no key of another test counts against the per-owner limit), signed in through Staff. */
function userClaims (extra: Claim[] = []): Claim[] {
  users++
  return [claim('application:subject', `key-user-${users}`, 'Staff'), ...standardUser().filter((item) => item.type !== 'application:subject').map((item) => ({ ...item, issuer: 'Staff' })), ...extra]
}

/** `authTime` null: a sign-in that proved no authentication time. */
async function signInAs (app: FastifyInstance, claims: Claim[], authTime: number | null = Math.floor(Date.now() / 1000)): Promise<string> {
  const response = await app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims, scheme: 'Staff', ...(authTime === null ? {} : { authentication: { authTime } }) } })
  assert.equal(response.statusCode, 204)
  return cookieHeaderFrom(response)
}

interface Browser { cookie: string, token: string, page: LightMyRequestResponse }

/** Opens the key page as a browser does: the anti-forgery token of its forms and the cookie that goes with it. */
async function openPage (app: FastifyInstance, cookie: string, query = ''): Promise<Browser> {
  const page = await app.inject({ url: `/Account/ApiKeys${query}`, headers: { cookie } })
  assert.equal(page.statusCode, 200, page.body)
  const token = antiforgeryTokenIn(page.body)
  // A page without a form (no key, no recent sign-in): the token of the starter page's sign-out form.
  if (token === undefined) return { ...await antiforgeryFor(app, cookie), page }
  const secret = cookieHeaderFrom(page)
  return { cookie: secret === '' ? cookie : `${cookie}; ${secret}`, token, page }
}

type Fields = Array<[string, string]>

async function post (app: FastifyInstance, path: string, browser: Pick<Browser, 'cookie'> & { token?: string }, fields: Fields, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const form = new URLSearchParams([...(browser.token === undefined ? [] : [['__RequestVerificationToken', browser.token] as [string, string]]), ...fields])
  return await app.inject({ method: 'POST', url: `/Account/ApiKeys/${path}`, headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: form.toString() })
}

const secretIn = (body: string): string | undefined => /id="new-key"[^>]*value="([^"]+)"/.exec(body)?.[1]

describe('/Account/ApiKeys', () => {
  let t: TestApp

  before(async () => { t = await buildTestApp({ nodeEnv: 'Development', settings: SETTINGS as never, configure: registerStaff }) })
  after(async () => { await t?.app.close() })

  const create = async (browser: Browser, fields: Fields): Promise<LightMyRequestResponse> => await post(t.app, 'Create', browser, fields)
  const keysOf = async (browser: Browser): Promise<number> => (await openPage(t.app, browser.cookie)).page.body.match(/<tr data-key=/g)?.length ?? 0

  test('creating a key shows it once with Cache-Control: no-store; it works, the list shows its prefix and last characters, no log holds it', async () => {
    const browser = await openPage(t.app, await signInAs(t.app, userClaims()))
    assert.match(browser.page.body, /<input type="checkbox" id="scope-0" name="scopes" value="application.read">\n<label for="scope-0"><code>application.read<\/code> <span class="muted">Read the application<\/span><\/label>/)
    assert.match(browser.page.body, /<label for="key-lifetime">Lifetime in days<\/label>/)
    assert.equal(browser.page.headers['cache-control'], 'no-store')
    const created = await create(browser, [['scheme', 'Keys'], ['name', 'nightly export'], ['scopes', 'application.read'], ['lifetimeDays', '10']])
    assert.equal(created.statusCode, 201, created.body)
    assert.equal(created.headers['cache-control'], 'no-store')
    const secret = secretIn(created.body)
    assert.match(String(secret), /^acme_[0-9A-Za-z]{65}$/)
    const list = await openPage(t.app, browser.cookie)
    assert.ok(!list.page.body.includes(String(secret)), 'the list never shows the key again')
    assert.match(list.page.body, new RegExp(`<td>nightly export</td><td><code>acme_…${String(secret).slice(-4)}</code></td><td><code>application.read</code></td>`))
    assert.match(list.page.body, /<td>Never<\/td>/)
    assert.equal((await t.app.apiKeys?.scheme('Keys').authenticate(String(secret)))?.ok, true)
    assert.doesNotMatch((await openPage(t.app, browser.cookie)).page.body, /<td>Never<\/td>/, 'its last use is shown')
    assert.ok(!t.logs.text().includes(String(secret).slice(5)), 'a log line holds the key')
    assert.equal(t.logs.events('api_key.created').at(-1)?.scheme, 'Keys')
  })

  test('anonymous: the list and the forms get the sign-in challenge of every protected page', async () => {
    const sessions = await t.app.inject({ url: '/Account/Sessions' })
    for (const response of [await t.app.inject({ url: '/Account/ApiKeys' }), await post(t.app, 'Create', { cookie: '' }, [['name', 'x'], ['scopes', 'application.read']])]) {
      assert.equal(response.statusCode, 302)
      assert.equal(new URL(String(response.headers.location), 'http://localhost').origin, new URL(String(sessions.headers.location), 'http://localhost').origin)
    }
    assert.equal((await t.app.inject({ url: '/Account/ApiKeys', headers: { accept: 'application/json' } })).statusCode, 401)
  })

  test('an API key or a bearer token is refused 403 and audited, with or without a session; nothing is created', async () => {
    const browser = await openPage(t.app, await signInAs(t.app, userClaims()))
    const created = await create(browser, [['name', 'script'], ['scopes', 'application.read']])
    const key = String(secretIn(created.body))
    const presented: Array<Record<string, string>> = [{ authorization: `Bearer ${key}` }, { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' }, { 'x-api-key': key }]
    for (const headers of presented) {
      for (const cookie of ['', browser.cookie]) {
        const listed = await t.app.inject({ url: '/Account/ApiKeys', headers: { cookie, accept: 'application/json', ...headers } })
        assert.equal(listed.statusCode, 403)
        assert.equal(listed.json().code, 'APP_ERR_API_KEY_SESSION_REQUIRED')
        const refused = await post(t.app, 'Create', { cookie, token: browser.token }, [['name', 'minted'], ['scopes', 'application.read']], headers)
        assert.equal(refused.statusCode, 403)
        assert.equal(secretIn(refused.body), undefined)
      }
    }
    assert.equal(await keysOf(browser), 1)
    assert.deepEqual(t.logs.events('api_key.management_refused').slice(-2).map((line) => [line.action, line.code]), [['list', 'APP_ERR_API_KEY_SESSION_REQUIRED'], ['create', 'APP_ERR_API_KEY_SESSION_REQUIRED']])
  })

  test('a sign-in older than CreationMaxAgeSeconds gets the step-up challenge at its provider; nothing is created', async () => {
    for (const authTime of [Math.floor(Date.now() / 1000) - 3600, null]) {
      const browser = await openPage(t.app, await signInAs(t.app, userClaims(), authTime))
      assert.match(browser.page.body, /<a class="button" id="sign-in-again" href="\/Account\/ApiKeys\/Confirm\?scheme=Keys"/)
      assert.doesNotMatch(browser.page.body, /action="\/Account\/ApiKeys\/Create"/)
      const refused = await create(browser, [['scheme', 'Keys'], ['name', 'late'], ['scopes', 'application.read']])
      assert.equal(refused.statusCode, 302)
      const location = new URL(String(refused.headers.location))
      assert.equal(location.origin, IDP)
      assert.equal(location.searchParams.get('max_age'), '300')
      assert.equal(t.logs.events('api_key.management_refused').at(-1)?.code, 'APP_ERR_AUTH_STEP_UP_REQUIRED')
      const confirm = await t.app.inject({ url: '/Account/ApiKeys/Confirm?scheme=Keys', headers: { cookie: browser.cookie } })
      assert.equal(new URL(String(confirm.headers.location)).searchParams.get('max_age'), '300')
      assert.equal(await keysOf(browser), 0)
    }
    const fresh = await signInAs(t.app, userClaims())
    const confirmed = await t.app.inject({ url: '/Account/ApiKeys/Confirm?scheme=Keys', headers: { cookie: fresh } })
    assert.equal(confirmed.statusCode, 303)
    assert.equal(confirmed.headers.location, '/Account/ApiKeys?scheme=Keys#create-heading')
  })

  test('a body naming another owner is refused as a whole (400 naming the field), audited, and creates nothing', async () => {
    const browser = await openPage(t.app, await signInAs(t.app, userClaims()))
    for (const [field, value] of [['userId', 'someone-else'], ['ownerSubject', 'user-1'], ['tenant', 'tenant-b']]) {
      const refused = await create(browser, [['name', 'mine'], ['scopes', 'application.read'], [field, value]])
      assert.equal(refused.statusCode, 400)
      assert.match(refused.body, new RegExp(`<div class="alert" role="alert" id="form-problem"><p>The request has a field the form does not have \\(${field}\\)\\. No key was created\\.</p></div>`))
      assert.equal(secretIn(refused.body), undefined)
      const audit = t.logs.events('api_key.management_refused').at(-1)
      assert.deepEqual([audit?.action, audit?.code, audit?.field], ['create', 'APP_ERR_API_KEY_REQUEST_INVALID', field])
    }
    assert.equal(await keysOf(browser), 0)
  })

  const BAD_INPUT: Array<{ name: string, fields: Fields, field: string, message: RegExp }> = [
    { name: 'an empty name', fields: [['name', ' '], ['scopes', 'application.read']], field: 'key-name', message: /Name: enter 1 to 100 characters/ },
    { name: 'a name with a control character', fields: [['name', 'a\u0007b'], ['scopes', 'application.read']], field: 'key-name', message: /Name: / },
    { name: 'a name of 101 characters', fields: [['name', 'n'.repeat(101)], ['scopes', 'application.read']], field: 'key-name', message: /Name: / },
    { name: 'no scope', fields: [['name', 'k']], field: 'key-scopes', message: /Scopes: choose at least one/ },
    { name: 'an unknown scope', fields: [['name', 'k'], ['scopes', 'admin.everything']], field: 'key-scopes', message: /Scopes: / },
    { name: 'a scope the owner lacks', fields: [['name', 'k'], ['scopes', 'orders.write']], field: 'key-scopes', message: /Scopes: / },
    { name: 'a lifetime over the maximum', fields: [['name', 'k'], ['scopes', 'application.read'], ['lifetimeDays', '31']], field: 'key-lifetime', message: /Lifetime in days: enter a whole number from 1 to 30\./ },
    { name: 'a lifetime of 0', fields: [['name', 'k'], ['scopes', 'application.read'], ['lifetimeDays', '0']], field: 'key-lifetime', message: /Lifetime in days: / },
    { name: 'a lifetime that is no number', fields: [['name', 'k'], ['scopes', 'application.read'], ['lifetimeDays', '2.5']], field: 'key-lifetime', message: /Lifetime in days: / },
    { name: 'a tenant owner on a scheme for users only', fields: [['name', 'k'], ['scopes', 'application.read'], ['owner', 'tenant']], field: 'key-owner', message: /Owner: / }
  ]
  for (const entry of BAD_INPUT) {
    test(`${entry.name}: 400, the form shown again naming the field, nothing created`, async () => {
      const browser = await openPage(t.app, await signInAs(t.app, userClaims()))
      const refused = await create(browser, entry.fields)
      assert.equal(refused.statusCode, 400)
      assert.match(refused.body, entry.message)
      assert.match(refused.body, /action="\/Account\/ApiKeys\/Create"/)
      if (entry.field !== 'key-owner') assert.match(refused.body, new RegExp(`<a href="#${entry.field}">Go to the field</a>`))
      if (entry.field === 'key-name' || entry.field === 'key-lifetime') assert.match(refused.body, new RegExp(`id="${entry.field}"[^>]* aria-invalid="true" aria-describedby="form-problem"`))
      assert.equal(await keysOf(browser), 0)
    })
  }

  test('one key over MaxKeysPerOwner: 409 with the form and the limit', async () => {
    const browser = await openPage(t.app, await signInAs(t.app, userClaims()))
    for (const name of ['one', 'two']) assert.equal((await create(browser, [['name', name], ['scopes', 'application.read']])).statusCode, 201)
    const refused = await create(browser, [['name', 'three'], ['scopes', 'application.read']])
    assert.equal(refused.statusCode, 409)
    assert.match(refused.body, /This owner already holds the most active keys allowed \(2\)/)
    assert.match(refused.body, /value="three"/)
  })

  test('revoking: anti-forgery protected; the own key is revoked; another user\'s key id answers 404 like a missing one', async () => {
    const owner = await openPage(t.app, await signInAs(t.app, userClaims()))
    const key = String(secretIn((await create(owner, [['name', 'to revoke'], ['scopes', 'application.read']])).body))
    const keyId = /<tr data-key="([^"]+)"/.exec((await openPage(t.app, owner.cookie)).page.body)?.[1] as string
    const other = await openPage(t.app, await signInAs(t.app, userClaims()))
    const foreign = await post(t.app, 'Revoke', other, [['keyId', keyId]])
    const missing = await post(t.app, 'Revoke', other, [['keyId', '0123456789abcdef']])
    assert.equal(foreign.statusCode, 404)
    assert.equal(missing.statusCode, 404)
    assert.equal(t.logs.events('api_key.management_refused').at(-2)?.keyId, keyId)
    const forged = await post(t.app, 'Revoke', { cookie: owner.cookie }, [['keyId', keyId]])
    assert.equal(forged.statusCode, 400)
    assert.equal((await t.app.apiKeys?.scheme('Keys').authenticate(key))?.ok, true, 'still valid after the refusals')
    const revoked = await post(t.app, 'Revoke', owner, [['scheme', 'Keys'], ['keyId', keyId]])
    assert.equal(revoked.statusCode, 303)
    assert.equal(revoked.headers.location, '/Account/ApiKeys?scheme=Keys')
    assert.equal((await t.app.apiKeys?.scheme('Keys').authenticate(key))?.ok, false)
    assert.match((await openPage(t.app, owner.cookie)).page.body, /<td>Revoked<\/td><td><\/td>/)
    assert.equal(t.logs.events('api_key.revoked').at(-1)?.keyId, keyId)
  })

  test('creating without the anti-forgery token is refused (400) and creates nothing', async () => {
    const browser = await openPage(t.app, await signInAs(t.app, userClaims()))
    const refused = await post(t.app, 'Create', { cookie: browser.cookie }, [['name', 'forged'], ['scopes', 'application.read']])
    assert.equal(refused.statusCode, 400)
    assert.equal(await keysOf(browser), 0)
  })

  test('several schemes: `scheme` picks one (default the first), an unknown one is 404; a tenant\'s administrator lists and creates its keys', async () => {
    const admin = claim('application:role', 'Administrator', 'Staff')
    const tenant = claim('application:tenant', 'tenant-a', 'Staff')
    const first = await openPage(t.app, await signInAs(t.app, userClaims([tenant])))
    assert.match(first.page.body, /<a href="\/Account\/ApiKeys\?scheme=Keys" aria-current="page">Keys<\/a>/)
    assert.match(first.page.body, /<a href="\/Account\/ApiKeys\?scheme=Partner">Partner keys<\/a>/)
    assert.equal((await t.app.inject({ url: '/Account/ApiKeys?scheme=Nope', headers: { cookie: first.cookie } })).statusCode, 404)
    const member = await openPage(t.app, first.cookie, '?scheme=Partner')
    assert.doesNotMatch(member.page.body, /id="keys-tenant"|id="owner-tenant"/)
    const refused = await post(t.app, 'Create', member, [['scheme', 'Partner'], ['name', 'org'], ['scopes', 'application.read'], ['owner', 'tenant']])
    assert.equal(refused.statusCode, 302)
    assert.match(String(refused.headers.location), /^\/Account\/AccessDenied/)
    const administrator = await openPage(t.app, await signInAs(t.app, userClaims([tenant, admin])), '?scheme=Partner')
    assert.match(administrator.page.body, /<input type="radio" id="owner-tenant" name="owner" value="tenant">/)
    const created = await post(t.app, 'Create', administrator, [['scheme', 'Partner'], ['name', 'org integration'], ['scopes', 'application.read'], ['owner', 'tenant']])
    assert.equal(created.statusCode, 201, created.body)
    assert.match(String(secretIn(created.body)), /^partner_/)
    const another = await openPage(t.app, await signInAs(t.app, userClaims([tenant, admin])), '?scheme=Partner')
    assert.match(another.page.body, /<h2 id="keys-tenant">Your organisation&#39;s keys<\/h2>[\s\S]*<td>org integration<\/td>/)
    assert.equal(t.logs.events('api_key.created').at(-1)?.ownerKind, 'tenant')
  })
})

describe('/Account/ApiKeys without an enabled ApiKey scheme', () => {
  test('is no route: a signed-in user gets 404', async () => {
    const t = await buildTestApp({ nodeEnv: 'Development', settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } } as never })
    try {
      const cookie = await signInAs(t.app, userClaims())
      assert.equal((await t.app.inject({ url: '/Account/ApiKeys', headers: { cookie } })).statusCode, 404)
    } finally {
      await t.app.close()
    }
  })

  test('a TenantAdministratorPolicy that names no policy fails ready()', async () => {
    const settings = { Authentication: { Schemes: { Partner: { ...PARTNER, TenantAdministratorPolicy: 'orders.Admins' } } } }
    await assert.rejects(buildTestApp({ nodeEnv: 'Development', settings: settings as never }), {
      code: 'APP_ERR_API_KEY_POLICY_UNKNOWN',
      message: 'Setting ProjectTemplate:Authentication:Schemes:Partner:TenantAdministratorPolicy names the unknown authorization policy orders.Admins.'
    })
  })
})
