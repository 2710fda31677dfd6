/**
 * Log-leak scan (issue 6): one run drives every flow with distinctive planted values, then scans
 * every byte of output the run produced: the log lines of every app instance, the stdout and
 * stderr of the entry points run as child processes, and whatever this process wrote to its own
 * stdout and stderr meanwhile. Any occurrence of a planted value fails, naming the value by its
 * label (never the value) and the line it was found on.
 *
 * Flows: a successful sign-in per protocol over real HTTP (OpenID Connect against oidc-provider,
 * VendorA against oauth2-mock-server, SAML2 against the XML-DSig test IdP); negatives per protocol
 * (wrong state, replayed callback, token endpoint error, bad ID tokens from a jose-minted IdP, an
 * unsigned assertion, a replayed and a non-base64 SAMLResponse, a wrong RelayState); anti-forgery
 * failure and logout; startup-validation failures of check-config and server (planted
 * ClientSecret for every provider) and a valid server process; error pages and a throwing route
 * in Production and Development; malformed requests (bad cookie header, `/%`, bad JSON, oversized
 * header and body, garbage request line); planted cookies, a planted bearer token and planted
 * sensitive query strings on arbitrary routes and on every provider callback path.
 *
 * Planted values: every client secret (also as Basic credentials), the data-protection key, every
 * authorization code, token and ID token the IdPs issued, every PKCE verifier and nonce, every
 * SAMLResponse posted (also URL-encoded, and its signature value), every cookie value the apps set
 * (session, correlation, anti-forgery), every anti-forgery token, every state / RelayState, and
 * the planted cookie, header and query values.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, type AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, claim, type TestApp } from '../helpers/app.js'
import { cleanEnv, runEntryPoint, type Running } from '../helpers/process.js'
import { HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { SP_ENTITY_ID } from '../helpers/saml2/app.js'
import { readAuthnRequest, TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { antiforgeryTokenIn } from '../helpers/cookies.js'
import { basicAuthorization } from '../../src/http/basic-credentials.js'

// ---------------------------------------------------------------------------------------------
// Planted values and the scanner

const RUN = randomBytes(3).toString('hex')
const plantValue = (kind: string): string => `PLANTED-${kind}-${RUN}-${randomBytes(6).toString('hex')}`

/** Label -> value; every value is also registered in the encodings it may travel in. */
class PlantedValues {
  readonly #byValue = new Map<string, string>()
  readonly #counts = new Map<string, number>()

