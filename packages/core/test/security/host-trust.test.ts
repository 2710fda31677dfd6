/**
 * Host and origin trust (issue 13): every absolute URL (OAuth redirect_uri, SAML
 * AssertionConsumerServiceURL, SP metadata Location) comes from Hosting:PublicOrigin, never from
 * the request; requests for other hosts answer 400 and name nothing they sent; a SAML response
 * addressed to another deployment's ACS is refused even when posted with that deployment's Host;
 * an X-Forwarded-Proto other than http/https from a trusted proxy is refused; a malformed Host
 * never produces a 5xx, including at a real OpenID Connect callback.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, cookieHeaderFrom, type TestApp } from '../helpers/app.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { readAuthnRequest, TestIdentityProvider } from '../helpers/saml2/identity-provider.js'

const ORIGIN = 'https://app.example.test'
const EVIL = 'evil.example'
const VENDOR_A = {
  Enabled: true,
  ClientId: 'vendor-client',
  ClientSecret: 'vendor-secret',
  AuthorizationEndpoint: 'https://vendor.example.test/authorize',
  TokenEndpoint: 'https://vendor.example.test/token',
  UserInformationEndpoint: 'https://vendor.example.test/user'
}

/** Every header value and the body, for "names nothing it was sent". */
function everything (response: LightMyRequestResponse): string {
  return `${JSON.stringify(response.headers)}\n${response.body}`
}

function assertRefused (response: LightMyRequestResponse, label: string, sent: string): void {
  assert.equal(response.statusCode, 400, label)
  assert.ok(!everything(response).includes(sent), `${label}: the response names what was sent`)
}

describe('a configured public origin (Production)', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({
      testSignIn: false,
      settings: {
        Hosting: { PublicOrigin: ORIGIN, AllowedHosts: ['alias.example.test'] },
        Authentication: {
          Providers: {
            VendorA: VENDOR_A,
            Saml2: {
              Enabled: true,
              EntityId: `${ORIGIN}/sp`,
              LoadMetadata: false,
              IdpEntityId: 'https://idp.example.test',
              IdpSingleSignOnUrl: 'https://idp.example.test/sso',
              IdpSigningCertificates: [createSigningKey('host-trust-idp').certificateBase64]
            }
          }
        }
      }
    })
  })
  after(async () => { await t.app.close() })

  const requests: ReadonlyArray<{ method: 'GET' | 'POST', url: string }> = [
    { method: 'GET', url: '/External/Challenge?provider=VendorA&returnUrl=%2F' },
    { method: 'GET', url: '/External/Challenge?provider=Saml2&returnUrl=%2F' },
    { method: 'GET', url: '/Saml2/Metadata' },
    { method: 'POST', url: '/Saml2/Acs' },
    { method: 'GET', url: '/signin-vendora?state=x&code=y' },
    { method: 'GET', url: '/Account/Login' },
    { method: 'GET', url: '/' },
    { method: 'GET', url: '/api/application-information' },
    { method: 'GET', url: '/css/site.css' },
    { method: 'GET', url: '/no-such-page' }
  ]

  test('with Host: evil.example every route answers 400 and nothing names evil.example', async () => {
    for (const { method, url } of requests) {
      for (const headers of [{ host: EVIL }, { host: `${EVIL}:443` }, { host: 'APP.EXAMPLE.TEST.evil.example' }]) {
        const response = await t.app.inject({ method, url, headers: { ...headers, accept: 'text/html' } })
        assertRefused(response, `${method} ${url} ${headers.host}`, 'evil.example')
      }
      const json = await t.app.inject({ method, url, headers: { host: EVIL, accept: 'application/json' } })
      assertRefused(json, `${method} ${url} (json)`, EVIL)
      assert.equal(json.json().code, 'APP_ERR_HOST_NOT_ALLOWED')
    }
    const refusals = t.logs.events('request.host_refused')
    assert.ok(refusals.length >= requests.length)
    // The operator's log names the well-formed host name received (lower-case, no port) and the settings.
    assert.deepEqual(new Set(refusals.map((record) => record.host)), new Set([EVIL, 'app.example.test.evil.example']))
    for (const record of refusals) assert.deepEqual(record.settings, ['ProjectTemplate:Hosting:PublicOrigin', 'ProjectTemplate:Hosting:AllowedHosts'])
  })

  test('health probes answer for any well-formed host (orchestrators address them by IP)', async () => {
    const response = await t.app.inject({ url: '/health/live', headers: { host: '10.1.2.3:5000' } })
    assert.equal(response.statusCode, 200)
  })

  for (const host of ['app.example.test', 'APP.example.test:443', 'alias.example.test']) {
    test(`with Host: ${host}, every absolute URL names the public origin`, async () => {
      const vendor = await t.app.inject({ url: '/External/Challenge?provider=VendorA&returnUrl=%2F', headers: { host } })
      assert.equal(vendor.statusCode, 302)
      assert.equal(new URL(String(vendor.headers.location)).searchParams.get('redirect_uri'), `${ORIGIN}/signin-vendora`)
      const saml = await t.app.inject({ url: '/External/Challenge?provider=Saml2&returnUrl=%2F', headers: { host } })
      assert.equal(saml.statusCode, 302)
      assert.equal(readAuthnRequest(String(saml.headers.location)).acsUrl, `${ORIGIN}/Saml2/Acs`)
      const metadata = await t.app.inject({ url: '/Saml2/Metadata', headers: { host } })
      assert.equal(metadata.statusCode, 200)
      const locations = [...metadata.body.matchAll(/Location="([^"]*)"/g)].map((match) => match[1])
      assert.deepEqual(locations, [`${ORIGIN}/Saml2/Acs`])
    })
  }

  test('X-Forwarded-Host and X-Forwarded-Proto from an untrusted client are ignored', async () => {
    const response = await t.app.inject({
      url: '/External/Challenge?provider=VendorA&returnUrl=%2F',
      headers: { host: 'app.example.test', 'x-forwarded-host': EVIL, 'x-forwarded-proto': 'javascript' }
    })
    assert.equal(response.statusCode, 302)
    assert.ok(!everything(response).includes(EVIL))
    assert.ok(!everything(response).includes('javascript'))
  })
})

