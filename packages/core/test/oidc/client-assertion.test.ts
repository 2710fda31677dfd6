/**
 * `private_key_jwt` keys and assertions (issue 36, item 2; RFC 7523): the PEM keys and certificates
 * are parsed once and every refusal names the setting, never the key; each assertion is signed by
 * the newest key with its `kid` (RFC 7638 thumbprint), `x5t#S256` and `x5t` when it has a
 * certificate, a unique `jti` and a lifetime of 60 seconds.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, importSPKI, jwtVerify } from 'jose'
import { createSigningKey, expiredValidity } from '../helpers/saml2/certificates.js'
import { ASSERTION_LIFETIME_SECONDS, ClientAssertionKeyError, privateKeyJwtAuthentication, readClientAssertionKeys, signClientAssertion, signingKeyOf, type ClientAssertionKeyProblem } from '../../src/oidc/client-assertion.js'

const SETTINGS = { keys: 'ProjectTemplate:Authentication:Providers:OpenIdConnect:ClientAssertionKeys', certificates: 'ProjectTemplate:Authentication:Providers:OpenIdConnect:ClientAssertionCertificates' }
const DAY = 24 * 60 * 60 * 1000
const AUDIENCE = 'https://idp.example/token'

const current = createSigningKey('current')
const next = createSigningKey('next', { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 30 * DAY) })
const stranger = createSigningKey('stranger')
const pem = (type: 'rsa' | 'ec' | 'ed25519' | 'dsa', options: Record<string, unknown> = {}): string =>
  (generateKeyPairSync as (type: string, options: Record<string, unknown>) => { privateKey: { export: (o: unknown) => string | Buffer } })(type, options).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()

function refusal (keys: string, certificates: string): ClientAssertionKeyError {
  try {
    readClientAssertionKeys(keys, certificates, SETTINGS)
  } catch (error) {
    assert.ok(error instanceof ClientAssertionKeyError)
    return error
  }
  assert.fail('the keys were accepted')
}

describe('startup refusals name the setting, never the key', () => {
  const cases: Array<{ name: string, keys: string, certificates?: string, setting: string, problem: ClientAssertionKeyProblem }> = [
    { name: 'no key', keys: '  ', setting: SETTINGS.keys, problem: 'missing' },
    { name: 'text that is not PEM', keys: 'PLANTED-not-a-pem-MIIEvQ', setting: SETTINGS.keys, problem: 'unparsable' },
    { name: 'a PEM block with a damaged body', keys: current.privateKeyPem.replace(/\n[A-Za-z0-9+/]{10}/, '\nPLANTED!!!'), setting: SETTINGS.keys, problem: 'unparsable' },
    { name: 'a certificate where the key belongs', keys: current.certificatePem, setting: SETTINGS.keys, problem: 'certificate_as_key' },
    { name: 'an encrypted key', keys: '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n', setting: SETTINGS.keys, problem: 'encrypted' },
    { name: 'three keys', keys: current.privateKeyPem + next.privateKeyPem + stranger.privateKeyPem, setting: SETTINGS.keys, problem: 'too_many' },
    { name: 'an RSA key of 1024 bits', keys: pem('rsa', { modulusLength: 1024 }), setting: SETTINGS.keys, problem: 'weak_key' },
    { name: 'an EC key on secp256k1', keys: pem('ec', { namedCurve: 'secp256k1' }), setting: SETTINGS.keys, problem: 'unsupported_key' },
    { name: 'a certificate of another key', keys: current.privateKeyPem, certificates: stranger.certificatePem, setting: SETTINGS.certificates, problem: 'certificate_mismatch' },
    { name: 'a damaged certificate', keys: current.privateKeyPem, certificates: current.certificatePem.replace(/\n[A-Za-z0-9+/]{10}/, '\nPLANTED!!!'), setting: SETTINGS.certificates, problem: 'certificate_unparsable' },
    { name: 'a private key where the certificate belongs', keys: current.privateKeyPem, certificates: next.privateKeyPem, setting: SETTINGS.certificates, problem: 'key_as_certificate' },
    { name: 'two certificates of one key', keys: current.privateKeyPem, certificates: current.certificatePem + current.certificatePem, setting: SETTINGS.certificates, problem: 'certificate_duplicate' }
  ]
  for (const entry of cases) {
    test(`${entry.name}: ${entry.problem}, naming ${entry.setting === SETTINGS.keys ? 'ClientAssertionKeys' : 'ClientAssertionCertificates'}`, () => {
      const error = refusal(entry.keys, entry.certificates ?? '')
      assert.equal(error.problem, entry.problem)
      assert.equal(error.setting, entry.setting)
      assert.ok(error.message.startsWith(`${entry.setting}: `))
      assert.equal(error.code, 'CLIENT_ASSERTION_KEY_INVALID')
      for (const secret of [current.privateKeyPem, next.privateKeyPem, 'PLANTED']) {
        for (const line of secret.split('\n').filter((value) => value.length > 8 && !value.startsWith('-----'))) assert.ok(!error.message.includes(line))
      }
    })
  }

  test('EC P-256 and Ed25519 keys are accepted, with ES256 and EdDSA', () => {
    assert.deepEqual(readClientAssertionKeys(pem('ec', { namedCurve: 'P-256' }), '', SETTINGS).map((key) => key.alg), ['ES256'])
    assert.deepEqual(readClientAssertionKeys(pem('ed25519'), '', SETTINGS).map((key) => key.alg), ['EdDSA'])
  })
})

describe('assertions', () => {
  test('one key with its certificate: RS256, kid the RFC 7638 thumbprint, x5t#S256 and x5t of the DER certificate; iss, sub, aud, jti, a 60 second lifetime', async () => {
    const keys = readClientAssertionKeys(current.privateKeyPem, current.certificatePem, SETTINGS)
    const assertion = await signClientAssertion(keys, 'client-1', AUDIENCE)
    const header = decodeProtectedHeader(assertion)
    const publicKey = await importSPKI(current.certificate.publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'RS256')
    assert.equal(header.alg, 'RS256')
    assert.equal(header.typ, 'JWT')
    assert.equal(header.kid, await calculateJwkThumbprint(await exportJWK(publicKey)))
    assert.equal(header['x5t#S256'], createHash('sha256').update(current.certificate.raw).digest('base64url'))
    assert.equal(header.x5t, createHash('sha1').update(current.certificate.raw).digest('base64url'))
    const { payload } = await jwtVerify(assertion, publicKey, { issuer: 'client-1', subject: 'client-1', audience: AUDIENCE })
    assert.equal(payload.exp! - payload.iat!, ASSERTION_LIFETIME_SECONDS)
    assert.equal(payload.nbf, payload.iat)
    assert.match(String(payload.jti), /^[A-Za-z0-9_-]{43}$/)
  })

  test('a key without a certificate: kid, no x5t headers', async () => {
    const keys = readClientAssertionKeys(current.privateKeyPem, '', SETTINGS)
    const header = decodeProtectedHeader(await signClientAssertion(keys, 'client-1', AUDIENCE))
    assert.equal(typeof header.kid, 'string')
    assert.equal(header.x5t, undefined)
    assert.equal(header['x5t#S256'], undefined)
  })

  test('every assertion has its own jti', async () => {
    const keys = readClientAssertionKeys(current.privateKeyPem, '', SETTINGS)
    const ids = new Set<unknown>()
    for (let index = 0; index < 20; index++) ids.add(decodeJwt(await signClientAssertion(keys, 'client-1', AUDIENCE)).jti)
    assert.equal(ids.size, 20)
  })
})

describe('rotation: two keys, the newest signs', () => {
  const kidOf = (keys: ReturnType<typeof readClientAssertionKeys>, index: number): string => keys[index]!.kid

  test('certificates: the later NotBefore signs, whatever the order of the lists', async () => {
    const keys = readClientAssertionKeys(next.privateKeyPem + current.privateKeyPem, current.certificatePem + next.certificatePem, SETTINGS)
    assert.equal(decodeProtectedHeader(await signClientAssertion(keys, 'client-1', AUDIENCE)).kid, kidOf(keys, 0))
    assert.equal(decodeProtectedHeader(await signClientAssertion(keys, 'client-1', AUDIENCE)).x5t, createHash('sha1').update(next.certificate.raw).digest('base64url'))
  })

  test('a certificate not valid yet does not sign until its NotBefore', () => {
    const future = createSigningKey('future', { notBefore: new Date(Date.now() + DAY), notAfter: new Date(Date.now() + 60 * DAY) })
    const keys = readClientAssertionKeys(current.privateKeyPem + future.privateKeyPem, current.certificatePem + future.certificatePem, SETTINGS)
    assert.equal(signingKeyOf(keys, Date.now()).kid, kidOf(keys, 0))
    assert.equal(signingKeyOf(keys, Date.now() + 2 * DAY).kid, kidOf(keys, 1))
  })

  test('an expired certificate does not sign while another is valid', () => {
    const expired = createSigningKey('expired', expiredValidity())
    const keys = readClientAssertionKeys(current.privateKeyPem + expired.privateKeyPem, current.certificatePem + expired.certificatePem, SETTINGS)
    assert.equal(signingKeyOf(keys, Date.now()).kid, kidOf(keys, 0))
  })

  test('keys without certificates: the later listed signs', () => {
    const keys = readClientAssertionKeys(current.privateKeyPem + next.privateKeyPem, '', SETTINGS)
    assert.equal(signingKeyOf(keys, Date.now()).kid, kidOf(keys, 1))
  })
})

describe('the audience openid-client is given (issue 40, item 18)', () => {
  const keys = readClientAssertionKeys(current.privateKeyPem, '', SETTINGS)
  // A discovery document whose endpoints are on another server than its issuer.
  const as = { issuer: 'https://hostile.example', token_endpoint: 'https://victim.example/token', pushed_authorization_request_endpoint: 'https://hostile.example/par' }
  async function audienceOf (audience: 'Issuer' | 'Endpoint' | undefined, parameters: Record<string, string>): Promise<unknown> {
    const body = new URLSearchParams(parameters)
    await (audience === undefined ? privateKeyJwtAuthentication(keys) : privateKeyJwtAuthentication(keys, audience))(as, { client_id: 'client-1' }, body, new Headers())
    return decodeJwt(body.get('client_assertion') ?? '').aud
  }

  test('Issuer (the default): the issuer as one string at every endpoint, never the token endpoint discovery names', async () => {
    assert.equal(await audienceOf(undefined, { grant_type: 'authorization_code' }), 'https://hostile.example')
    assert.equal(await audienceOf('Issuer', { response_type: 'code' }), 'https://hostile.example')
    assert.equal(await audienceOf('Issuer', { grant_type: 'refresh_token' }), 'https://hostile.example')
  })

  test('Endpoint: the endpoint the request goes to (a grant: the token endpoint; a push: the PAR endpoint)', async () => {
    assert.equal(await audienceOf('Endpoint', { grant_type: 'client_credentials' }), 'https://victim.example/token')
    assert.equal(await audienceOf('Endpoint', { response_type: 'code' }), 'https://hostile.example/par')
  })
})
