/**
 * OpenID Connect against a real OpenID Provider (oidc-provider on localhost) over real HTTP: the
 * authorization code flow with PKCE, state and nonce, userinfo merged, claims normalized, the
 * administrator policy decided by the provider's role claim, and the callback refusing every
 * flow it cannot correlate (no session cookie set). No log line carries the client secret, an
 * authorization code or a token.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { findPlanted, HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { storedSession } from '../helpers/app.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'

const CLIENT_ID = 'project-template-web'
const CLIENT_SECRET = 'oidc-client-secret-PLANTED-9c41e7'
const SESSION_COOKIE = '__Host-ProjectTemplate.Web.Authentication'

let idp: OidcIdp
let app: ListeningApp

before(async () => {
  ({ idp, app } = await startOidcPair({
    idp: {
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      accounts: {
        ada: { name: 'Ada Lovelace', email: 'ada@example.test', roles: ['Administrator', 'Reader'] },
        bob: { name: 'Bob Reader', email: 'bob@example.test', roles: ['Reader'] }
      }
    },
    authentication: { DefaultChallengeScheme: 'OpenIdConnect' }
  }))
})

after(async () => {
  await app?.close()
  await idp?.close()
})

function formOf (html: string): { action: string, prompt: string } {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
  const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1]
  assert.ok(action !== undefined && prompt !== undefined, 'the IdP page has an interaction form')
  return { action: action.replace(/&amp;/g, '&'), prompt }
}

/**
 * Drives the IdP (login, consent) from the challenge's redirect until the IdP sends the browser
 * back to the app's callback; returns the callback URL without requesting it.
 */
async function throughIdp (session: HttpSession, start: URL, login: string): Promise<URL> {
  let exchange = await session.request(start)
  for (let step = 0; step < 20; step++) {
    const next = exchange.location
    if (next !== undefined) {
      if (next.origin === app.origin) return next
      exchange = await session.request(next)
      continue
    }
    assert.equal(exchange.response.status, 200, `IdP answered ${exchange.response.status} at ${exchange.url.pathname}`)
    const form = formOf(exchange.body)
    const fields: Record<string, string> = form.prompt === 'login' ? { prompt: 'login', login, password: 'any-password' } : { prompt: form.prompt }
    exchange = await session.request(new URL(form.action, exchange.url), { method: 'POST', form: fields })
  }
  throw new Error('the IdP did not redirect back to the app')
}

