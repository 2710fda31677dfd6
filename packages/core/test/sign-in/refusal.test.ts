/**
 * SignInRefusal (src/errors.ts) is the one base of every protocol refusal, as a data
 * table: each class is a SignInRefusal and an Error, keeps its own name, failure class, code,
 * diagnostics, fixed message and cause; the plugins rely on `instanceof SignInRefusal` alone.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SignInRefusal, TokenRefreshError } from '../../src/index.js'
import { VendorFlowError } from '../../src/oauth/vendor-client.js'
import { LogoutTokenError } from '../../src/oidc/back-channel-logout.js'
import { OpenIdConnectError } from '../../src/oidc/relying-party.js'
import { Saml2EncryptionAlgorithmError, Saml2ResponseError } from '../../src/saml2/service-provider.js'
import { Saml2XmlError } from '../../src/saml2/xml.js'

const cause = new Error('library detail')

interface Case {
  readonly refusal: SignInRefusal<string, object>
  readonly name: string
  readonly failure: string
  readonly message: string
  readonly diagnostics: object
  readonly code?: string | undefined
  readonly cause?: unknown
}

const CASES: readonly Case[] = [
  {
    refusal: new Saml2ResponseError('audience', 'Audience is not this SP', { cause }),
    name: 'Saml2ResponseError',
    failure: 'audience',
    message: 'Audience is not this SP',
    diagnostics: {},
    cause
  },
  {
    refusal: new Saml2EncryptionAlgorithmError('content', 'http://www.w3.org/2001/04/xmlenc#tripledes-cbc'),
    name: 'Saml2EncryptionAlgorithmError',
    failure: 'decryption',
    message: 'content algorithm http://www.w3.org/2001/04/xmlenc#tripledes-cbc not accepted: set the IdP content (data) encryption algorithm to http://www.w3.org/2009/xmlenc11#aes256-gcm (Keycloak: AES_256_GCM)',
    diagnostics: {
      algorithm: 'http://www.w3.org/2001/04/xmlenc#tripledes-cbc',
      algorithmRole: 'content',
      remedy: 'set the IdP content (data) encryption algorithm to http://www.w3.org/2009/xmlenc11#aes256-gcm (Keycloak: AES_256_GCM)'
    }
  },
  {
    refusal: new OpenIdConnectError('token', 'TOKEN_ENDPOINT_ERROR', { cause, diagnostics: { httpStatus: 400, oauthError: 'invalid_client' } }),
    name: 'OpenIdConnectError',
    failure: 'token',
    message: 'OpenID Connect sign-in failed (token)',
    diagnostics: { httpStatus: 400, oauthError: 'invalid_client' },
    code: 'TOKEN_ENDPOINT_ERROR',
    cause
  },
  {
    refusal: new OpenIdConnectError('nonce', undefined),
    name: 'OpenIdConnectError',
    failure: 'nonce',
    message: 'OpenID Connect sign-in failed (nonce)',
    diagnostics: {},
    code: undefined
  },
  {
    refusal: new VendorFlowError('userinfo', 'USERINFO_RESPONSE_INVALID', { diagnostics: { httpStatus: 200 } }),
    name: 'VendorFlowError',
    failure: 'userinfo',
    message: 'OAuth sign-in failed (userinfo: USERINFO_RESPONSE_INVALID)',
    diagnostics: { httpStatus: 200 },
    code: 'USERINFO_RESPONSE_INVALID'
  },
  {
    refusal: new LogoutTokenError('events', 'LOGOUT_TOKEN_EVENTS', { cause }),
    name: 'LogoutTokenError',
    failure: 'events',
    message: 'Logout token refused (events)',
    diagnostics: {},
    code: 'LOGOUT_TOKEN_EVENTS',
    cause
  },
  {
    refusal: new TokenRefreshError('invalid_grant', { httpStatus: 400, oauthError: 'invalid_grant' }, { cause }),
    name: 'TokenRefreshError',
    failure: 'invalid_grant',
    message: 'Token refresh failed (invalid_grant)',
    diagnostics: { httpStatus: 400, oauthError: 'invalid_grant' },
    cause
  },
  {
    refusal: new TokenRefreshError('unavailable'),
    name: 'TokenRefreshError',
    failure: 'unavailable',
    message: 'Token refresh failed (unavailable)',
    diagnostics: {}
  }
]

for (const expected of CASES) {
  test(`${expected.name} (${expected.failure}) is a SignInRefusal with its own name, failure class, diagnostics and cause`, () => {
    const { refusal } = expected
    assert.ok(refusal instanceof SignInRefusal)
    assert.ok(refusal instanceof Error)
    assert.equal(refusal.name, expected.name)
    assert.equal(refusal.failure, expected.failure)
    assert.equal(refusal.message, expected.message)
    assert.deepEqual(refusal.diagnostics, expected.diagnostics)
    if ('code' in expected) assert.equal((refusal as SignInRefusal<string, object> & { code: unknown }).code, expected.code)
    if ('cause' in expected) assert.equal(refusal.cause, expected.cause)
    else assert.equal(Object.hasOwn(refusal, 'cause'), false)
  })
}

test('TokenRefreshError still says which failures end the session', () => {
  assert.deepEqual(
    (['invalid_grant', 'id_token', 'unavailable'] as const).map((failure) => new TokenRefreshError(failure).endsSession),
    [true, true, false])
})

test('a refusal of XML before any protocol check is not a SignInRefusal (it has no failure class of its own)', () => {
  assert.equal(new Saml2XmlError('document type declaration') instanceof SignInRefusal, false)
})
