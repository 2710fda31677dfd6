/**
 * Startup validation of `DownstreamApis:<Name>` (downstream/settings-rules.ts), through the
 * configuration loader as `server.ts` runs it: each misconfiguration is refused with a sentence
 * naming its key, never a value (a planted secret and key never appear).
 */
import { generateKeyPairSync } from 'node:crypto'
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadTestConfiguration } from '../helpers/app.js'
import type { TestSettings } from '../../src/testing/app.js'
import { isSecretKey } from '../../src/providers/application-schema.js'

const KEY = 'ProjectTemplate:DownstreamApis:Orders'
const PLANTED = 'downstream-rules-PLANTED-secret-77'
const OIDC = { Enabled: true, Authority: 'https://idp.example.test', ClientId: 'web', ClientSecret: 'web-secret', SaveTokens: true, Scopes: ['openid', 'orders.read'] }
const CLIENT = { Authority: 'https://idp.example.test', ClientId: 'worker', ClientSecret: PLANTED }
const KEY_PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()

function load (api: TestSettings | undefined, options: { nodeEnv?: string, oidc?: TestSettings } = {}): ReturnType<typeof loadTestConfiguration> {
  return loadTestConfiguration({
    ...(options.nodeEnv === undefined ? {} : { nodeEnv: options.nodeEnv }),
    settings: {
      Hosting: { PublicOrigin: 'https://app.example.test' },
      Authentication: { Providers: { OpenIdConnect: { ...OIDC, ...options.oidc } } },
      ...(api === undefined ? {} : { DownstreamApis: { Orders: api } })
    }
  })
}

function problemsOf (api: TestSettings, options: { nodeEnv?: string, oidc?: TestSettings } = {}): string[] {
  return load(api, options).errors.map((problem) => problem.message)
}