  /** Registers `value` under `label` (numbered when the label repeats); short values are ignored. */
  add (label: string, value: string | undefined | null): void {
    if (value === undefined || value === null || value.length < 8 || this.#byValue.has(value)) return
    const count = (this.#counts.get(label) ?? 0) + 1
    this.#counts.set(label, count)
    const name = `${label}#${count}`
    this.#byValue.set(value, name)
    const encoded = encodeURIComponent(value)
    if (encoded !== value && !this.#byValue.has(encoded)) this.#byValue.set(encoded, `${name} (URL-encoded)`)
  }

  /** Registers a derived form (Basic credentials, a decoded signature) under an explicit label. */
  addDerived (name: string, value: string): void {
    if (value.length >= 8 && !this.#byValue.has(value)) this.#byValue.set(value, name)
  }

  entries (): Array<[label: string, value: string]> {
    return [...this.#byValue].map(([value, label]) => [label, value])
  }

  labels (prefix: string): string[] {
    return [...this.#byValue.values()].filter((label) => label.startsWith(prefix))
  }
}

interface OutputSource {
  readonly name: string
  readonly text: () => string
}

interface Finding {
  readonly label: string
  readonly source: string
  readonly line: number
}

/** Every (planted value, line) hit in every source; line numbers are 1-based per source. */
function scanOutput (sources: readonly OutputSource[], planted: ReadonlyArray<[string, string]>): Finding[] {
  const findings: Finding[] = []
  for (const source of sources) {
    const lines = source.text().split('\n')
    lines.forEach((line, index) => {
      for (const [label, value] of planted) {
        if (line.includes(value)) findings.push({ label, source: source.name, line: index + 1 })
      }
    })
  }
  return findings
}

function describeFindings (findings: readonly Finding[]): string {
  return findings.map((finding) => `planted value ${finding.label} leaked in ${finding.source} line ${finding.line}`).join('\n')
}

const planted = new PlantedValues()
const sources: OutputSource[] = []

// ---------------------------------------------------------------------------------------------
// Recording: every response's cookies and every protocol value seen in a redirect or a page

const SENSITIVE_PARAMETERS = ['code', 'state', 'RelayState', 'nonce', 'access_token', 'id_token', 'refresh_token', 'token', 'SAMLResponse']

function recordResponse (url: URL, response: Response, body: string): void {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0] ?? ''
    const index = pair.indexOf('=')
    planted.add(`cookie ${pair.slice(0, index).replace(/\.[A-Za-z0-9_-]{22}$/, '.<flow>')} set by ${url.port === '' ? url.host : `:${url.port}`}`, pair.slice(index + 1))
  }
  const location = response.headers.get('location')
  if (location !== null) {
    const target = new URL(location, url)
    for (const name of SENSITIVE_PARAMETERS) planted.add(`redirect ${name}`, target.searchParams.get(name))
  }
  for (const match of body.matchAll(/name="(SAMLResponse|RelayState|__RequestVerificationToken)" value="([^"]+)"/g)) {
    planted.add(`page ${match[1] ?? ''}`, match[2])
  }
}

/** HttpSession that records what every exchange carried. */
class RecordingSession extends HttpSession {
  override async request (target: string | URL, init: { method?: string, form?: Record<string, string>, cookies?: boolean } = {}): Promise<Exchange> {
    const exchange = await super.request(target, init)
    recordResponse(exchange.url, exchange.response, exchange.body)
    for (const name of SENSITIVE_PARAMETERS) planted.add(`request ${name}`, exchange.url.searchParams.get(name))
    return exchange
  }
}

/** One fetch, no redirect followed, response recorded. */
async function call (target: string, init: RequestInit = {}): Promise<{ status: number, body: string, response: Response }> {
  const response = await fetch(target, { redirect: 'manual', signal: AbortSignal.timeout(10_000), ...init })
  const body = await response.text()
  recordResponse(new URL(target), response, body)
  return { status: response.status, body, response }
}

/** Raw bytes over a socket (for requests fetch refuses to send); resolves with the status line. */
async function raw (origin: string, payload: string, timeoutMs = 5_000): Promise<string> {
  const { hostname, port } = new URL(origin)
  return await new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = connect(Number(port), hostname)
    const done = (): void => { clearTimeout(timer); socket.destroy(); resolve(Buffer.concat(chunks).toString('latin1').split('\r\n')[0] ?? '') }
    const timer = setTimeout(done, timeoutMs)
    socket.on('connect', () => { socket.end(payload) })
    socket.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    socket.on('close', done)
    socket.on('error', done)
  })
}

// ---------------------------------------------------------------------------------------------
// Planted request values shared by every app of the run

const PLANTED_QUERY = {
  code: plantValue('QUERY-CODE'),
  state: plantValue('QUERY-STATE'),
  access_token: plantValue('QUERY-ACCESS-TOKEN'),
  id_token: plantValue('QUERY-ID-TOKEN'),
  SAMLResponse: plantValue('QUERY-SAMLRESPONSE'),
  RelayState: plantValue('QUERY-RELAYSTATE'),
  client_secret: plantValue('QUERY-CLIENT-SECRET')
}
const PLANTED_COOKIES = {
  '__Host-ProjectTemplate.Web.Authentication': plantValue('COOKIE-SESSION'),
  '__Host-ProjectTemplate.Web.AuthenticationC1': plantValue('COOKIE-CHUNK'),
  '.ProjectTemplate.Web.Authentication': plantValue('COOKIE-DEV-SESSION'),
  '__Host-ProjectTemplate.Correlation.AAAAAAAAAAAAAAAAAAAAAA': plantValue('COOKIE-CORRELATION'),
  '__Host-ProjectTemplate.Antiforgery': plantValue('COOKIE-ANTIFORGERY'),
  other: plantValue('COOKIE-OTHER')
}
const PLANTED_BEARER = plantValue('BEARER')
const PLANTED_PROXY_AUTHORIZATION = plantValue('PROXY-AUTHORIZATION')
const PLANTED_CSRF_HEADER = plantValue('CSRF-HEADER')
const PLANTED_FORM_SAMLRESPONSE = plantValue('FORM-SAMLRESPONSE')
const PLANTED_FORM_RELAYSTATE = plantValue('FORM-RELAYSTATE')
const PLANTED_FORM_CSRF = plantValue('FORM-CSRF')
const PLANTED_JSON_TOKEN = plantValue('JSON-TOKEN')
const PLANTED_JSON_SECRET = plantValue('JSON-SECRET')
const PLANTED_OVERSIZED_HEADER = plantValue('OVERSIZED-HEADER')
const PLANTED_BAD_COOKIE = plantValue('BAD-COOKIE')

for (const [name, value] of Object.entries(PLANTED_QUERY)) planted.add(`planted query ${name}`, value)
for (const [name, value] of Object.entries(PLANTED_COOKIES)) planted.add(`planted cookie ${name}`, value)
planted.add('planted Authorization bearer', PLANTED_BEARER)
planted.add('planted Proxy-Authorization', PLANTED_PROXY_AUTHORIZATION)
planted.add('planted RequestVerificationToken header', PLANTED_CSRF_HEADER)
planted.add('planted form SAMLResponse', PLANTED_FORM_SAMLRESPONSE)
planted.add('planted form RelayState', PLANTED_FORM_RELAYSTATE)
planted.add('planted form __RequestVerificationToken', PLANTED_FORM_CSRF)
planted.add('planted JSON body token', PLANTED_JSON_TOKEN)
planted.add('planted JSON body secret', PLANTED_JSON_SECRET)
planted.add('planted oversized header', PLANTED_OVERSIZED_HEADER)
planted.add('planted malformed cookie', PLANTED_BAD_COOKIE)

const QUERY = new URLSearchParams(PLANTED_QUERY).toString()
const COOKIE_HEADER = Object.entries(PLANTED_COOKIES).map(([name, value]) => `${name}=${value}`).join('; ')
const PLANTED_HEADERS: Record<string, string> = {
  cookie: COOKIE_HEADER,
  authorization: `Bearer ${PLANTED_BEARER}`,
  'proxy-authorization': `Basic ${PLANTED_PROXY_AUTHORIZATION}`,
  requestverificationtoken: PLANTED_CSRF_HEADER
}

/** Planted cookies, bearer token and sensitive query strings on arbitrary routes and on the callbacks. */
async function plantedRequests (origin: string, extraPaths: readonly string[] = []): Promise<void> {
  const paths = [
    '/', '/api/application-information', '/api/v1/application-information', '/Account/Login', '/Account/AccessDenied',
    '/External/Challenge', '/Home/Error/500', '/Home/Error', '/health', '/health/ready', '/no-such-route', '/styles/site.css',
    '/signin-oidc', '/signin-vendora', '/signin-vendorb', '/signin-vendorc', '/Saml2/Acs', ...extraPaths
  ]
  for (const path of paths) {
    for (const accept of ['text/html', 'application/json']) {
      const separator = path.includes('?') ? '&' : '?'
      const answer = await call(`${origin}${path}${separator}${QUERY}`, { headers: { ...PLANTED_HEADERS, accept } })
      assert.ok(answer.status < 500 || path.startsWith('/Home/Error') || path.startsWith('/test-only/throw'), `${path}: ${answer.status}`)
    }
  }
  // The callbacks and the ACS as POSTs: a planted SAMLResponse, RelayState and anti-forgery token in the body.
  for (const path of ['/Saml2/Acs', '/signin-oidc', '/Account/Logout']) {
    await call(`${origin}${path}?${QUERY}`, {
      method: 'POST',
      headers: { ...PLANTED_HEADERS, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ SAMLResponse: PLANTED_FORM_SAMLRESPONSE, RelayState: PLANTED_FORM_RELAYSTATE, __RequestVerificationToken: PLANTED_FORM_CSRF, code: PLANTED_QUERY.code }).toString()
    })
  }
}

