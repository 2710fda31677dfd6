/**
 * ResponseMode form_post over real HTTP against oidc-provider: the authorization request asks for
 * response_mode=form_post, the provider's auto-submitting page POSTs code and state to
 * CallbackPath and the sign-in completes; the GET callback is not a route in that mode; a POST
 * without the flow's correlation cookie, a replayed POST, a repeated parameter and an error
 * response each create no session and log the failure class; nothing secret is logged.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { findPlanted, HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'

const SECRET = 'form-post-secret-PLANTED-84'
const CLIENT_ID = 'form-post-client'

let idp: OidcIdp
let app: ListeningApp

before(async () => {
  ({ idp, app } = await startOidcPair({ idp: { clientId: CLIENT_ID, clientSecret: SECRET, accounts: { ada: { name: 'Ada Lovelace' } } }, openIdConnect: { ResponseMode: 'form_post' } }))
})
after(async () => {
  await app?.close()
  await idp?.close()
})

function hiddenFields (html: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)) fields[match[1] ?? ''] = (match[2] ?? '').replaceAll('&amp;', '&')
  return fields
}

/** Through the provider's login and consent to its form_post page: the action and the fields, not yet posted. */
async function toFormPost (session: HttpSession, start: URL): Promise<{ action: URL, fields: Record<string, string> }> {
  let exchange: Exchange = await session.request(start)
  for (let step = 0; step < 20; step++) {
    if (exchange.location !== undefined) {
      exchange = await session.request(exchange.location)
      continue
    }
    const postTo = /<form method="post" action="([^"]+)">/.exec(exchange.body)?.[1]
    if (postTo !== undefined) return { action: new URL(postTo.replaceAll('&amp;', '&')), fields: hiddenFields(exchange.body) }
    const prompt = /name="prompt" value="([a-z]+)"/.exec(exchange.body)?.[1]
    const action = /<form[^>]*action="([^"]+)"/.exec(exchange.body)?.[1]
    assert.ok(prompt !== undefined && action !== undefined, `an interaction form (status ${exchange.response.status})`)
    exchange = await session.request(new URL(action.replaceAll('&amp;', '&'), exchange.url), { method: 'POST', form: prompt === 'login' ? { prompt, login: 'ada', password: 'any-password' } : { prompt } })
  }
  throw new Error('the IdP did not answer with its form_post page')
}

async function challenge (session: HttpSession): Promise<URL> {
  const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.location?.searchParams.get('response_mode'), 'form_post')
  return start.location!
}

const lastFailure = (): unknown => app.logs.events('external.sign_in.failed').at(-1)?.failure

describe('ResponseMode form_post', () => {
  test('the provider POSTs code and state to the callback and the sign-in completes', async () => {
    const session = new HttpSession()
    const { action, fields } = await toFormPost(session, await challenge(session))
    assert.equal(`${action.origin}${action.pathname}`, `${app.origin}/signin-oidc`)
    assert.ok(fields.code !== undefined && fields.state !== undefined)
    const callback = await session.request(action, { method: 'POST', form: fields })
    assert.equal(callback.response.status, 302)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.equal((await session.request(`${app.origin}/api/application-information`, { accept: 'application/json' })).response.status, 200)
  })

  test('a form_post sign-in ends the session the browser had, though the cross-site POST carries no Lax session cookie (issue 26, item 6)', async () => {
    const session = new HttpSession()
    const origin = new URL(app.origin)
    const first = await toFormPost(session, await challenge(session))
    assert.equal((await session.request(first.action, { method: 'POST', form: first.fields })).location?.pathname, '/')
    const sessionNames = session.jar.names(origin).filter((name) => name.includes('.Web.Authentication'))
    assert.equal(sessionNames.length, 1)
    const previous = `${sessionNames[0]}=${session.jar.get(origin, sessionNames[0]!)}`
    // The challenge is a top-level navigation of the app's own site: it carries the session cookie.
    const second = await toFormPost(session, await challenge(session))
    // The provider's page POSTs from another site: a browser leaves the SameSite=Lax cookie out.
    session.jar.delete(origin, sessionNames[0]!)
    const callback = await session.request(second.action, { method: 'POST', form: second.fields })
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const stale = await fetch(`${app.origin}/api/application-information`, { headers: { cookie: previous, accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
    await stale.arrayBuffer()
    assert.equal(stale.status, 401, 'the previous session has ended')
    assert.equal((await session.request(`${app.origin}/api/application-information`, { accept: 'application/json' })).response.status, 200)
  })

  test('GET is not the callback in form_post mode', async () => {
    const session = new HttpSession()
    await challenge(session)
    const before = app.logs.events('external.sign_in.succeeded').length
    const get = await session.request(`${app.origin}/signin-oidc?code=abc&state=def`)
    assert.deepEqual(sessionCookiesSet(get.response), [])
    assert.notEqual(get.location?.pathname, '/')
    assert.equal(app.logs.events('external.sign_in.succeeded').length, before)
  })

  test('without the correlation cookie, replayed, with a repeated parameter, or an error: no session', async () => {
    // Another browser posts a response it did not start.
    const victim = new HttpSession()
    const stolen = await toFormPost(victim, await challenge(victim))
    const attacker = new HttpSession()
    const foreign = await attacker.request(stolen.action, { method: 'POST', form: stolen.fields })
    assert.deepEqual(sessionCookiesSet(foreign.response), [])
    assert.equal(foreign.location?.pathname, '/Account/Login')
    assert.equal(lastFailure(), 'correlation')

    // The same POST twice, the second with a copy of the cookies the first carried: a replay.
    const copied = victim.jar.header(stolen.action)
    const first = await victim.request(stolen.action, { method: 'POST', form: stolen.fields })
    assert.equal(sessionCookiesSet(first.response).length, 1)
    const replayed = await fetch(stolen.action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: copied },
      body: new URLSearchParams(stolen.fields)
    })
    assert.deepEqual(sessionCookiesSet(replayed), [])
    assert.equal(lastFailure(), 'replay')

    // A repeated parameter is refused, not resolved.
    const repeated = new HttpSession()
    const flow = await toFormPost(repeated, await challenge(repeated))
    const body = `${new URLSearchParams(flow.fields).toString()}&code=second-code-value`
    const twice = await fetch(flow.action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: repeated.jar.header(flow.action) },
      body
    })
    assert.deepEqual(sessionCookiesSet(twice), [])
    assert.equal(lastFailure(), 'provider_error')

    // An error response (the user cancelled at the provider).
    const cancelled = new HttpSession()
    const start = await challenge(cancelled)
    const state = start.searchParams.get('state') ?? ''
    const denied = await cancelled.request(`${app.origin}/signin-oidc`, { method: 'POST', form: { error: 'access_denied', state } })
    assert.deepEqual(sessionCookiesSet(denied.response), [])
    assert.equal(denied.location?.search, '?failure=cancelled')
    assert.equal(lastFailure(), 'cancelled')

    assert.deepEqual(findPlanted(app.logs.text(), [SECRET, ...idp.issuedCodes, ...idp.issuedTokenResponseValues]), [])
  })
})