describe('DownstreamApis settings at startup', () => {
  test('a valid API with both token kinds loads, with its defaults', () => {
    const loaded = load({ BaseUrl: 'https://orders.example.test/v1', Scopes: ['orders.read'], UserToken: { Scheme: 'OpenIdConnect' }, ClientCredentials: CLIENT })
    assert.deepEqual(loaded.errors, [])
    const api = loaded.config.DownstreamApis.Orders
    assert.deepEqual([api?.TimeoutSeconds, api?.MaxResponseBytes, api?.ClientCredentials.TokenEndpointAuthMethod], [10, 1_048_576, 'client_secret_basic'])
  })

  test('a per-API user token: a Resource the sign-in asks for, and Scopes, load', () => {
    const loaded = load({ BaseUrl: 'https://orders.example.test/v1', UserToken: { Scheme: 'OpenIdConnect', Resource: 'https://orders.example.test', Scopes: ['orders.read'] } }, { oidc: { Resources: ['https://orders.example.test'] } })
    assert.deepEqual(loaded.errors, [])
    assert.deepEqual(loaded.config.DownstreamApis.Orders?.UserToken, { Scheme: 'OpenIdConnect', Resource: 'https://orders.example.test', Scopes: ['orders.read'], Audience: '' })
  })

  test('no DownstreamApis section: nothing configured, nothing refused', () => {
    const loaded = load(undefined)
    assert.deepEqual(loaded.errors, [])
    assert.deepEqual(loaded.config.DownstreamApis, {})
  })

  const refused: ReadonlyArray<{ readonly name: string, readonly api: TestSettings, readonly message: string, readonly nodeEnv?: string, readonly oidc?: TestSettings }> = [
    { name: 'no BaseUrl', api: { ClientCredentials: CLIENT }, message: `${KEY}:BaseUrl is required: the API's absolute https URL.` },
    { name: 'http BaseUrl', api: { BaseUrl: 'http://orders.example.test', ClientCredentials: CLIENT }, message: `${KEY}:BaseUrl must be an absolute https URL (http is allowed only for a loopback host in Development).` },
    { name: 'http loopback outside Development', api: { BaseUrl: 'http://127.0.0.1:9000', ClientCredentials: CLIENT }, message: `${KEY}:BaseUrl must be an absolute https URL (http is allowed only for a loopback host in Development).` },
    { name: 'BaseUrl with a query', api: { BaseUrl: 'https://orders.example.test/v1?key=1', ClientCredentials: CLIENT }, message: `${KEY}:BaseUrl must have no user information, query or fragment; calls add their own path and query.` },
    { name: 'BaseUrl with user information', api: { BaseUrl: `https://u:${PLANTED}@orders.example.test`, ClientCredentials: CLIENT }, message: `${KEY}:BaseUrl must have no user information, query or fragment; calls add their own path and query.` },
    { name: 'no way to get a token', api: { BaseUrl: 'https://orders.example.test' }, message: `${KEY} needs UserToken:Scheme (calls as the signed-in user) or ClientCredentials (calls as the app), or both.` },
    { name: 'UserToken of an unknown scheme', api: { BaseUrl: 'https://orders.example.test', UserToken: { Scheme: 'Nope' } }, message: `${KEY}:UserToken:Scheme must name an enabled OpenID Connect scheme (Providers:OpenIdConnect or Authentication:Schemes:<Name>).` },
    { name: 'UserToken of a scheme without SaveTokens', api: { BaseUrl: 'https://orders.example.test', UserToken: { Scheme: 'OpenIdConnect' } }, oidc: { SaveTokens: false }, message: `${KEY}:UserToken:Scheme names OpenIdConnect, whose SaveTokens is false; set ProjectTemplate:Authentication:Providers:OpenIdConnect:SaveTokens to true so that its access token is kept for API calls.` },
    { name: 'a scope the sign-in does not request', api: { BaseUrl: 'https://orders.example.test', Scopes: ['orders.write'], UserToken: { Scheme: 'OpenIdConnect' } }, message: `${KEY}:Scopes lists scopes that ProjectTemplate:Authentication:Providers:OpenIdConnect:Scopes does not request at sign-in (orders.write); the saved access token would not carry them.` },
    { name: 'a per-API token without UserToken:Scheme', api: { BaseUrl: 'https://orders.example.test', UserToken: { Resource: 'https://orders.example.test' }, ClientCredentials: CLIENT }, message: `${KEY}:UserToken:Scheme is required when ${KEY}:UserToken sets Resource, Scopes or Audience.` },
    { name: 'a UserToken:Resource that is not a URI', api: { BaseUrl: 'https://orders.example.test', UserToken: { Scheme: 'OpenIdConnect', Resource: 'orders' } }, message: `${KEY}:UserToken:Resource must be an absolute URI without a fragment (RFC 8707 resource indicator).` },
    { name: 'a UserToken:Resource the sign-in does not ask for', api: { BaseUrl: 'https://orders.example.test', UserToken: { Scheme: 'OpenIdConnect', Resource: 'https://orders.example.test' } }, message: `${KEY}:UserToken:Resource must be among ProjectTemplate:Authentication:Providers:OpenIdConnect:Resources, so that the sign-in asks for it and its refresh token can be redeemed for this API.` },
    { name: 'a sign-in resource with a fragment', api: { BaseUrl: 'https://orders.example.test', UserToken: { Scheme: 'OpenIdConnect' } }, oidc: { Resources: ['https://orders.example.test#x'] }, message: 'ProjectTemplate:Authentication:Providers:OpenIdConnect:Resources:0 must be an absolute URI without a fragment (RFC 8707 resource indicator).' },
    { name: 'ClientCredentials without ClientId', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, ClientId: '' } }, message: `${KEY}:ClientCredentials:ClientId is required when ${KEY}:ClientCredentials is configured.` },
    { name: 'neither Authority nor TokenEndpoint', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, Authority: '' } }, message: `${KEY}:ClientCredentials:Authority or ${KEY}:ClientCredentials:TokenEndpoint is required, not both.` },
    { name: 'both Authority and TokenEndpoint', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, TokenEndpoint: 'https://idp.example.test/token' } }, message: `${KEY}:ClientCredentials:Authority or ${KEY}:ClientCredentials:TokenEndpoint is required, not both.` },
    { name: 'http TokenEndpoint', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, Authority: '', TokenEndpoint: 'http://idp.example.test/token' } }, message: `${KEY}:ClientCredentials:TokenEndpoint must be an absolute https URL (http is allowed only for a loopback host in Development).` },
    { name: 'no ClientSecret', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, ClientSecret: '' } }, message: `${KEY}:ClientCredentials:ClientSecret is required with ${KEY}:ClientCredentials:TokenEndpointAuthMethod client_secret_basic (or set it to private_key_jwt with ${KEY}:ClientCredentials:ClientAssertionKeys).` },
    { name: 'private_key_jwt without keys', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, TokenEndpointAuthMethod: 'private_key_jwt' } }, message: `${KEY}:ClientCredentials:ClientAssertionKeys: a PEM private key is required with TokenEndpointAuthMethod private_key_jwt.` },
    { name: 'private_key_jwt with an unreadable key', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, TokenEndpointAuthMethod: 'private_key_jwt', ClientAssertionKeys: [`-----BEGIN PRIVATE KEY-----\n${PLANTED}\n-----END PRIVATE KEY-----`] } }, message: `${KEY}:ClientCredentials:ClientAssertionKeys:0: is not a readable PEM private key (PKCS#8 "PRIVATE KEY", "RSA PRIVATE KEY" or "EC PRIVATE KEY").` },
    { name: 'MaxResponseBytes below its minimum', api: { BaseUrl: 'https://orders.example.test', ClientCredentials: CLIENT, MaxResponseBytes: 10 }, message: `${KEY}:MaxResponseBytes must be an integer from 1024 to 67108864.` }
  ]

  for (const { name, api, message, nodeEnv, oidc } of refused) {
    test(`refused: ${name}, naming the key`, () => {
      const problems = problemsOf(api, { ...(nodeEnv === undefined ? {} : { nodeEnv }), ...(oidc === undefined ? {} : { oidc }) })
      assert.deepEqual(problems, [message])
      assert.equal(problems.join(' ').includes(PLANTED), false)
    })
  }

  test('private_key_jwt with a readable key loads; http on loopback loads in Development', () => {
    assert.deepEqual(problemsOf({ BaseUrl: 'https://orders.example.test', ClientCredentials: { ...CLIENT, ClientSecret: '', TokenEndpointAuthMethod: 'private_key_jwt', ClientAssertionKeys: [KEY_PEM] } }), [])
    assert.deepEqual(problemsOf({ BaseUrl: 'http://127.0.0.1:9000', ClientCredentials: { ...CLIENT, Authority: 'http://localhost:9001' } }, { nodeEnv: 'development' }), [])
  })

  test('a section name that is not usable is refused, naming it', () => {
    const loaded = loadTestConfiguration({ settings: { DownstreamApis: { '1bad': { BaseUrl: 'https://x.example.test' } } } })
    assert.deepEqual(loaded.errors.map((problem) => problem.message), ['ProjectTemplate:DownstreamApis:1bad is not a usable name: letters, digits, - and _, starting with a letter, at most 64 characters.'])
  })

  test('the client secret and the assertion keys are secret keys (warned about in settings files, never printed); the rest are not', () => {
    assert.equal(isSecretKey(`${KEY}:ClientCredentials:ClientSecret`, 'ProjectTemplate'), true)
    assert.equal(isSecretKey(`${KEY}:ClientCredentials:ClientAssertionKeys:0`, 'ProjectTemplate'), true)
    assert.equal(isSecretKey(`${KEY}:ClientCredentials:ClientId`, 'ProjectTemplate'), false)
    assert.equal(isSecretKey(`${KEY}:BaseUrl`, 'ProjectTemplate'), false)
  })
})
