/**
 * Startup validation of the OpenID Connect keys of issue 36: PushedAuthorization accepts Never,
 * IfAvailable and Require (default Never); TokenEndpointAuthMethod private_key_jwt needs
 * ClientAssertionKeys instead of ClientSecret, and an unparsable PEM or a certificate that does not
 * match the key is refused naming the setting, never any part of the key.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadTestConfiguration } from '../helpers/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { validateRuntimeProvider } from '../../src/providers/runtime-definitions.js'

const P = 'ProjectTemplate:Authentication:Providers:OpenIdConnect'
const OIDC_VALID = { Enabled: true, Authority: 'https://idp.example.test', ClientId: 'client', ClientSecret: 'secret-value' }
const key = createSigningKey('client')
const other = createSigningKey('other')

function load (oidc: Record<string, unknown>): ReturnType<typeof loadTestConfiguration> {
  return loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, ...oidc } } } } })
}

const errorsOf = (oidc: Record<string, unknown>): string[] => load(oidc).errors.map((problem) => problem.message)

describe('PushedAuthorization', () => {
  test('defaults to Never; IfAvailable and Require are valid', () => {
    assert.equal(load({}).config.Authentication.Providers.OpenIdConnect.PushedAuthorization, 'Never')
    assert.deepEqual(errorsOf({ PushedAuthorization: 'IfAvailable' }), [])
    assert.deepEqual(errorsOf({ PushedAuthorization: 'Require' }), [])
  })

  test('any other value is refused, naming the key', () => {
    const errors = errorsOf({ PushedAuthorization: 'Always' })
    assert.equal(errors.length, 1)
    assert.ok(errors[0]?.startsWith(`${P}:PushedAuthorization`), errors[0])
  })
})

describe('TokenEndpointAuthMethod private_key_jwt', () => {
  const jwt = { TokenEndpointAuthMethod: 'private_key_jwt', ClientSecret: '' }

  test('a key, with or without its certificate, and no ClientSecret: valid', () => {
    assert.deepEqual(errorsOf({ ...jwt, ClientAssertionKeys: [key.privateKeyPem] }), [])
    assert.deepEqual(errorsOf({ ...jwt, ClientAssertionKeys: [key.privateKeyPem, other.privateKeyPem], ClientAssertionCertificates: [other.certificatePem, key.certificatePem] }), [])
  })

  test('without a key: ClientAssertionKeys is named', () => {
    assert.deepEqual(errorsOf(jwt), [`${P}:ClientAssertionKeys: a PEM private key is required with TokenEndpointAuthMethod private_key_jwt.`])
  })

  test('an unparsable PEM: ClientAssertionKeys is named, and no part of the value', () => {
    const planted = key.privateKeyPem.replace(/\n[A-Za-z0-9+/]{12}/, '\nPLANTEDPLANTED')
    const errors = errorsOf({ ...jwt, ClientAssertionKeys: [planted] })
    assert.deepEqual(errors, [`${P}:ClientAssertionKeys: is not a readable PEM private key (PKCS#8 "PRIVATE KEY", "RSA PRIVATE KEY" or "EC PRIVATE KEY").`])
  })

  test('a certificate that does not match the key: ClientAssertionCertificates is named', () => {
    assert.deepEqual(errorsOf({ ...jwt, ClientAssertionKeys: [key.privateKeyPem], ClientAssertionCertificates: [other.certificatePem] }),
      [`${P}:ClientAssertionCertificates: holds a certificate that does not match any of the configured private keys.`])
  })

  test('the keys are secrets: the loaded configuration prints them redacted', () => {
    const loaded = load({ ...jwt, ClientAssertionKeys: [key.privateKeyPem] })
    const printed = JSON.stringify(loaded.config)
    assert.ok(!printed.includes('PRIVATE KEY'))
  })

  test('client secret methods still require ClientSecret', () => {
    assert.deepEqual(errorsOf({ ClientSecret: '' }), [`${P}:ClientSecret is required when the provider is enabled.`])
  })
})

describe('the same keys for a provider from the provider source', () => {
  const config = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' } } }).config
  const definition = (settings: Record<string, unknown>): Parameters<typeof validateRuntimeProvider>[0] => ({
    scheme: 'Acme',
    settings: { Type: 'OpenIdConnect', Authority: 'https://idp.acme.test', ClientId: 'acme-client', TokenEndpointAuthMethod: 'private_key_jwt', PushedAuthorization: 'Require', ...settings }
  })

  test('private_key_jwt with its key and PushedAuthorization Require: valid, the key held as a secret', () => {
    const result = validateRuntimeProvider(definition({ ClientAssertionKeys: [key.privateKeyPem], ClientAssertionCertificates: [key.certificatePem] }), { config, environmentName: 'Production' })
    assert.ok(result.ok)
    const settings = result.provider.instance.settings as { ClientAssertionKeys: unknown[], PushedAuthorization: string }
    assert.equal(settings.PushedAuthorization, 'Require')
    assert.equal(JSON.stringify(settings.ClientAssertionKeys), '["[redacted]"]')
  })

  test('a certificate of another key: refused, naming the scheme\'s ClientAssertionCertificates', () => {
    const result = validateRuntimeProvider(definition({ ClientAssertionKeys: [key.privateKeyPem], ClientAssertionCertificates: [other.certificatePem] }), { config, environmentName: 'Production' })
    assert.ok(!result.ok)
    assert.deepEqual(result.problems.map((problem) => problem.key), ['ProjectTemplate:Authentication:Schemes:Acme:ClientAssertionCertificates'])
  })
})