/** Requests fetch cannot send, and bodies the parsers refuse. */
async function malformedRequests (origin: string): Promise<void> {
  const host = new URL(origin).host
  const statuses = [
    await raw(origin, `GET /%?${QUERY} HTTP/1.1\r\nHost: ${host}\r\nCookie: ${COOKIE_HEADER}\r\nConnection: close\r\n\r\n`),
    await raw(origin, `GET /%E0%A4%A?${QUERY} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${PLANTED_BEARER}\r\nConnection: close\r\n\r\n`),
    // A cookie header that does not parse as name=value pairs, carrying a planted value.
    await raw(origin, `GET /?${QUERY} HTTP/1.1\r\nHost: ${host}\r\nCookie: ;;==;${PLANTED_BAD_COOKIE}; =${PLANTED_BAD_COOKIE}%ZZ; __Host-ProjectTemplate.Web.Authentication="${PLANTED_BAD_COOKIE}\r\nConnection: close\r\n\r\n`),
    await raw(origin, `GET /Account/Login?${QUERY} HTTP/1.1\r\nHost: ${host}\r\nCookie: __Host-ProjectTemplate.Web.Authentication=${PLANTED_BAD_COOKIE}\u00ff\u00fe\r\nConnection: close\r\n\r\n`),
    // Oversized header (above the 32 KiB limit), with planted cookies beside it.
    await raw(origin, `GET /?${QUERY} HTTP/1.1\r\nHost: ${host}\r\nCookie: ${COOKIE_HEADER}\r\nX-Padding: ${PLANTED_OVERSIZED_HEADER}${'x'.repeat(40 * 1024)}\r\nConnection: close\r\n\r\n`),
    // Not HTTP at all, with a planted value in the request line.
    await raw(origin, `GARBAGE /?${QUERY} ${PLANTED_BEARER}\r\n\r\n`),
    // A header line without a colon.
    await raw(origin, `GET /?${QUERY} HTTP/1.1\r\nHost: ${host}\r\n${PLANTED_BEARER}\r\nConnection: close\r\n\r\n`)
  ]
  const expected = [/ 400 /, / 400 /, / (200|302|400) /, / (200|400) /, / 431 /, / 400 /, / 400 /]
  statuses.forEach((status, index) => { assert.match(status, new RegExp(`^HTTP/1\\.1${expected[index]?.source ?? ''}`), `malformed request ${index} answered "${status}"`) })

  const badJson = `{"token":"${PLANTED_JSON_TOKEN}","client_secret":"${PLANTED_JSON_SECRET}",`
  for (const path of ['/test-only/echo', '/test-only/sign-in', '/Saml2/Acs', '/Account/Logout', '/signin-oidc']) {
    const answer = await call(`${origin}${path}?${QUERY}`, { method: 'POST', headers: { ...PLANTED_HEADERS, accept: 'application/json', 'content-type': 'application/json' }, body: badJson })
    assert.ok(answer.status < 500, `bad JSON to ${path}: ${answer.status}`)
  }
  // Oversized bodies (above the 64 KiB / 16 KiB limits) and a form body that is not a form.
  const big = `${PLANTED_JSON_TOKEN}${'y'.repeat(70 * 1024)}`
  await call(`${origin}/test-only/echo?${QUERY}`, { method: 'POST', headers: { ...PLANTED_HEADERS, 'content-type': 'application/json' }, body: JSON.stringify({ token: big }) })
  await call(`${origin}/Saml2/Acs?${QUERY}`, { method: 'POST', headers: { ...PLANTED_HEADERS, 'content-type': 'application/x-www-form-urlencoded' }, body: `SAMLResponse=${PLANTED_FORM_SAMLRESPONSE}&${'z'.repeat(20 * 1024)}` })
  await call(`${origin}/test-only/echo?${QUERY}`, { method: 'POST', headers: { ...PLANTED_HEADERS, 'content-type': 'application/x-www-form-urlencoded' }, body: `%%%SAMLResponse=${PLANTED_FORM_SAMLRESPONSE}%` })
  await call(`${origin}/test-only/echo?${QUERY}`, { method: 'POST', headers: { ...PLANTED_HEADERS, 'content-type': 'text/x-unknown' }, body: PLANTED_JSON_TOKEN })
}

// ---------------------------------------------------------------------------------------------
// The run's servers

