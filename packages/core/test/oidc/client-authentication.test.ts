/**
 * OpenID Connect client authentication (issue 23, item 5), against oidc-provider advertising only
 * client_secret_post and reading Basic credentials without form-decoding them, as LemonLDAP::NG
 * 2.16 does (the trap: a secret with `+`, `/` or `=` never matches after RFC 6749 section 2.3.1
 * encoding): with TokenEndpointAuthMethod unset the method comes from discovery's
 * token_endpoint_auth_methods_supported and the sign-in succeeds; set to client_secret_basic it
 * is refused, and the 401 whose `WWW-Authenticate: Basic realm=...` has no `error` is logged with
 * `oauthError: invalid_client` read from the JSON body. BackChannelLogout against a provider that
 * does not advertise back-channel logout logs a startup warning.
 *
 * Issue 26, item 10 (LemonLDAP::NG 2.16 and Glewlwyd 2.7.5 list client_secret_basic too, and
 * refuse Basic credentials the encoding changed): with TokenEndpointAuthMethod unset, a client id
 * or secret that the Basic encoding changes gets client_secret_post when discovery lists it, said
 * once at startup and by check-config; a refusal of Basic credentials that the encoding changed
 * names the setting.
 *
 * Issue 33, item 9: Basic credentials leave the RFC 3986 unreserved characters `- . _ ~` as they
 * are (http/basic-credentials.ts, as ASP.NET's Uri.EscapeDataString), so the docs' own client id
 * `project-template-web` and a secret with `- . _ ~` go as Basic and sign in at a provider that
 * compares the raw credentials; `+ / = ! * ' ( )`, space, `%`, `:` and non-ASCII still change,
 * and check-config names those characters, never the id or the secret.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { findPlanted, HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { callBackWithCode, startOidcPair, useTokenIdpPair, type OidcPair, type OidcPairOptions } from '../helpers/providers/oidc-pair.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { waitFor } from '../helpers/wait.js'
import { loadTestConfiguration } from '../helpers/app.js'
import { changedByBasicEncoding, chooseClientAuthentication } from '../../src/oidc/client-authentication.js'
import { basicAuthorization, charactersChangedByBasicEncoding, encodeBasicCredential } from '../../src/http/basic-credentials.js'
import { formatSummary, summarizeConfiguration } from '../../src/configuration-summary.js'
import { ROOT_KEY } from '../../src/config/schema.js'

// The characters LemonLDAP::NG 2.16 does not decode from Basic credentials.
const CLIENT_ID = 'lemon-client-id'
const CLIENT_SECRET = 'PLANTED-a+b/c=d-e+f/g=='
const ACCOUNTS = { ada: { name: 'Ada' } }
const POST_ONLY = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, tokenEndpointAuthMethod: 'client_secret_post', clientAuthMethods: ['client_secret_post'], basicCredentialsNotDecoded: true } as const

/** Starts OpenID Connect pairs for one suite and closes them in the suite's `after`. */
function suitePairs (): (options: OidcPairOptions) => Promise<OidcPair> {
  const pairs: OidcPair[] = []
  after(async () => {
    for (const started of pairs) { await started.app.close(); await started.idp.close() }
  })
  return async (options) => {
    const started = await startOidcPair(options)
    pairs.push(started)
    return started
  }
}