describe('forwarded headers from a trusted proxy', () => {
  const build = async (settings: Record<string, unknown>, nodeEnv = 'development'): Promise<TestApp> => await buildTestApp({
    nodeEnv,
    testSignIn: false,
    settings: {
      ForwardedHeaders: { Enabled: true, KnownProxies: ['127.0.0.1'] },
      Authentication: { Providers: { VendorA: VENDOR_A } },
      ...settings
    } as never
  })

  test('X-Forwarded-Proto other than http/https is refused with 400; https is used', async () => {
    const t = await build({})
    try {
      for (const proto of ['javascript', 'https, javascript', 'HTTPS', 'ftp', 'http:', '']) {
        const response = await t.app.inject({
          url: '/External/Challenge?provider=VendorA&returnUrl=%2F',
          headers: { host: 'app.local:8443', 'x-forwarded-proto': proto }
        })
        if (proto === '') {
          // An empty header is no header: the connection's own scheme.
          assert.equal(response.statusCode, 302)
          continue
        }
        assertRefused(response, `X-Forwarded-Proto: ${proto}`, proto === 'HTTPS' ? 'HTTPS' : proto.replace('https, ', ''))
      }
      const https = await t.app.inject({ url: '/External/Challenge?provider=VendorA&returnUrl=%2F', headers: { host: 'app.local:8443', 'x-forwarded-proto': 'https' } })
      assert.equal(new URL(String(https.headers.location)).searchParams.get('redirect_uri'), 'https://app.local:8443/signin-vendora')
    } finally { await t.app.close() }
  })

  test('a proxy that is not listed is not trusted: its X-Forwarded-Proto is ignored', async () => {
    const t = await build({ ForwardedHeaders: { Enabled: true, KnownProxies: ['10.9.9.9'] } })
    try {
      const response = await t.app.inject({ url: '/External/Challenge?provider=VendorA&returnUrl=%2F', headers: { host: 'app.local', 'x-forwarded-proto': 'javascript' } })
      assert.equal(response.statusCode, 302)
      assert.equal(new URL(String(response.headers.location)).searchParams.get('redirect_uri'), 'http://app.local/signin-vendora')
    } finally { await t.app.close() }
  })

  test('with a public origin, a trusted X-Forwarded-Host for another host is refused', async () => {
    const t = await build({ Hosting: { PublicOrigin: ORIGIN } }, 'production')
    try {
      assertRefused(await t.app.inject({ url: '/Account/Login', headers: { host: 'app.example.test', 'x-forwarded-host': EVIL, 'x-forwarded-proto': 'https' } }), 'forwarded evil host', EVIL)
      const ok = await t.app.inject({ url: '/Account/Login', headers: { host: '10.0.0.5:5000', 'x-forwarded-host': 'app.example.test', 'x-forwarded-proto': 'https' } })
      assert.equal(ok.statusCode, 200)
    } finally { await t.app.close() }
  })
})