const CLIENT_SECRETS = {
  OpenIdConnect: plantValue('OIDC-CLIENT-SECRET'),
  TokenIdp: plantValue('TOKENIDP-CLIENT-SECRET'),
  VendorA: plantValue('VENDORA-CLIENT-SECRET'),
  VendorB: plantValue('VENDORB-CLIENT-SECRET'),
  VendorC: plantValue('VENDORC-CLIENT-SECRET')
}
/** SAML SP private keys (Saml2 SigningKey, EncryptionKey, EncryptionKeyPrevious): a planted body inside PEM armour, refused by startup validation. */
const SAML_KEYS = {
  SigningKey: plantValue('SAML-SIGNING-KEY'),
  EncryptionKey: plantValue('SAML-ENCRYPTION-KEY'),
  EncryptionKeyPrevious: plantValue('SAML-ENCRYPTION-KEY-PREVIOUS')
}
for (const [name, value] of Object.entries(SAML_KEYS)) planted.add(`Saml2 ${name}`, value)
const pemArmour = (body: string): string => `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----`
const CLIENT_IDS = { OpenIdConnect: 'leak-scan-oidc', TokenIdp: 'leak-scan-token-idp', VendorA: 'leak-scan-vendor-a', VendorB: 'leak-scan-vendor-b', VendorC: 'leak-scan-vendor-c' }
for (const [name, secret] of Object.entries(CLIENT_SECRETS)) {
  planted.add(`client secret ${name}`, secret)
  const id = CLIENT_IDS[name as keyof typeof CLIENT_IDS]
  planted.addDerived(`client secret ${name} (Basic credentials)`, basicAuthorization(id, secret).slice('Basic '.length))
}
const DATA_PROTECTION_KEY = randomBytes(32).toString('base64')
planted.add('data-protection key', DATA_PROTECTION_KEY)
const INVALID_KEY = plantValue('DATA-PROTECTION-KEY')
planted.add('invalid data-protection key', INVALID_KEY)
const AUTHORITY_PASSWORD = plantValue('AUTHORITY-PASSWORD')
planted.add('password in the Authority URL', AUTHORITY_PASSWORD)

const SAML_USER = { nameId: 'ada@example.test', attributes: { role: ['Administrator'] } }

let oidcIdp: OidcIdp | undefined
let tokenIdp: TokenIdp | undefined
let vendorIdp: VendorIdp | undefined
const samlIdp = new TestIdentityProvider()
let providers: ListeningApp | undefined
let idTokenApp: ListeningApp | undefined
const errorApps: Array<{ name: string, test: TestApp, origin: string }> = []
const children: Running[] = []
const closers: Array<() => Promise<void>> = []

/** In-process output (console, warnings) while the run lasts, teed, not swallowed. */
const ownOutput: string[] = []
const originalWrites = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) }
function tee (stream: NodeJS.WriteStream, original: (...args: unknown[]) => boolean): void {
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    ownOutput.push(typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk))
    return original(chunk, ...rest)
  }) as typeof stream.write
}

function errorRoutes (app: FastifyInstance): void {
  app.get('/test-only/throw', { config: { allowAnonymous: true } }, async () => { throw new Error('deliberate failure in a test route') })
  app.get('/test-only/throw-authenticated', async () => { throw new TypeError('deliberate failure behind authorization') })
  app.post('/test-only/echo', { config: { allowAnonymous: true } }, async (request) => ({ received: typeof request.body }))
}

async function startErrorApp (name: string, nodeEnv: string | undefined): Promise<void> {
  const test = await buildTestApp({ ...(nodeEnv === undefined ? {} : { nodeEnv }), configure: errorRoutes })
  await test.app.listen({ host: '127.0.0.1', port: 0 })
  errorApps.push({ name, test, origin: `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}` })
  sources.push({ name: `${name} app log`, text: () => test.logs.text() })
  closers.push(async () => { await test.app.close() })
}

const started = Date.now()

before(async () => {
  tee(process.stdout, originalWrites.stdout as (...args: unknown[]) => boolean)
  tee(process.stderr, originalWrites.stderr as (...args: unknown[]) => boolean)
  sources.push({ name: 'test process stdout/stderr', text: () => ownOutput.join('') })

  oidcIdp = await startOidcIdp({
    clientId: CLIENT_IDS.OpenIdConnect,
    clientSecret: CLIENT_SECRETS.OpenIdConnect,
    accounts: { ada: { name: 'Ada Lovelace', email: 'ada@example.test', roles: ['Administrator'] } },
    // Token refresh (code-grant access tokens expire within the refresh skew) and back-channel logout.
    refreshTokens: { accessTokenTtlSeconds: 30, refreshedAccessTokenTtlSeconds: 3600 },
    backChannelLogoutUri: (redirectUri) => `${new URL(redirectUri).origin}/backchannel-logout-oidc`
  })
  closers.push(async () => { await oidcIdp?.close() })
  vendorIdp = await startVendorIdp({ id: 4242, login: 'octo-admin', email: 'octo@example.test' })
  closers.push(async () => { await vendorIdp?.close() })
  await samlIdp.start()
  samlIdp.users.set('ada', SAML_USER)
  samlIdp.nextUser = 'ada'
  closers.push(async () => { await samlIdp.stop() })
  tokenIdp = await startTokenIdp(CLIENT_IDS.TokenIdp)
  closers.push(async () => { await tokenIdp?.close() })

  providers = await startProviderApp({
    Authentication: {
      Providers: {
        OpenIdConnect: { Enabled: true, Authority: oidcIdp.issuer, ClientId: CLIENT_IDS.OpenIdConnect, ClientSecret: CLIENT_SECRETS.OpenIdConnect, SaveTokens: true, BackChannelLogout: true },
        VendorA: vendorIdp.settings(CLIENT_IDS.VendorA, CLIENT_SECRETS.VendorA),
        VendorB: { Enabled: false, ClientSecret: CLIENT_SECRETS.VendorB },
        VendorC: { Enabled: false, ClientSecret: CLIENT_SECRETS.VendorC },
        Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: samlIdp.metadataUrl }
      }
    }
  }, (app) => {
    // A consuming application's use of the token API (refreshes the provider access token).
    app.get('/test-only/access-token', async (request, reply) => {
      const token = await app.session.accessToken(request, reply)
      return await reply.code(token === undefined ? 401 : 204).send()
    })
  })
  const providersApp = providers
  sources.push({ name: 'providers app log', text: () => providersApp.logs.text() })
  closers.push(async () => { await providersApp.close() })
  await oidcIdp.configure(`${providers.origin}/signin-oidc`)

  idTokenApp = await startProviderApp({
    Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: tokenIdp.issuer, ClientId: CLIENT_IDS.TokenIdp, ClientSecret: CLIENT_SECRETS.TokenIdp } } }
  })
  const idApp = idTokenApp
  sources.push({ name: 'id-token app log', text: () => idApp.logs.text() })
  closers.push(async () => { await idApp.close() })

  await startErrorApp('production', undefined)
  await startErrorApp('development', 'development')
  await Promise.all([waitUntilReady(providers.origin), waitUntilReady(idTokenApp.origin)])
})

