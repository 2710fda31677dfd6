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

  test('an unparsable PEM: the entry ClientAssertionKeys:0 is named, and no part of the value', () => {
    const planted = key.privateKeyPem.replace(/\n[A-Za-z0-9+/]{12}/, '\nPLANTEDPLANTED')
    const errors = errorsOf({ ...jwt, ClientAssertionKeys: [planted] })
    assert.deepEqual(errors, [`${P}:ClientAssertionKeys:0: is not a readable PEM private key (PKCS#8 "PRIVATE KEY", "RSA PRIVATE KEY" or "EC PRIVATE KEY").`])
  })

  test('a certificate that does not match the key: the entry ClientAssertionCertificates:0 is named', () => {
    assert.deepEqual(errorsOf({ ...jwt, ClientAssertionKeys: [key.privateKeyPem], ClientAssertionCertificates: [other.certificatePem] }),
      [`${P}:ClientAssertionCertificates:0: holds a certificate that does not match any of the configured private keys.`])
  })

  // Issue 40, item 12: what check-config prints for the usual mistakes, naming the entry and never a part of the key.
  const mistakes: Array<{ name: string, settings: Record<string, unknown>, message: string }> = [
    { name: 'the second key unreadable', settings: { ClientAssertionKeys: [key.privateKeyPem, 'PLANTED-not-a-pem'] }, message: `${P}:ClientAssertionKeys:1: is not a readable PEM private key (PKCS#8 "PRIVATE KEY", "RSA PRIVATE KEY" or "EC PRIVATE KEY").` },
    { name: 'a certificate given as the key', settings: { ClientAssertionKeys: [key.certificatePem] }, message: `${P}:ClientAssertionKeys:0: holds a certificate ("BEGIN CERTIFICATE"), not a private key: the private key goes here, its certificate in ClientAssertionCertificates.` },
    { name: 'a public key given as the key', settings: { ClientAssertionKeys: [key.certificate.publicKey.export({ type: 'spki', format: 'pem' }).toString()] }, message: `${P}:ClientAssertionKeys:0: holds a public key ("BEGIN PUBLIC KEY"), not a private key: the private key goes here; the provider gets the public key or certificate.` },
    { name: 'a PEM with literal \\n for line breaks', settings: { ClientAssertionKeys: [key.privateKeyPem.trim().replaceAll('\n', '\\n')] }, message: `${P}:ClientAssertionKeys:0: holds a PEM whose line breaks are the two characters \\n (a backslash and an n): give the key with real line breaks (a key-per-file directory keeps them; in JSON write \\n, not \\\\n; in a shell "$(cat key.pem)").` },
    { name: 'the private key given as the second certificate', settings: { ClientAssertionKeys: [key.privateKeyPem, other.privateKeyPem], ClientAssertionCertificates: [key.certificatePem, other.privateKeyPem] }, message: `${P}:ClientAssertionCertificates:1: holds a private key, not a certificate: the private key goes in ClientAssertionKeys, its certificate ("BEGIN CERTIFICATE") here.` },
    { name: 'a certificate with literal \\n for line breaks', settings: { ClientAssertionKeys: [key.privateKeyPem], ClientAssertionCertificates: [key.certificatePem.trim().replaceAll('\n', '\\n')] }, message: `${P}:ClientAssertionCertificates:0: holds a PEM whose line breaks are the two characters \\n (a backslash and an n): give the certificate with real line breaks.` }
  ]
  for (const mistake of mistakes) {
    test(`${mistake.name}: a message of its own, naming the entry`, () => {
      const loaded = load({ ...jwt, ...mistake.settings })
      assert.deepEqual(loaded.errors.map((problem) => problem.message), [mistake.message])
      assert.equal(loaded.errors[0]?.key, mistake.message.slice(0, mistake.message.indexOf(': ')))
      for (const line of [...key.privateKeyPem.split('\n'), ...other.privateKeyPem.split('\n')].filter((value) => value.length > 8 && !value.startsWith('-----'))) {
        assert.ok(!mistake.message.includes(line))
      }
    })
  }

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

  test('a certificate of another key: refused, naming the scheme\'s ClientAssertionCertificates:0', () => {
    const result = validateRuntimeProvider(definition({ ClientAssertionKeys: [key.privateKeyPem], ClientAssertionCertificates: [other.certificatePem] }), { config, environmentName: 'Production' })
    assert.ok(!result.ok)
    assert.deepEqual(result.problems.map((problem) => problem.key), ['ProjectTemplate:Authentication:Schemes:Acme:ClientAssertionCertificates:0'])
  })
})
