/**
 * A user with a large directory footprint (issue: "300 group claims whose names are about 37
 * characters long") signs in through a real OpenID Provider (oidc-provider on localhost) over real
 * HTTP with the default configuration, and every group comes back on `/`, normalized to
 * application:group and kept as the original `groups` claim. The session cookie stays small:
 * the ticket lives in the state store, the cookie only refers to it.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'

const CLIENT_ID = 'project-template-web'
const CLIENT_SECRET = 'oidc-client-secret-large-directory'
const GROUPS = Array.from({ length: 300 }, (_, index) => `group-number-${String(index).padStart(3, '0')}-of-a-large-directory`)

let idp: OidcIdp
let app: ListeningApp

before(async () => {
  ({ idp, app } = await startOidcPair({
    idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: { grace: { name: 'Grace Hopper', email: 'grace@example.test', groups: GROUPS } } },
    authentication: { DefaultChallengeScheme: 'OpenIdConnect' }
  }))
})

after(async () => {
  await app?.close()
  await idp?.close()
})

test('300 groups of 37 characters: sign-in succeeds and / shows every group, normalized and original', async () => {
  assert.equal(GROUPS[299], 'group-number-299-of-a-large-directory')
  assert.equal(GROUPS[299]?.length, 37)
  const session = new HttpSession()
  const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect&returnUrl=%2F`)
  assert.equal(start.response.status, 302)
  const callbackUrl = await throughIdpLogin(session, start.location!, app.origin, 'grace')
  const callback = await session.request(callbackUrl)
  assert.equal(callback.response.status, 302)
  assert.equal(callback.location?.pathname, '/', `signed in (failures logged: ${JSON.stringify(app.logs.events('external.sign_in.failed'))})`)
  const cookies = sessionCookiesSet(callback.response)
  assert.equal(cookies.length, 1, 'one session cookie, no chunks')
  assert.ok((cookies[0] ?? '').length < 400, `the cookie is a reference, not the ticket (${(cookies[0] ?? '').length} characters)`)

  const home = await session.request(`${app.origin}/`)
  assert.equal(home.response.status, 200)
  for (const group of GROUPS) {
    assert.ok(home.body.includes(`<tr><td>application:group</td><td>${group}</td>`), `${group} normalized`)
    assert.ok(home.body.includes(`<tr><td>groups</td><td>${group}</td>`), `${group} kept as the original claim`)
  }
  assert.equal(app.logs.events('external.sign_in.failed').length, 0)
})