async function signIn (pair: OidcPair): Promise<Exchange> {
  const session = new HttpSession()
  const start = await session.request(`${pair.app.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.response.status, 302)
  return await session.request(await throughIdpLogin(session, start.location!, pair.app.origin, 'ada'))
}

describe('a provider that accepts only client_secret_post', () => {
  const start = suitePairs()
  const pair = async (options: Partial<OidcPairOptions> = {}): Promise<OidcPair> => await start({ idp: POST_ONLY, ...options })

  test('TokenEndpointAuthMethod unset: client_secret_post is chosen from discovery and the sign-in succeeds', async () => {
    const chosen = await pair()
    const discovery = await (await fetch(`${chosen.idp.issuer}/.well-known/openid-configuration`)).json() as { token_endpoint_auth_methods_supported?: string[] }
    assert.deepEqual(discovery.token_endpoint_auth_methods_supported, ['client_secret_post'])
    const callback = await signIn(chosen)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.deepEqual(findPlanted(chosen.app.logs.text(), [CLIENT_SECRET]), [])
  })

  test('TokenEndpointAuthMethod client_secret_post set explicitly signs in', async () => {
    const explicit = await pair({ openIdConnect: { TokenEndpointAuthMethod: 'client_secret_post' } })
    const callback = await signIn(explicit)
    assert.equal(callback.location?.pathname, '/')
  })

  test('TokenEndpointAuthMethod client_secret_basic: refused as token with oauthError invalid_client and HTTP 401; no session', async () => {
    const basic = await pair({ openIdConnect: { TokenEndpointAuthMethod: 'client_secret_basic' } })
    const callback = await signIn(basic)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    const line = basic.app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'token')
    assert.equal(line?.oauthError, 'invalid_client')
    assert.equal(line?.httpStatus, 401)
    assert.equal(line?.errorCode, 'OAUTH_WWW_AUTHENTICATE_CHALLENGE')
    assert.deepEqual(findPlanted(basic.app.logs.text(), [CLIENT_SECRET]), [])
  })
})

describe('a 401 challenge without an error parameter (LemonLDAP::NG: WWW-Authenticate: Basic realm=...)', () => {
  const pair = useTokenIdpPair(CLIENT_ID, CLIENT_SECRET)

  test('the OAuth error code is read from the JSON body: oauthError invalid_client, never the description', async () => {
    const { idp, app } = pair
    idp.answer = () => ({ status: 401, headers: { 'www-authenticate': 'Basic realm="lemonldap"' }, body: { error: 'invalid_client', error_description: 'PLANTED-DESCRIPTION-91' } })
    const callback = await callBackWithCode(app.origin)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
    const line = app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'token')
    assert.equal(line?.httpStatus, 401)
    assert.equal(line?.oauthError, 'invalid_client')
    assert.equal(line?.errorCode, 'OAUTH_WWW_AUTHENTICATE_CHALLENGE')
    assert.deepEqual(findPlanted(app.logs.text(), [CLIENT_SECRET, 'PLANTED-DESCRIPTION-91']), [])
  })
})

describe('BackChannelLogout and the provider\'s discovery', () => {
  const start = suitePairs()

  test('a provider that does not advertise backchannel_logout_supported: one startup warning naming the setting', async () => {
    const started = await start({ idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS }, openIdConnect: { BackChannelLogout: true } })
    await waitFor(() => started.app.logs.events('external.metadata.loaded').length > 0, 'metadata to load', 10_000)
    const warnings = started.app.logs.events('oidc.back_channel_logout.unsupported')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.level, 40)
    assert.equal(warnings[0]?.setting, 'ProjectTemplate:Authentication:Providers:OpenIdConnect:BackChannelLogout')
  })

  test('control: a provider advertising back-channel logout gets no warning', async () => {
    const started = await start({
      idp: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, backChannelLogoutUri: (redirectUri) => redirectUri.replace('/signin-oidc', '/backchannel-logout-oidc') },
      openIdConnect: { BackChannelLogout: true }
    })
    await waitFor(() => started.app.logs.events('external.metadata.loaded').length > 0, 'metadata to load', 10_000)
    assert.equal(started.app.logs.events('oidc.back_channel_logout.unsupported').length, 0)
  })
})

const SETTING = 'ProjectTemplate:Authentication:Providers:OpenIdConnect:TokenEndpointAuthMethod'
const PLAIN_CLIENT_ID = 'lemonclient'
// The characters of the report (issue 33, item 9): unreserved, so Basic carries them unchanged.
const DASH_SECRET = 'PLANTED-dash.secret_4711~'
// Characters the Basic encoding still changes (a base64 secret's `+`, `/`, `=`).
const PLUS_SECRET = 'PLANTED+plus/secret=4711'
// The docs' own client id.
const DOCS_CLIENT_ID = 'project-template-web'

describe('the encoding of Basic credentials (RFC 3986 unreserved characters unchanged, as Uri.EscapeDataString)', () => {
  const changed: Array<[string, string]> = [['+', '%2B'], ['/', '%2F'], ['=', '%3D'], ['!', '%21'], ['*', '%2A'], ["'", '%27'], ['(', '%28'], [')', '%29'], [' ', '%20'], ['%', '%25'], [':', '%3A'], ['é', '%C3%A9']]
  for (const [character, encoded] of changed) {
    test(`${JSON.stringify(character)} is percent-encoded as ${encoded}, and counts as changed`, () => {
      assert.equal(encodeBasicCredential(`abc${character}def`), `abc${encoded}def`)
      assert.equal(changedByBasicEncoding(`abc${character}def`), true)
    })
  }
  for (const character of ['-', '.', '_', '~']) {
    test(`${JSON.stringify(character)} goes unchanged`, () => {
      assert.equal(encodeBasicCredential(`abc${character}def`), `abc${character}def`)
      assert.equal(changedByBasicEncoding(`abc${character}def`), false)
    })
  }
  test('letters, digits and the docs\' client id are not changed', () => {
    assert.equal(changedByBasicEncoding('AZaz09'), false)
    assert.equal(changedByBasicEncoding(DOCS_CLIENT_ID), false)
    assert.equal(encodeBasicCredential('a-b c.d'), 'a-b%20c.d')
  })
  test('the changed characters are listed once each, in order of first appearance', () => {
    assert.deepEqual(charactersChangedByBasicEncoding('a+b/c+d é-~'), ['+', '/', ' ', 'é'])
    assert.deepEqual(charactersChangedByBasicEncoding(DASH_SECRET), [])
  })
  test('the Authorization header: Basic base64(encoded id ":" encoded secret)', () => {
    assert.equal(basicAuthorization(DOCS_CLIENT_ID, 'a+b:c'), `Basic ${Buffer.from(`${DOCS_CLIENT_ID}:a%2Bb%3Ac`).toString('base64')}`)
  })

  const table: Array<{ name: string, configured: '' | 'client_secret_basic' | 'client_secret_post', supported: unknown, secret: string, method: string, reason: string }> = [
    { name: 'unset, both listed, plain secret', configured: '', supported: ['client_secret_basic', 'client_secret_post'], secret: 'plain', method: 'client_secret_basic', reason: 'default' },
    { name: 'unset, both listed, secret with - . _ ~', configured: '', supported: ['client_secret_basic', 'client_secret_post'], secret: 'a-b.c_d~e', method: 'client_secret_basic', reason: 'default' },
    { name: 'unset, both listed, secret with +', configured: '', supported: ['client_secret_basic', 'client_secret_post'], secret: 'a+b', method: 'client_secret_post', reason: 'form_encoding' },
    { name: 'unset, only basic listed, secret with +', configured: '', supported: ['client_secret_basic'], secret: 'a+b', method: 'client_secret_basic', reason: 'default' },
    { name: 'unset, no list (RFC 8414: basic), secret with +', configured: '', supported: undefined, secret: 'a+b', method: 'client_secret_basic', reason: 'default' },
    { name: 'unset, only post listed, plain secret', configured: '', supported: ['client_secret_post'], secret: 'plain', method: 'client_secret_post', reason: 'discovery' },
    { name: 'basic configured, secret with +', configured: 'client_secret_basic', supported: ['client_secret_basic', 'client_secret_post'], secret: 'a+b', method: 'client_secret_basic', reason: 'configured' }
  ]
  for (const row of table) {
    test(`chosen method: ${row.name} -> ${row.method} (${row.reason})`, () => {
      const choice = chooseClientAuthentication(row.configured, row.supported, { clientId: 'client', clientSecret: row.secret })
      assert.equal(choice.method, row.method)
      assert.equal(choice.reason, row.reason)
    })
  }
  test('a client id that the encoding changes counts like the secret; the docs\' client id does not', () => {
    assert.equal(chooseClientAuthentication('', ['client_secret_basic', 'client_secret_post'], { clientId: 'my:client', clientSecret: 'plain' }).method, 'client_secret_post')
    assert.equal(chooseClientAuthentication('', ['client_secret_basic', 'client_secret_post'], { clientId: DOCS_CLIENT_ID, clientSecret: 'plain' }).method, 'client_secret_basic')
  })
})

describe('a provider that lists both methods but does not decode Basic credentials (LemonLDAP::NG 2.16)', () => {
  const start = suitePairs()
  const pair = async (options: { clientId?: string, secret?: string, registered?: 'client_secret_basic' | 'client_secret_post', methods?: string[] } = {}): Promise<OidcPair> => await start({
    idp: { clientId: options.clientId ?? PLAIN_CLIENT_ID, clientSecret: options.secret ?? PLUS_SECRET, accounts: ACCOUNTS, tokenEndpointAuthMethod: options.registered ?? 'client_secret_post', clientAuthMethods: options.methods ?? ['client_secret_basic', 'client_secret_post'], basicCredentialsNotDecoded: true }
  })

  test('TokenEndpointAuthMethod unset, client id project-template-web and a secret with - . _ ~: Basic, no notice, and the sign-in succeeds', async () => {
    const basic = await pair({ clientId: DOCS_CLIENT_ID, secret: DASH_SECRET, registered: 'client_secret_basic' })
    const callback = await signIn(basic)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.equal(basic.app.logs.events('oidc.client_authentication.post_chosen').length, 0)
    assert.deepEqual(findPlanted(basic.app.logs.text(), [DASH_SECRET]), [])
  })

  test('discovery lists only client_secret_basic, a secret with - . _ ~: Basic signs in', async () => {
    const basicOnly = await pair({ clientId: DOCS_CLIENT_ID, secret: DASH_SECRET, registered: 'client_secret_basic', methods: ['client_secret_basic'] })
    const callback = await signIn(basicOnly)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
  })

  test('TokenEndpointAuthMethod unset and a secret with + / =: client_secret_post, said once at startup naming the setting, and the sign-in succeeds', async () => {
    const chosen = await pair()
    const callback = await signIn(chosen)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const notices = chosen.app.logs.events('oidc.client_authentication.post_chosen')
    assert.equal(notices.length, 1)
    assert.equal(notices[0]?.level, 30)
    assert.equal(notices[0]?.method, 'client_secret_post')
    assert.equal(notices[0]?.reason, 'form_encoding')
    assert.equal(notices[0]?.setting, SETTING)
    assert.deepEqual(findPlanted(chosen.app.logs.text(), [PLUS_SECRET]), [])
  })

  test('control: a secret of letters and digits keeps client_secret_basic, with no notice', async () => {
    const plain = await pair({ secret: 'PLANTEDplainsecret4711', registered: 'client_secret_basic' })
    const callback = await signIn(plain)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(plain.app.logs.events('oidc.client_authentication.post_chosen').length, 0)
  })

  test('discovery lists only client_secret_basic, a secret with + / =: Basic is refused with 401 invalid_client and the log line names the setting', async () => {
    const basicOnly = await pair({ registered: 'client_secret_basic', methods: ['client_secret_basic'] })
    const callback = await signIn(basicOnly)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
    const line = basicOnly.app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.failure, 'token')
    assert.equal(line?.httpStatus, 401)
    assert.equal(line?.oauthError, 'invalid_client')
    assert.equal(line?.setting, SETTING)
    assert.equal(line?.hint, 'basic_credentials_form_encoded')
    assert.equal(basicOnly.app.logs.events('oidc.client_authentication.post_chosen').length, 0)
    assert.deepEqual(findPlanted(basicOnly.app.logs.text(), [PLUS_SECRET]), [])
  })
})

describe('a provider that answers 403 unauthorized_client to Basic credentials it cannot read (Glewlwyd 2.7.5)', () => {
  let idp: TokenIdp
  const apps: ListeningApp[] = []
  before(async () => { idp = await startTokenIdp(PLAIN_CLIENT_ID) })
  after(async () => { for (const app of apps) await app.close(); await idp?.close() })

  async function callbackWith (openIdConnect: Record<string, string | boolean>): Promise<ListeningApp> {
    const app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: PLAIN_CLIENT_ID, ClientSecret: PLUS_SECRET, ...openIdConnect } } } })
    apps.push(app)
    await waitUntilReady(app.origin)
    const callback = await callBackWithCode(app.origin)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=failed')
    return app
  }

  test('TokenEndpointAuthMethod client_secret_basic with a secret with + / =: the 403 unauthorized_client line names the setting', async () => {
    idp.answer = () => ({ status: 403, body: { error: 'unauthorized_client' } })
    const app = await callbackWith({ TokenEndpointAuthMethod: 'client_secret_basic' })
    assert.match(idp.tokenRequests.at(-1)?.authorization ?? '', /^Basic /)
    const line = app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.httpStatus, 403)
    assert.equal(line?.oauthError, 'unauthorized_client')
    assert.equal(line?.setting, SETTING)
    assert.equal(line?.hint, 'basic_credentials_form_encoded')
    assert.deepEqual(findPlanted(app.logs.text(), [PLUS_SECRET, encodeURIComponent(PLUS_SECRET), encodeBasicCredential(PLUS_SECRET)]), [])
  })

  test('TokenEndpointAuthMethod unset: the credentials go in the form body, and a refusal there names no setting', async () => {
    idp.answer = () => ({ status: 403, body: { error: 'unauthorized_client' } })
    const app = await callbackWith({})
    const request = idp.tokenRequests.at(-1)
    assert.equal(request?.authorization, undefined)
    assert.equal(request?.body.get('client_secret'), PLUS_SECRET)
    const line = app.logs.events('external.sign_in.failed').at(-1)
    assert.equal(line?.httpStatus, 403)
    assert.equal(line?.setting, undefined)
    assert.equal(line?.hint, undefined)
  })
})

describe('a provider that compares the raw Basic credentials (no decoding at all)', () => {
  const SECRET = 'PLANTED-raw.basic_secret~4711'
  let idp: TokenIdp
  let app: ListeningApp
  before(async () => {
    idp = await startTokenIdp(DOCS_CLIENT_ID)
    app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: DOCS_CLIENT_ID, ClientSecret: SECRET } } } })
    await waitUntilReady(app.origin)
  })
  after(async () => { await app?.close(); await idp?.close() })

  test('TokenEndpointAuthMethod unset: the header decodes to exactly project-template-web:<secret with - . _ ~>, and the sign-in succeeds', async () => {
    let nonce = ''
    idp.answer = async (request) => {
      const [scheme, credentials] = (request.authorization ?? '').split(' ')
      const raw = scheme === 'Basic' ? Buffer.from(credentials ?? '', 'base64').toString('utf8') : ''
      return raw === `${DOCS_CLIENT_ID}:${SECRET}` ? await idp.validAnswer(nonce) : { status: 401, body: { error: 'invalid_client' } }
    }
    const callback = await callBackWithCode(app.origin, (value) => { nonce = value })
    const request = idp.tokenRequests.at(-1)
    const [scheme, credentials] = (request?.authorization ?? '').split(' ')
    assert.equal(scheme, 'Basic')
    assert.equal(Buffer.from(credentials ?? '', 'base64').toString('utf8'), `${DOCS_CLIENT_ID}:${SECRET}`)
    assert.equal(request?.body.get('client_secret'), null)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.equal(app.logs.events('oidc.client_authentication.post_chosen').length, 0)
    assert.deepEqual(findPlanted(app.logs.text(), [SECRET, request?.authorization ?? SECRET]), [])
  })
})

describe('check-config and a client id or secret that the Basic encoding changes', () => {
  function summaryWith (openIdConnect: Record<string, string | boolean>): ReturnType<typeof summarizeConfiguration> {
    const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: 'https://idp.example.test', ClientId: PLAIN_CLIENT_ID, ClientSecret: PLUS_SECRET, ...openIdConnect } } } } })
    assert.deepEqual(loaded.errors, [])
    return summarizeConfiguration(loaded)
  }
  const postChosen = (summary: ReturnType<typeof summarizeConfiguration>): Array<{ event: string, key: string, message: string }> => summary.warnings.filter((warning) => warning.event === 'oidc.client_authentication.post_chosen')

  test('TokenEndpointAuthMethod unset and a secret with + / =: one warning naming the setting, those characters and client_secret_post, never the secret', () => {
    const summary = summaryWith({})
    const warnings = postChosen(summary)
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.key, SETTING)
    assert.equal(warnings[0]?.message, `${SETTING} is unset and the client secret holds \`+\`, \`/\`, \`=\`, which Basic credentials carry percent-encoded (only A-Z a-z 0-9 - . _ ~ go unchanged; RFC 6749 section 2.3.1): client_secret_post will be used when the provider's discovery lists it, so that providers which do not decode Basic credentials accept them; set ${SETTING} to choose.`)
    const text = formatSummary(summary, ROOT_KEY)
    assert.match(text, /ProjectTemplate:Authentication:Providers:OpenIdConnect:TokenEndpointAuthMethod is unset/)
    assert.deepEqual(findPlanted(`${text}\n${JSON.stringify(summary)}`, [PLUS_SECRET]), [])
  })

  test('a client id with a space and : is named apart from the secret', () => {
    const warnings = postChosen(summaryWith({ ClientId: 'my client:1' }))
    assert.equal(warnings.length, 1)
    assert.match(warnings[0]?.message ?? '', /is unset and the client id holds space, `:` and the client secret holds `\+`, `\/`, `=`, which/)
  })

  test('client id project-template-web and a secret with - . _ ~: no such warning', () => {
    assert.deepEqual(postChosen(summaryWith({ ClientId: DOCS_CLIENT_ID, ClientSecret: DASH_SECRET })), [])
  })

  test('TokenEndpointAuthMethod set, or a plain secret: no such warning', () => {
    assert.equal(postChosen(summaryWith({ TokenEndpointAuthMethod: 'client_secret_basic' })).length, 0)
    assert.equal(postChosen(summaryWith({ ClientSecret: 'PLANTEDplain4711' })).length, 0)
  })
})