async function challenge (session: HttpSession, returnUrl = '/'): Promise<Exchange> {
  const exchange = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect&returnUrl=${encodeURIComponent(returnUrl)}`)
  assert.equal(exchange.response.status, 302)
  assert.ok(exchange.location !== undefined && exchange.location.origin === idp.issuer)
  return exchange
}

async function signIn (login: string, returnUrl = '/'): Promise<{ session: HttpSession, callback: Exchange }> {
  const session = new HttpSession()
  const start = await challenge(session, returnUrl)
  const callbackUrl = await throughIdp(session, start.location!, login)
  const callback = await session.request(callbackUrl)
  return { session, callback }
}

function assertNoSecretsLogged (): void {
  assert.deepEqual(findPlanted(app.logs.text(), [CLIENT_SECRET, ...idp.issuedCodes, ...idp.issuedTokens]), [])
}

function failures (): Array<Record<string, unknown>> {
  return app.logs.events('external.sign_in.failed')
}

describe('OpenID Connect against oidc-provider', () => {
  test('the authorization request uses code, PKCE S256, state, nonce, the configured scopes and the callback URL', async () => {
    const session = new HttpSession()
    const { location } = await challenge(session)
    const query = location!.searchParams
    assert.equal(query.get('response_type'), 'code')
    assert.equal(query.get('client_id'), CLIENT_ID)
    assert.equal(query.get('redirect_uri'), `${app.origin}/signin-oidc`)
    assert.equal(query.get('scope'), 'openid profile email')
    assert.equal(query.get('code_challenge_method'), 'S256')
    assert.match(query.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/)
    assert.match(query.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/)
    const state = query.get('state') ?? ''
    assert.match(state, /^[A-Za-z0-9_-]{22}$/)
    assert.equal(session.jar.names(new URL(app.origin)).filter((name) => /^__Host-ProjectTemplate\.Correlation\.[0-3]$/.test(name)).length, 1, 'one correlation cookie, in a slot')
  })

  test('an administrator signs in: claims normalized from ID token and userinfo, admin route allowed, tokens not saved', async () => {
    const { session, callback } = await signIn('ada', '/api/application-information/administration')
    assert.equal(callback.response.status, 302)
    assert.equal(callback.location?.pathname, '/api/application-information/administration')
    assert.equal(sessionCookiesSet(callback.response).length, 1)

    const home = await session.request(`${app.origin}/`)
    assert.equal(home.response.status, 200)
    for (const row of [
      ['application:subject', 'ada'], ['application:name', 'Ada Lovelace'], ['application:email', 'ada@example.test'],
      ['application:role', 'Administrator'], ['application:role', 'Reader'], ['sub', 'ada']
    ]) {
      assert.ok(home.body.includes(`<tr><td>${row[0]}</td><td>${row[1]}</td><td>${idp.issuer}</td></tr>`), `claim ${row.join('=')} shown`)
    }
    assert.ok(!home.body.includes('<td>nonce</td>') && !home.body.includes('<td>aud</td>'), 'protocol claims are not user claims')

    const admin = await session.request(`${app.origin}/api/application-information/administration`)
    assert.equal(admin.response.status, 200)
    assert.deepEqual(JSON.parse(admin.body), { subject: 'ada', name: 'Ada Lovelace' })

    const ticket = await storedSession(app.app, app.keyRing, session.jar.get(new URL(app.origin), SESSION_COOKIE) ?? '')
    assert.equal(ticket?.scheme, 'OpenIdConnect')
    assert.equal(ticket?.tokens, undefined, 'SaveTokens false keeps tokens out of the ticket')
    assert.equal(app.logs.events('external.sign_in.succeeded').at(-1)?.provider, 'OpenIdConnect')
    assertNoSecretsLogged()
  })

  test('a user whose provider role is not Administrator is denied the administration route (403)', async () => {
    const { session, callback } = await signIn('bob')
    assert.equal(callback.location?.pathname, '/')
    // An API call gets problem+json; a page navigation is redirected to AccessDenied.
    const denied = await session.request(`${app.origin}/api/application-information/administration`, { accept: 'application/json' })
    assert.equal(denied.response.status, 403)
    assert.equal(JSON.parse(denied.body).code, 'APP_ERR_AUTH_FORBIDDEN')
    const navigation = await session.request(`${app.origin}/api/application-information/administration`)
    assert.equal(navigation.response.status, 302)
    assert.equal(navigation.location?.pathname, '/Account/AccessDenied')
    const page = await session.request(navigation.location!)
    assert.equal(page.response.status, 403)
    assert.match(page.body, /Signed in as Bob Reader/)
    assert.match(page.body, /Access denied/)
    assertNoSecretsLogged()
  })

  test('an anonymous page request is challenged straight to the provider and returns to the original URL', async () => {
    const session = new HttpSession()
    const protectedPage = await session.request(`${app.origin}/?x=1`)
    assert.equal(protectedPage.response.status, 302)
    assert.equal(protectedPage.location?.origin, idp.issuer)
    const callbackUrl = await throughIdp(session, protectedPage.location!, 'bob')
    const callback = await session.request(callbackUrl)
    assert.equal(callback.location?.href, `${app.origin}/?x=1`)
  })

  test('a replayed callback (copied correlation cookie) is refused without a session', async () => {
    const session = new HttpSession()
    const start = await challenge(session)
    const callbackUrl = await throughIdp(session, start.location!, 'ada')
    const copied = session.jar.header(new URL(app.origin))
    const first = await session.request(callbackUrl)
    assert.equal(sessionCookiesSet(first.response).length, 1)

    const replay = await fetch(callbackUrl, { headers: { cookie: copied }, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
    assert.equal(replay.status, 302)
    assert.deepEqual(sessionCookiesSet(replay), [])
    assert.equal(replay.headers.get('location'), '/Account/Login?failure=correlation')
    assert.equal(failures().at(-1)?.failure, 'replay')
    assertNoSecretsLogged()
  })

  const correlationCases: Array<{ name: string, tamper: (session: HttpSession, callbackUrl: URL) => URL }> = [
    {
      name: 'a wrong state',
      tamper: (_session, url) => {
        const wrong = new URL(url)
        wrong.searchParams.set('state', 'AAAAAAAAAAAAAAAAAAAAAA')
        return wrong
      }
    },
    {
      name: 'a missing correlation cookie',
      tamper: (session, url) => {
        for (const name of session.jar.names(new URL(app.origin)).filter((name) => name.startsWith('__Host-ProjectTemplate.Correlation.'))) session.jar.delete(new URL(app.origin), name)
        return url
      }
    }
  ]
  for (const { name, tamper } of correlationCases) {
    test(`a callback with ${name} is refused as correlation without a session`, async () => {
      const session = new HttpSession()
      const start = await challenge(session)
      const callbackUrl = await throughIdp(session, start.location!, 'ada')
      const callback = await session.request(tamper(session, callbackUrl))
      assert.equal(callback.response.status, 302)
      assert.deepEqual(sessionCookiesSet(callback.response), [])
      assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=correlation')
      assert.deepEqual(failures().at(-1), { ...failures().at(-1), provider: 'OpenIdConnect', failure: 'correlation' })
      const login = await session.request(callback.location!)
      assert.match(login.body, /could not be matched/)
      assertNoSecretsLogged()
    })
  }

  test('the provider reporting access_denied is logged as cancelled and shows the cancel message', async () => {
    const session = new HttpSession()
    const start = await challenge(session)
    const state = start.location!.searchParams.get('state') ?? ''
    const callback = await session.request(`${app.origin}/signin-oidc?error=access_denied&state=${state}`)
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    assert.equal(callback.location?.search, '?failure=cancelled')
    assert.equal(failures().at(-1)?.failure, 'cancelled')
    assert.ok(!session.jar.names(new URL(app.origin)).some((name) => name.includes('Correlation')), 'the correlation cookie is deleted')
  })

  test('health is ready and the login page offers the provider', async () => {
    const ready = await fetch(`${app.origin}/health/ready`)
    assert.equal(ready.status, 200)
    const login = await (await fetch(`${app.origin}/Account/Login`)).text()
    assert.match(login, /<a class="provider" data-provider="OpenIdConnect" href="\/External\/Challenge\?provider=OpenIdConnect">OpenID Connect<\/a>/)
    assert.deepEqual(app.logs.events('external.metadata.loaded').map((record) => record.provider), ['OpenIdConnect'])
    assertNoSecretsLogged()
  })
})
