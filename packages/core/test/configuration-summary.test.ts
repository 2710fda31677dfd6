/**
 * What `npm run check-config` says about the parts a new user adds from the guides (issue 40,
 * item 12): a JwtBearer scheme is listed as what it is (an API scheme, with the paths that take
 * tokens), not as a sign-in provider, and every downstream API is listed with how the app gets
 * its token. Names only: no URL, client id or secret.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatSummary, summarizeConfiguration } from '../src/configuration-summary.js'
import { ROOT_KEY } from '../src/config/schema.js'
import { loadTestConfiguration } from './helpers/app.js'

const CLIENT_SECRET = 'planted-client-secret-7f3a'

test('a JwtBearer scheme is an API scheme with its token paths, and each downstream API is listed with how its token is obtained', () => {
  const loaded = loadTestConfiguration({
    settings: {
      Hosting: { PublicOrigin: 'https://app.example.test' },
      Authentication: {
        Providers: { OpenIdConnect: { Enabled: true, Authority: 'https://login.example.test', ClientId: 'web', ClientSecret: CLIENT_SECRET, SaveTokens: true } },
        Schemes: { Api: { Type: 'JwtBearer', Authority: 'https://login.example.test', Audiences: ['orders-api'] } }
      },
      DownstreamApis: {
        Orders: { BaseUrl: 'https://orders.example.test/v1', UserToken: { Scheme: 'OpenIdConnect' }, ClientCredentials: { Authority: 'https://login.example.test', ClientId: 'orders-client', ClientSecret: CLIENT_SECRET } },
        Billing: { BaseUrl: 'https://billing.example.test', ClientCredentials: { Authority: 'https://login.example.test', ClientId: 'billing-client', ClientSecret: CLIENT_SECRET } }
      }
    }
  })
  assert.deepEqual(loaded.errors, [])
  const summary = summarizeConfiguration(loaded)
  assert.deepEqual(summary.providers, [{ name: 'OpenIdConnect', displayName: 'OpenID Connect' }])
  assert.deepEqual(summary.apiSchemes, [{ name: 'Api', type: 'JwtBearer' }])
  assert.deepEqual(summary.downstreamApis, [
    { name: 'Orders', userTokenScheme: 'OpenIdConnect', clientCredentials: true },
    { name: 'Billing', clientCredentials: true }
  ])
  const text = formatSummary(summary, ROOT_KEY)
  assert.match(text, /^Providers: {5}OpenID Connect \(OpenIdConnect\)$/m)
  assert.match(text, /^API schemes: {3}Api \(JwtBearer\): bearer tokens on \/api\/$/m)
  assert.match(text, /^Downstream: {4}Orders \(as the user with OpenIdConnect's token; as the app\), Billing \(as the app\)$/m)
  for (const value of [CLIENT_SECRET, 'orders-client', 'orders.example.test', 'login.example.test']) assert.equal(text.includes(value), false, value)
})

test('without them the summary says so', () => {
  const text = formatSummary(summarizeConfiguration(loadTestConfiguration({})), ROOT_KEY)
  assert.match(text, /^API schemes: {3}none \(API routes accept the session cookie only\)$/m)
  assert.match(text, /^Downstream: {4}none$/m)
})
