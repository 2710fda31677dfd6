/**
 * Diagnosable OpenID Connect failures (issue 12), against a real oidc-provider and real sockets
 * on loopback:
 * - a wrong client secret sent as Basic credentials (set explicitly: with the setting unset, a
 *   secret with `-` goes in the form body, client-authentication.test.ts): the token endpoint's
 *   401 challenge is a `token` failure whose log line
 *   carries the OAuth error code (invalid_client) and the status; no session, the safe page;
 * - discovery that cannot connect (ECONNREFUSED) or meets an untrusted certificate
 *   (DEPTH_ZERO_SELF_SIGNED_CERT): the log line names the discovery URL and the cause code;
 *   readiness and the login page say unavailable.
 * No log line holds the client secret, a code or a token.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { networkCauseCode, urlForLog } from '../../src/http/outbound-diagnostics.js'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { waitFor } from '../helpers/wait.js'
import { closedPort } from '../helpers/ports.js'

const CLIENT_ID = 'diagnostics-client'
const RIGHT_SECRET = 'right-secret-PLANTED-5b1c'
const WRONG_SECRET = 'wrong-secret-PLANTED-0f7e'

describe('a wrong client secret', () => {
  let idp: OidcIdp
  let app: ListeningApp
  before(async () => {
    ({ idp, app } = await startOidcPair({ idp: { clientId: CLIENT_ID, clientSecret: RIGHT_SECRET, accounts: { ada: { name: 'Ada' } } }, openIdConnect: { ClientSecret: WRONG_SECRET, TokenEndpointAuthMethod: 'client_secret_basic' } }))
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  test('is a token failure logged with invalid_client and HTTP 401; no session, the safe page, no secret', async () => {
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    let exchange = await session.request(start.location!)
    let callbackUrl: URL | undefined
    for (let step = 0; step < 20 && callbackUrl === undefined; step++) {
      const next = exchange.location
      if (next !== undefined) {
        if (next.origin === app.origin) callbackUrl = next
        else exchange = await session.request(next)
        continue
      }
      const action = /<form[^>]*action="([^"]+)"/.exec(exchange.body)?.[1]?.replace(/&amp;/g, '&')
      const prompt = /name="prompt" value="([a-z]+)"/.exec(exchange.body)?.[1]
      assert.ok(action !== undefined && prompt !== undefined)
      exchange = await session.request(new URL(action, exchange.url), { method: 'POST', form: prompt === 'login' ? { prompt, login: 'ada', password: 'x' } : { prompt } })
    }
    assert.ok(callbackUrl !== undefined)
    const callback = await session.request(callbackUrl)
    assert.equal(callback.response.status, 302)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    const line = app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'token')
    assert.equal(line?.oauthError, 'invalid_client')
    assert.equal(line?.httpStatus, 401)
    assert.equal(line?.errorCode, 'OAUTH_WWW_AUTHENTICATE_CHALLENGE')
    const page = await session.request(callback.location!)
    assert.equal(page.response.status, 200)
    assert.deepEqual(findPlanted(app.logs.text() + page.body, [RIGHT_SECRET, WRONG_SECRET, ...idp.issuedCodes, ...idp.issuedTokenResponseValues]), [])
  })
})

describe('discovery failures name the URL and the cause code', () => {
  let refusedApp: ListeningApp
  let tlsApp: ListeningApp
  let tlsServer: HttpsServer
  let refusedPort: number
  let tlsPort: number
  before(async () => {
    refusedPort = await closedPort()
    const key = createSigningKey('untrusted-idp')
    tlsServer = createHttpsServer({ key: key.privateKeyPem, cert: key.certificatePem }, (_request, response) => { response.writeHead(200).end('{}') })
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve))
    tlsPort = (tlsServer.address() as AddressInfo).port
    const settings = (authority: string) => ({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: authority, ClientId: CLIENT_ID, ClientSecret: RIGHT_SECRET } } } })
    refusedApp = await startProviderApp(settings(`http://127.0.0.1:${refusedPort}/realms/staff`))
    tlsApp = await startProviderApp(settings(`https://127.0.0.1:${tlsPort}`))
  })
  after(async () => {
    await refusedApp?.close()
    await tlsApp?.close()
    tlsServer?.closeAllConnections()
    await new Promise<void>((resolve) => tlsServer?.close(() => { resolve() }) ?? resolve())
  })

  const cases = [
    { name: 'a closed port', app: () => refusedApp, url: () => `http://127.0.0.1:${refusedPort}/realms/staff/.well-known/openid-configuration`, causeCode: 'ECONNREFUSED' },
    { name: 'a self-signed certificate', app: () => tlsApp, url: () => `https://127.0.0.1:${tlsPort}/.well-known/openid-configuration`, causeCode: 'DEPTH_ZERO_SELF_SIGNED_CERT' }
  ]
  for (const row of cases) {
    test(`${row.name}: metadata_unreachable with the discovery URL and ${row.causeCode}; not ready; unavailable on the login page`, async () => {
      const app = row.app()
      await waitFor(() => app.logs.events('external.metadata.failed').length > 0, 'metadata failure', 10_000)
      const line = app.logs.events('external.metadata.failed')[0]!
      assert.equal(line.reason, 'metadata_unreachable')
      assert.equal(line.url, row.url())
      assert.equal(line.causeCode, row.causeCode)
      const ready = await fetch(`${app.origin}/health/ready`)
      assert.equal(ready.status, 503)
      assert.match(await ready.text(), /metadata_unreachable/)
      const login = await (await fetch(`${app.origin}/Account/Login`)).text()
      assert.match(login, /unavailable/i)
      assert.ok(!app.logs.text().includes(RIGHT_SECRET))
    })
  }
})

test('the cause code is read along the cause chain; the logged URL has no credentials, query or fragment', () => {
  const dns = new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND idp.example'), { code: 'ENOTFOUND' }) })
  assert.equal(networkCauseCode(dns), 'ENOTFOUND')
  const tls = new TypeError('fetch failed', { cause: Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }) })
  assert.equal(networkCauseCode(tls), 'CERT_HAS_EXPIRED')
  assert.equal(networkCauseCode(new DOMException('timed out', 'TimeoutError')), 'TIMEOUT')
  assert.equal(networkCauseCode(new Error('plain')), undefined)
  assert.equal(urlForLog('https://user:PLANTED@idp.example:8443/realms/x/.well-known/openid-configuration?tenant=PLANTED#f'), 'https://idp.example:8443/realms/x/.well-known/openid-configuration')
})
