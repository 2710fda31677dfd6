/**
 * Startup validation of JwtBearer schemes (issue 35, item 1 and "Bad input"), through the
 * configuration loader as `server.ts` runs it: a scheme without Audiences is refused naming the
 * key, `none` and HMAC algorithms are refused, the issuer comes from Authority or from Issuer with
 * JwksUri (https; http only on loopback in Development), and a JwtBearer scheme is never the
 * challenge scheme. Messages name keys, never values.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadTestConfiguration } from '../helpers/app.js'
import type { TestSettings } from '../../src/testing/app.js'

const KEY = 'ProjectTemplate:Authentication:Schemes:Api'

function problemsOf (scheme: TestSettings, options: { nodeEnv?: string, settings?: TestSettings } = {}): string[] {
  const loaded = loadTestConfiguration({
    ...(options.nodeEnv === undefined ? {} : { nodeEnv: options.nodeEnv }),
    // A JwtBearer scheme needs a validated origin outside Development (tested in test/config/rules.test.ts).
    settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, ...options.settings, Authentication: { Schemes: { Api: { Type: 'JwtBearer', ...scheme } }, ...(options.settings?.Authentication as TestSettings | undefined) } }
  })
  return loaded.errors.map((problem) => problem.message)
}

describe('JwtBearer scheme settings at startup', () => {
  test('a valid scheme loads, with its defaults (asymmetric algorithms, 60 s skew, /api/ prefix)', () => {
    const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Schemes: { Api: { Type: 'JwtBearer', Authority: 'https://login.example.test/tenant/v2.0', Audiences: ['api://orders'] } } } } })
    assert.deepEqual(loaded.errors, [])
    const section = loaded.config.Authentication.Schemes.Api
    assert.equal(section?.Type, 'JwtBearer')
    assert.deepEqual(section?.Type === 'JwtBearer' ? [section.ValidAlgorithms, section.ClockSkewSeconds, section.Enabled] : [], [['RS256', 'PS256', 'ES256', 'EdDSA'], 60, true])
    assert.deepEqual(loaded.config.Authentication.Bearer.PathPrefixes, ['/api/'])
  })

  test('the token hardening defaults (issue 40): one day at most, typ not required, ID-token claims refused', () => {
    const loaded = loadTestConfiguration({ settings: { Authentication: { Schemes: { Api: { Type: 'JwtBearer', Authority: 'https://idp.example.test', Audiences: ['api://orders'] } } } } })
    const section = loaded.config.Authentication.Schemes.Api
    assert.deepEqual(section?.Type === 'JwtBearer' ? [section.MaxTokenLifetimeSeconds, section.RequireAccessTokenType, section.DangerouslyAllowIdTokenMarkers] : [], [86400, false, false])
  })

  const refused: ReadonlyArray<{ readonly name: string, readonly scheme: TestSettings, readonly message: string, readonly nodeEnv?: string }> = [
    { name: 'no Audiences', scheme: { Authority: 'https://idp.example.test' }, message: `${KEY}:Audiences is required: list the audience (aud) values this API accepts, such as its App ID URI (Entra ID), api://default (Okta) or the client id (Keycloak).` },
    { name: 'only empty Audiences', scheme: { Authority: 'https://idp.example.test', Audiences: [' '] }, message: `${KEY}:Audiences is required: list the audience (aud) values this API accepts, such as its App ID URI (Entra ID), api://default (Okta) or the client id (Keycloak).` },
    { name: 'neither Authority nor Issuer with JwksUri', scheme: { Audiences: ['a'] }, message: `${KEY}:Authority is required, or ${KEY}:Issuer and ${KEY}:JwksUri together.` },
    { name: 'Issuer without JwksUri', scheme: { Audiences: ['a'], Issuer: 'https://idp.example.test' }, message: `${KEY}:Authority is required, or ${KEY}:Issuer and ${KEY}:JwksUri together.` },
    { name: 'Authority and Issuer both', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', Issuer: 'https://idp.example.test' }, message: `${KEY}:Authority and ${KEY}:Issuer or ${KEY}:JwksUri are both set; set Authority (discovery) or Issuer with JwksUri, not both.` },
    { name: 'alg none', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', ValidAlgorithms: ['RS256', 'none'] }, message: `${KEY}:ValidAlgorithms may list only asymmetric JWS algorithms (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, Ed25519); none and the HMAC algorithms (HS256, HS384, HS512) are refused.` },
    { name: 'HS256', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', ValidAlgorithms: ['HS256'] }, message: `${KEY}:ValidAlgorithms may list only asymmetric JWS algorithms (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, Ed25519); none and the HMAC algorithms (HS256, HS384, HS512) are refused.` },
    { name: 'http Authority in Production', scheme: { Audiences: ['a'], Authority: 'http://localhost:8080' }, message: `${KEY}:Authority must be an absolute https URL (http is allowed only for a loopback host in Development).` },
    { name: 'Introspection:Endpoint without ClientId', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', Introspection: { Endpoint: 'https://idp.example.test/introspect' } }, message: `${KEY}:Introspection:ClientId is required when ${KEY}:Introspection:Endpoint or ${KEY}:Introspection:ClientSecret is set: it turns introspection on.` },
    { name: 'Introspection:ClientId without ClientSecret', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', Introspection: { ClientId: 'api' } }, message: `${KEY}:Introspection:ClientSecret is required with ${KEY}:Introspection:TokenEndpointAuthMethod client_secret_basic.` },
    { name: 'Introspection without Authority or Endpoint', scheme: { Audiences: ['a'], Issuer: 'https://idp.example.test', JwksUri: 'https://idp.example.test/jwks', Introspection: { ClientId: 'api', ClientSecret: 's' } }, message: `${KEY}:Introspection:Endpoint is required when the scheme has no Authority (no discovery names an introspection_endpoint).` },
    { name: 'Introspection private_key_jwt without keys', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', Introspection: { ClientId: 'api', TokenEndpointAuthMethod: 'private_key_jwt' } }, message: `${KEY}:Introspection:ClientAssertionKeys: a PEM private key is required with TokenEndpointAuthMethod private_key_jwt.` },
    { name: 'Introspection:Endpoint over http in Production', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', Introspection: { ClientId: 'api', ClientSecret: 's', Endpoint: 'http://idp.example.test/introspect' } }, message: `${KEY}:Introspection:Endpoint must be an absolute https URL (http is allowed only for a loopback host in Development).` },
    { name: 'MaxTokenLifetimeSeconds under a minute', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', MaxTokenLifetimeSeconds: 59 }, message: `${KEY}:MaxTokenLifetimeSeconds must be an integer from 60 to 604800.` },
    { name: 'MaxTokenLifetimeSeconds over a week', scheme: { Audiences: ['a'], Authority: 'https://idp.example.test', MaxTokenLifetimeSeconds: 604801 }, message: `${KEY}:MaxTokenLifetimeSeconds must be an integer from 60 to 604800.` },
    { name: 'http JwksUri on another host in Development', nodeEnv: 'Development', scheme: { Audiences: ['a'], Issuer: 'x', JwksUri: 'http://idp.example.test/jwks' }, message: `${KEY}:JwksUri must be an absolute https URL (http is allowed only for a loopback host in Development).` }
  ]
  for (const { name, scheme, message, nodeEnv } of refused) {
    test(`refused: ${name}`, () => {
      assert.deepEqual(problemsOf(scheme, nodeEnv === undefined ? {} : { nodeEnv }), [message])
    })
  }

  test('http on loopback is accepted in Development only', () => {
    assert.deepEqual(problemsOf({ Audiences: ['a'], Authority: 'http://localhost:8080' }, { nodeEnv: 'Development' }), [])
  })

  test('a JwtBearer scheme is never the default challenge scheme', () => {
    const messages = problemsOf({ Audiences: ['a'], Authority: 'https://idp.example.test' }, { settings: { Authentication: { DefaultChallengeScheme: 'Api' } } })
    assert.deepEqual(messages, ['ProjectTemplate:Authentication:DefaultChallengeScheme must be Cookies or the scheme of an enabled provider (Cookies).'])
  })

  test('no message carries a configured value', () => {
    const planted = 'https://PLANTED-bearer-authority.example.test'
    for (const message of problemsOf({ Authority: planted, Issuer: planted, ValidAlgorithms: ['HS256'] })) assert.equal(message.includes('PLANTED'), false)
  })
})