async function closeAll (): Promise<void> {
  for (const run of children) run.kill()
  while (closers.length > 0) await closers.pop()?.().catch(() => {})
  process.stdout.write = originalWrites.stdout as typeof process.stdout.write
  process.stderr.write = originalWrites.stderr as typeof process.stderr.write
}

after(closeAll)

// ---------------------------------------------------------------------------------------------
// Flows

function origin (): string {
  assert.ok(providers !== undefined)
  return providers.origin
}

/** Drives oidc-provider's dev interactions until it redirects back to the app. */
async function throughOidcIdp (session: HttpSession, start: URL): Promise<URL> {
  let exchange = await session.request(start)
  for (let step = 0; step < 20; step++) {
    const next = exchange.location
    if (next !== undefined) {
      if (next.origin === origin()) return next
      exchange = await session.request(next)
      continue
    }
    assert.equal(exchange.response.status, 200, `IdP answered ${exchange.response.status}`)
    const action = /<form[^>]*action="([^"]+)"/.exec(exchange.body)?.[1]?.replace(/&amp;/g, '&')
    const prompt = /name="prompt" value="([a-z]+)"/.exec(exchange.body)?.[1]
    assert.ok(action !== undefined && prompt !== undefined, 'the IdP page has an interaction form')
    const fields: Record<string, string> = prompt === 'login' ? { prompt, login: 'ada', password: plantValue('IDP-PASSWORD') } : { prompt }
    if (fields.password !== undefined) planted.add('password typed at the IdP', fields.password)
    exchange = await session.request(new URL(action, exchange.url), { method: 'POST', form: fields })
  }
  throw new Error('the IdP did not redirect back to the app')
}

async function oidcToCallback (session: HttpSession): Promise<URL> {
  const start = await session.request(`${origin()}/External/Challenge?provider=OpenIdConnect&returnUrl=%2F`)
  assert.equal(start.response.status, 302)
  return await throughOidcIdp(session, start.location!)
}

async function vendorToCallback (session: HttpSession): Promise<URL> {
  const start = await session.request(`${origin()}/External/Challenge?provider=VendorA`)
  assert.equal(start.response.status, 302)
  const authorize = await session.request(start.location!)
  assert.equal(authorize.response.status, 302)
  return authorize.location!
}

/** Challenge, then the test IdP's auto-post page: the ACS URL and the form fields, not yet posted. */
async function samlToAcs (session: HttpSession): Promise<{ action: URL, fields: Record<string, string>, requestId: string }> {
  const start = await session.request(`${origin()}/External/Challenge?provider=Saml2`)
  assert.equal(start.response.status, 302)
  const requestId = readAuthnRequest(start.location!.href).id
  const page = await session.request(start.location!)
  assert.equal(page.response.status, 200)
  const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1]
  const samlResponse = /name="SAMLResponse" value="([^"]+)"/.exec(page.body)?.[1]
  const relayState = /name="RelayState" value="([^"]+)"/.exec(page.body)?.[1]
  assert.ok(action !== undefined && samlResponse !== undefined && relayState !== undefined)
  return { action: new URL(action), fields: { SAMLResponse: samlResponse, RelayState: relayState }, requestId }
}

async function replay (url: URL, cookie: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000), ...init, headers: { cookie, ...(init.headers as Record<string, string> | undefined) } })
  recordResponse(url, response, await response.text())
  return response
}

function lastFailure (app: ListeningApp | undefined): unknown {
  return app?.logs.events('external.sign_in.failed').at(-1)?.failure
}

/** Signed in, then the starter page (anti-forgery cookie and token), a refused and an accepted logout. */
async function homeAndLogout (session: HttpSession, base: string): Promise<void> {
  const home = await session.request(`${base}/?${QUERY}`)
  assert.equal(home.response.status, 200)
  const token = antiforgeryTokenIn(home.body)
  assert.ok(token !== undefined)
  const refused = await session.request(`${base}/Account/Logout?${QUERY}`, { method: 'POST', form: { __RequestVerificationToken: PLANTED_FORM_CSRF } })
  assert.equal(refused.response.status, 400)
  const loggedOut = await session.request(`${base}/Account/Logout?${QUERY}`, { method: 'POST', form: { __RequestVerificationToken: token, returnUrl: '/Account/Login' } })
  assert.equal(loggedOut.response.status, 302)
}