describe('malformed Host headers (Development, no public origin: the request host is used)', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ nodeEnv: 'development', testSignIn: false, settings: { Authentication: { Providers: { VendorA: VENDOR_A } } } })
  })
  after(async () => { await t.app.close() })

  const hosts = ['a b', 'evil.example/path', 'user@evil.example', 'x:y:z', '[::1', '[zz::1]:80', 'a..b', '<script>x</script>', 'evil.example\\', '...x', '-a.example', 'a.example:port', 'é.example']
  const urls = ['/', '/Account/Login', '/External/Challenge?provider=VendorA&returnUrl=%2F', '/signin-vendora?state=x&code=y', '/health', '/css/site.css', '/nope']

  test('every malformed host answers 400 (never 5xx) on every route, without echoing it', async () => {
    for (const host of hosts) {
      for (const url of urls) {
        const response = await t.app.inject({ url, headers: { host } })
        assertRefused(response, `${url} with Host ${JSON.stringify(host)}`, host)
      }
    }
  })

  test('control: well-formed hosts (names, ports, IPv4, IPv6, underscores) are served', async () => {
    for (const host of ['localhost', 'app.local:8080', '127.0.0.1:5000', '[::1]:5000', 'my_service:5000']) {
      const response = await t.app.inject({ url: '/External/Challenge?provider=VendorA&returnUrl=%2F', headers: { host } })
      assert.equal(response.statusCode, 302, host)
      assert.equal(new URL(String(response.headers.location)).searchParams.get('redirect_uri'), `http://${host}/signin-vendora`)
    }
  })
})

describe('a real OpenID Connect callback with Host: a b', () => {
  let idp: OidcIdp
  let t: TestApp
  before(async () => {
    idp = await startOidcIdp({ clientId: 'host-client', clientSecret: 'host-secret', accounts: { ada: { name: 'Ada' } } })
    await idp.configure('http://app.local/signin-oidc')
    t = await buildTestApp({
      nodeEnv: 'development',
      testSignIn: false,
      settings: { Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: 'host-client', ClientSecret: 'host-secret' } } } }
    })
  })
  after(async () => { await t.app.close(); await idp.close() })

  test('answers 400, not 500, with the flow\'s own state and correlation cookie', async () => {
    const deadline = Date.now() + 10_000
    while (t.app.authentication.providers.get('OpenIdConnect')?.status().available !== true && Date.now() < deadline) await sleep(20)
    const challenge = await t.app.inject({ url: '/External/Challenge?provider=OpenIdConnect&returnUrl=%2F', headers: { host: 'app.local' } })
    assert.equal(challenge.statusCode, 302)
    const state = new URL(String(challenge.headers.location)).searchParams.get('state') ?? ''
    const response = await t.app.inject({ url: `/signin-oidc?code=abc&state=${state}&iss=${encodeURIComponent(idp.issuer)}`, headers: { host: 'a b', cookie: cookieHeaderFrom(challenge) } })
    assertRefused(response, 'callback with Host a b', 'a b')
  })
})