describe('log-leak scan: one run over every flow, then every captured line', () => {
  test('control: the scanner reports a planted value by label and line, and only then', () => {
    const control = new PlantedValues()
    const secret = plantValue('CONTROL')
    control.add('control secret', secret)
    control.add('control base64', 'a+b/c=d+e/f=')
    const findings = scanOutput([
      { name: 'synthetic', text: () => `{"msg":"clean line"}\n{"msg":"leaks ${secret} here"}\n{"v":"a%2Bb%2Fc%3Dd%2Be%2Ff%3D"}` },
      { name: 'clean', text: () => '{"msg":"nothing"}' }
    ], control.entries())
    assert.deepEqual(findings, [
      { label: 'control secret#1', source: 'synthetic', line: 2 },
      { label: 'control base64#1 (URL-encoded)', source: 'synthetic', line: 3 }
    ])
    assert.match(describeFindings(findings), /^planted value control secret#1 leaked in synthetic line 2$/m)
    assert.ok(!describeFindings(findings).includes(secret), 'the report names the label, never the value')
    assert.deepEqual(scanOutput([{ name: 'clean', text: () => 'nothing here' }], control.entries()), [])
  })

  test('OpenID Connect (oidc-provider): sign-in, home, logout; wrong state; replayed callback', async () => {
    const session = new RecordingSession()
    const callback = await session.request(await oidcToCallback(session))
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
    await homeAndLogout(session, origin())

    const wrong = new RecordingSession()
    const wrongUrl = await oidcToCallback(wrong)
    planted.add('callback code (wrong state)', wrongUrl.searchParams.get('code'))
    wrongUrl.searchParams.set('state', PLANTED_QUERY.state)
    assert.deepEqual(sessionCookiesSet((await wrong.request(wrongUrl)).response), [])
    assert.equal(lastFailure(providers), 'correlation')

    const replayed = new RecordingSession()
    const replayUrl = await oidcToCallback(replayed)
    const copied = replayed.jar.header(new URL(origin()))
    assert.equal(sessionCookiesSet((await replayed.request(replayUrl)).response).length, 1)
    assert.deepEqual(sessionCookiesSet(await replay(replayUrl, copied)), [])
    assert.equal(lastFailure(providers), 'replay')

    for (const value of oidcIdp?.issuedCodes ?? []) planted.add('oidc-provider authorization code', value)
    for (const value of oidcIdp?.issuedTokens ?? []) planted.add('oidc-provider access token', value)
    for (const value of oidcIdp?.issuedTokenResponseValues ?? []) planted.add('oidc-provider token response value', value)
    assert.ok((oidcIdp?.issuedTokenResponseValues.length ?? 0) >= 4, 'ID and access tokens captured')
  })

  test('OpenID Connect (oidc-provider): token refresh; back-channel logout (valid, replayed, forged, nonce)', async () => {
    const idp = oidcIdp
    assert.ok(idp !== undefined)
    const session = new RecordingSession()
    const callback = await session.request(await oidcToCallback(session))
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
    const refreshed = await session.request(`${origin()}/test-only/access-token?${QUERY}`)
    assert.equal(refreshed.response.status, 204)
    assert.equal(idp.grants.refresh_token, 1, 'the access token was refreshed')

    const claims = { iss: idp.issuer, aud: CLIENT_IDS.OpenIdConnect, iat: Math.floor(Date.now() / 1000), sub: 'ada', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } }
    const valid = await idp.sign({ ...claims, jti: plantValue('LOGOUT-JTI') })
    const forged = (await idp.sign({ ...claims, jti: plantValue('LOGOUT-JTI') })).replace(/\.[^.]+$/, `.${plantValue('SIG')}`)
    const withNonce = await idp.sign({ ...claims, jti: plantValue('LOGOUT-JTI'), nonce: plantValue('LOGOUT-NONCE') })
    const statuses: number[] = []
    for (const token of [valid, valid, forged, withNonce]) {
      planted.add('logout token', token)
      planted.add('logout token signature', token.split('.')[2])
      const response = await fetch(`${origin()}/backchannel-logout-oidc?${QUERY}`, { method: 'POST', body: new URLSearchParams({ logout_token: token }), signal: AbortSignal.timeout(10_000) })
      recordResponse(new URL(`${origin()}/backchannel-logout-oidc`), response, await response.text())
      statuses.push(response.status)
    }
    assert.deepEqual(statuses, [200, 400, 400, 400])
    assert.notEqual((await session.request(`${origin()}/test-only/access-token`)).response.status, 204, 'the session ended')
    for (const value of idp.issuedTokenResponseValues) planted.add('oidc-provider token response value (refresh)', value)
    for (const value of idp.issuedTokens) planted.add('oidc-provider access token', value)
  })

  test('OpenID Connect (jose-minted IdP): a valid ID token, and bad ones (unknown key, alg none, wrong nonce)', async () => {
    const idp = tokenIdp
    const app = idTokenApp
    assert.ok(idp !== undefined && app !== undefined)
    const cases: Array<{ failure: string | undefined, answer: (nonce: string) => Promise<{ body: Record<string, unknown> }> }> = [
      { failure: undefined, answer: async (nonce) => await idp.validAnswer(nonce) },
      { failure: 'unknown_key', answer: async (nonce) => ({ body: { access_token: plantValue('AT-UNKNOWN-KEY'), token_type: 'Bearer', id_token: await idp.mintIdToken(nonce, {}, { key: idp.unknownKey, kid: 'unknown' }) } }) },
      { failure: 'signature', answer: async (nonce) => ({ body: { access_token: plantValue('AT-ALG-NONE'), token_type: 'Bearer', id_token: await idp.mintIdToken(nonce, {}, { alg: 'none' }) } }) },
      { failure: 'nonce', answer: async () => await idp.validAnswer('another-nonce-value-0123456789') },
      { failure: 'token', answer: async () => ({ status: 400, body: { error: 'invalid_grant', error_description: plantValue('TOKEN-ERROR-DESCRIPTION') } }) }
    ]
    for (const { failure, answer } of cases) {
      const session = new RecordingSession()
      const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
      const nonce = start.location?.searchParams.get('nonce') ?? ''
      idp.answer = async () => {
        const result = await answer(nonce)
        // Every value but the OAuth `error` code, which the failure line carries on purpose
        // (oauthError, issue 12); its error_description stays planted.
        for (const [key, value] of Object.entries(result.body)) if (typeof value === 'string' && key !== 'error') planted.add('token-idp token response value', value)
        return result
      }
      const code = plantValue('OIDC-CODE')
      planted.add('authorization code sent to the callback', code)
      const callback = await session.request(`${app.origin}/signin-oidc?code=${code}&state=${start.location?.searchParams.get('state') ?? ''}`)
      if (failure === undefined) {
        assert.equal(sessionCookiesSet(callback.response).length, 1)
        await homeAndLogout(session, app.origin)
      } else {
        assert.deepEqual(sessionCookiesSet(callback.response), [])
        assert.equal(lastFailure(app), failure)
      }
    }
    for (const value of idp.planted) planted.add('token-idp minted token', value)
    for (const request of idp.tokenRequests) planted.add('PKCE verifier sent to the token endpoint', request.body.get('code_verifier'))
    await plantedRequests(app.origin)
  })

  test('VendorA (oauth2-mock-server): sign-in; wrong state; replayed callback; token endpoint error', async () => {
    const idp = vendorIdp
    assert.ok(idp !== undefined)
    const session = new RecordingSession()
    const callback = await session.request(await vendorToCallback(session))
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    await homeAndLogout(session, origin())

    const wrong = new RecordingSession()
    const wrongUrl = await vendorToCallback(wrong)
    wrongUrl.searchParams.set('state', PLANTED_QUERY.state)
    assert.deepEqual(sessionCookiesSet((await wrong.request(wrongUrl)).response), [])
    assert.equal(lastFailure(providers), 'correlation')

    const replayed = new RecordingSession()
    const replayUrl = await vendorToCallback(replayed)
    const copied = replayed.jar.header(new URL(origin()))
    assert.equal(sessionCookiesSet((await replayed.request(replayUrl)).response).length, 1)
    assert.deepEqual(sessionCookiesSet(await replay(replayUrl, copied)), [])
    assert.equal(lastFailure(providers), 'replay')

    idp.tokenErrorStatus = 400
    try {
      const failing = new RecordingSession()
      assert.deepEqual(sessionCookiesSet((await failing.request(await vendorToCallback(failing))).response), [])
      assert.equal(lastFailure(providers), 'token')
    } finally {
      idp.tokenErrorStatus = undefined
    }
    for (const value of idp.planted) planted.add('vendor code or token', value)
    for (const request of idp.tokenRequests) planted.add('vendor PKCE verifier', request.body.code_verifier)
    for (const authorization of idp.userInformationAuthorizations) planted.add('vendor userinfo bearer token', authorization?.replace(/^Bearer /, ''))
  })

  test('SAML2 (XML-DSig test IdP): sign-in; replayed response; unsigned assertion; wrong RelayState; not base64', async () => {
    const session = new RecordingSession()
    const flow = await samlToAcs(session)
    const copied = session.jar.header(new URL(origin()))
    const signedIn = await session.request(flow.action, { method: 'POST', form: flow.fields })
    assert.equal(sessionCookiesSet(signedIn.response).length, 1)
    await homeAndLogout(session, origin())

    const form = (fields: Record<string, string>): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
    assert.deepEqual(sessionCookiesSet(await replay(flow.action, copied, form(flow.fields))), [])
    assert.equal(lastFailure(providers), 'replay')

    const unsigned = new RecordingSession()
    const second = await samlToAcs(unsigned)
    const unsignedResponse = samlIdp.buildResponse({ acsUrl: second.action.href, audience: SP_ENTITY_ID, user: SAML_USER, inResponseTo: second.requestId, signAssertion: false })
    assert.deepEqual(sessionCookiesSet((await unsigned.request(second.action, { method: 'POST', form: { ...second.fields, SAMLResponse: unsignedResponse } })).response), [])
    assert.equal(lastFailure(providers), 'signature')

    const wrongRelay = new RecordingSession()
    const third = await samlToAcs(wrongRelay)
    assert.deepEqual(sessionCookiesSet((await wrongRelay.request(third.action, { method: 'POST', form: { ...third.fields, RelayState: PLANTED_FORM_RELAYSTATE } })).response), [])
    assert.equal(lastFailure(providers), 'correlation')

    const notBase64 = new RecordingSession()
    const fourth = await samlToAcs(notBase64)
    assert.deepEqual(sessionCookiesSet((await notBase64.request(fourth.action, { method: 'POST', form: { ...fourth.fields, SAMLResponse: `<samlp:Response>${PLANTED_FORM_SAMLRESPONSE}</samlp:Response>` } })).response), [])
    assert.equal(lastFailure(providers), 'malformed')

    for (const value of samlIdp.issuedResponses) {
      planted.add('SAMLResponse', value)
      const xml = Buffer.from(value, 'base64').toString('utf8')
      const signature = /<ds:SignatureValue>([^<]{60})/.exec(xml)?.[1]
      if (signature !== undefined) planted.addDerived(`signature value of SAMLResponse ${value.slice(-6)}`, signature)
    }
    assert.ok(samlIdp.issuedResponses.length >= 5)
  })

  test('planted cookies, bearer token and sensitive query strings on every route and provider callback', async () => {
    await plantedRequests(origin(), ['/External/Challenge?provider=OpenIdConnect', '/External/Challenge?provider=VendorA', '/External/Challenge?provider=Saml2'])
    await malformedRequests(origin())
  })

  for (const name of ['production', 'development']) {
    test(`error pages, a throwing route and malformed requests (${name})`, async () => {
      const target = errorApps.find((app) => app.name === name)
      assert.ok(target !== undefined)
      const base = target.origin
      for (const path of ['/Home/Error/500', '/Home/Error/404', '/Home/Error/999', '/test-only/throw']) {
        for (const accept of ['text/html', 'application/json']) {
          const answer = await call(`${base}${path}?${QUERY}`, { headers: { ...PLANTED_HEADERS, accept } })
          assert.ok(answer.status >= 400)
        }
      }
      assert.equal((await call(`${base}/test-only/throw?${QUERY}`)).status, 500)
      assert.ok(target.test.logs.events('request.failed').length >= 1, 'the thrown error was logged')

      // A signed-in user (test-only flow) hitting the throwing route and logging out.
      const session = new RecordingSession()
      const signedIn = await call(`${base}/test-only/sign-in?${QUERY}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ claims: [claim('application:subject', 'user-1'), claim('application:name', 'Ada Lovelace')] })
      })
      assert.equal(signedIn.status, 204)
      session.jar.store(new URL(base), signedIn.response)
      const throwing = await session.request(`${base}/test-only/throw-authenticated?${QUERY}`)
      assert.equal(throwing.response.status, 500)
      await homeAndLogout(session, base)

      await plantedRequests(base, ['/test-only/throw', '/test-only/throw-authenticated'])
      await malformedRequests(base)
    })
  }

  test('entry points as child processes: startup-validation failures and a valid server with planted secrets', async () => {
    const P = 'ProjectTemplate__Authentication__Providers'
    const secrets = {
      [`${P}__OpenIdConnect__ClientSecret`]: CLIENT_SECRETS.OpenIdConnect,
      [`${P}__VendorA__ClientSecret`]: CLIENT_SECRETS.VendorA,
      [`${P}__VendorB__ClientSecret`]: CLIENT_SECRETS.VendorB,
      [`${P}__VendorC__ClientSecret`]: CLIENT_SECRETS.VendorC,
      ...Object.fromEntries(Object.entries(SAML_KEYS).map(([name, value]) => [`${P}__Saml2__${name}`, pemArmour(value)]))
    }
    const invalid = {
      ...secrets,
      [`${P}__OpenIdConnect__Enabled`]: 'true',
      [`${P}__OpenIdConnect__Authority`]: `https://client:${AUTHORITY_PASSWORD}@idp.example.test`,
      [`${P}__VendorA__Enabled`]: 'true',
      [`${P}__VendorB__Enabled`]: 'true',
      [`${P}__VendorB__ClientSecert`]: CLIENT_SECRETS.VendorB,
      [`${P}__VendorC__Enabled`]: 'true',
      [`${P}__Saml2__Enabled`]: 'true',
      ProjectTemplate__Authentication__Cookie__AllowInsecureHttp: 'true',
      ProjectTemplate__DataProtection__Keys__0: INVALID_KEY
    }
    const valid = {
      ...secrets,
      [`${P}__VendorA__Enabled`]: 'true',
      [`${P}__VendorA__ClientId`]: CLIENT_IDS.VendorA,
      [`${P}__VendorA__AuthorizationEndpoint`]: 'https://vendor-a.invalid/authorize',
      [`${P}__VendorA__TokenEndpoint`]: 'https://vendor-a.invalid/token',
      [`${P}__VendorA__UserInformationEndpoint`]: 'https://vendor-a.invalid/userinfo',
      ProjectTemplate__DataProtection__Keys__0: DATA_PROTECTION_KEY,
      // An enabled provider needs a public origin outside Development; the test reaches it by IP.
      ProjectTemplate__Hosting__PublicOrigin: 'https://app.example.test',
      ProjectTemplate__Hosting__AllowedHosts__0: '127.0.0.1',
      HOST: '127.0.0.1',
      PORT: '0'
    }
    const runs: Array<[string, Running]> = [
      ['check-config (invalid)', runEntryPoint('src/check-config.ts', cleanEnv(invalid))],
      ['check-config (invalid, Development)', runEntryPoint('src/check-config.ts', cleanEnv({ ...invalid, NODE_ENV: 'development' }))],
      ['check-config (valid)', runEntryPoint('src/check-config.ts', cleanEnv(valid))],
      ['server (invalid)', runEntryPoint('src/server.ts', cleanEnv({ ...invalid, PORT: '0' }))],
      ['server (invalid, Logging:Level silent)', runEntryPoint('src/server.ts', cleanEnv({ ...invalid, ProjectTemplate__Logging__Level: 'silent', PORT: '0' }))],
      ['server (valid)', runEntryPoint('src/server.ts', cleanEnv({ ...valid, ProjectTemplate__Logging__Level: 'debug' }))]
    ]
    for (const [name, run] of runs) {
      children.push(run)
      sources.push({ name: `${name} stdout`, text: () => run.stdout() }, { name: `${name} stderr`, text: () => run.stderr() })
    }
    const exits = await Promise.all(runs.slice(0, 5).map(async ([, run]) => await run.exited(30_000)))
    assert.deepEqual(exits, [1, 1, 0, 1, 1])

    const server = runs[5]![1]
    const line = await server.waitForLine((record) => typeof record.msg === 'string' && record.msg.startsWith('Server listening at http://127.0.0.1:'), 30_000)
    const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(String(line.msg))?.[1]
    assert.ok(base !== undefined)
    assert.equal((await call(`${base}/External/Challenge?provider=VendorA&${QUERY}`, { headers: PLANTED_HEADERS })).status, 302)
    await plantedRequests(base)
    await malformedRequests(base)
    server.child.kill('SIGTERM')
    assert.equal(await server.exited(15_000), 0)
  })

  test('scan: no planted value in any captured line', async (t) => {
    // Let the last completion lines land, then close every server so that nothing is still writing.
    await new Promise((resolve) => setTimeout(resolve, 100))
    await closeAll()
    const entries = planted.entries()
    for (const prefix of ['client secret', 'cookie __Host-ProjectTemplate.Web.Authentication', 'cookie __Host-ProjectTemplate.Correlation', 'cookie __Host-ProjectTemplate.Antiforgery', 'oidc-provider', 'token-idp', 'vendor code', 'SAMLResponse', 'page __RequestVerificationToken', 'redirect code', 'planted']) {
      assert.ok(planted.labels(prefix).length > 0, `values planted for ${prefix}`)
    }
    assert.ok(sources.length >= 17, 'every app and child process is a source')
    const lines = sources.reduce((total, source) => total + source.text().split('\n').length, 0)
    assert.ok(lines > 500, `a substantial corpus was captured (${lines} lines)`)
    for (const source of sources.filter((candidate) => !candidate.name.endsWith('stderr'))) {
      assert.ok(source.text().trim() !== '', `${source.name} captured output`)
    }
    const findings = scanOutput(sources, entries)
    assert.equal(findings.length, 0, `\n${describeFindings(findings)}`)
    t.diagnostic(`log-leak scan: ${entries.length} planted values x ${lines} lines from ${sources.length} sources, ${Date.now() - started} ms`)
  })
})