describe('SAML Destination and Recipient come from the public origin, not the poster\'s Host', () => {
  const OTHER_ACS = 'http://other.example.test/Saml2/Acs'
  let idp: TestIdentityProvider
  let t: TestApp
  const user = { nameId: 'mallory@example.test', attributes: {} }
  before(async () => {
    idp = new TestIdentityProvider()
    await idp.start()
    t = await buildTestApp({
      nodeEnv: 'development',
      testSignIn: false,
      settings: {
        // other.example.test is accepted as a host (an alias), so only the Destination check can refuse.
        Hosting: { PublicOrigin: 'http://app.example.test', AllowedHosts: ['other.example.test'] },
        Authentication: { Providers: { Saml2: { Enabled: true, EntityId: 'http://app.example.test/sp', MetadataUrl: idp.metadataUrl } } }
      }
    })
    const deadline = Date.now() + 10_000
    while (t.app.authentication.providers.get('Saml2')?.status().available !== true && Date.now() < deadline) await sleep(20)
  })
  after(async () => { await t.app.close(); await idp.stop() })

  async function post (samlResponse: string, relayState: string, cookie: string, host: string): Promise<LightMyRequestResponse> {
    return await t.app.inject({
      method: 'POST',
      url: '/Saml2/Acs',
      headers: { host, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: relayState }).toString()
    })
  }

  async function flow (): Promise<{ id: string, acsUrl: string, relayState: string, cookie: string }> {
    const challenge = await t.app.inject({ url: '/External/Challenge?provider=Saml2&returnUrl=%2F', headers: { host: 'app.example.test' } })
    assert.equal(challenge.statusCode, 302)
    const seen = readAuthnRequest(String(challenge.headers.location))
    return { id: seen.id, acsUrl: seen.acsUrl, relayState: seen.relayState ?? '', cookie: cookieHeaderFrom(challenge) }
  }

  const sessionSet = (response: LightMyRequestResponse): boolean => response.cookies.some((cookie) => cookie.name.includes('Web.Authentication') && cookie.value !== '')

  test('a signed response for another deployment\'s ACS, posted with that deployment\'s Host, is refused as destination', async () => {
    const started = await flow()
    assert.equal(started.acsUrl, 'http://app.example.test/Saml2/Acs')
    const response = idp.buildResponse({ acsUrl: OTHER_ACS, audience: 'http://app.example.test/sp', user, inResponseTo: started.id })
    const answer = await post(response, started.relayState, started.cookie, 'other.example.test')
    assert.equal(answer.statusCode, 302)
    assert.equal(answer.headers.location, '/Account/Login?failure=failed')
    assert.equal(sessionSet(answer), false)
    const failures = t.logs.events('external.sign_in.failed')
    assert.equal(failures.at(-1)?.failure, 'destination')
  })

  test('posted with a Host that is not allowed, it is refused before the ACS runs', async () => {
    const started = await flow()
    const response = idp.buildResponse({ acsUrl: 'http://third.example.test/Saml2/Acs', audience: 'http://app.example.test/sp', user, inResponseTo: started.id })
    assertRefused(await post(response, started.relayState, started.cookie, 'third.example.test'), 'ACS with a foreign host', 'third.example.test')
  })

  test('control: the same response addressed to this deployment\'s ACS signs in, whichever allowed Host posts it', async () => {
    const started = await flow()
    const response = idp.buildResponse({ acsUrl: started.acsUrl, audience: 'http://app.example.test/sp', user, inResponseTo: started.id })
    const answer = await post(response, started.relayState, started.cookie, 'other.example.test')
    assert.equal(answer.statusCode, 302)
    assert.equal(answer.headers.location, '/')
    assert.equal(sessionSet(answer), true)
  })
})
