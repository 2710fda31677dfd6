/**
 * The SAML2 protocol modules without Fastify: metadata parsing by DOM (not text matching), DOCTYPE
 * refusal, whole-text NameID reading, the replay cache's bounds, certificate validity, and the
 * table that maps node-saml's uncoded errors to failure classes (pinned so that a library upgrade
 * that rewords them fails here, not in production).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { SamlStatusError } from '@node-saml/node-saml'
import { classifyLibraryError, readResponseEnvelope, Saml2ResponseError } from '../../src/saml2/service-provider.js'
import { isCurrentlyValid, partitionByValidity, readCertificate } from '../../src/saml2/certificates.js'
import { parseIdentityProviderMetadata, Saml2MetadataError } from '../../src/saml2/metadata.js'
import { ReplayCache } from '../../src/state/replay-cache.js'
import { EmbeddedStateStore } from '../../src/state/embedded-store.js'
import { StateStoreFullError } from '../../src/state/state-store.js'
import { parseXmlDocument, Saml2XmlError, textOf } from '../../src/saml2/xml.js'
import { RESPONSE_SHAPE } from '../../src/saml2/message-shape.js'
import { createSigningKey, expiredValidity } from '../helpers/saml2/certificates.js'

const signing = createSigningKey('metadata-signing')
const encryption = createSigningKey('metadata-encryption')
const MD = 'xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#"'
const key = (use: string | undefined, base64: string): string =>
  `<md:KeyDescriptor${use === undefined ? '' : ` use="${use}"`}><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\n  ${base64.slice(0, 64)}\n  ${base64.slice(64)}\n</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`

function metadata (inner: string, entityId = 'https://idp.example.test/entity'): string {
  return `<?xml version="1.0"?><md:EntityDescriptor ${MD} entityID="${entityId}"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${inner}</md:IDPSSODescriptor></md:EntityDescriptor>`
}

const REDIRECT = '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.test/sso"/>'

describe('IdP metadata parsing', () => {
  test('takes the entity id, the HTTP-Redirect SSO URL and every signing certificate (use="signing" or no use), never an encryption-only key', () => {
    const third = createSigningKey('metadata-unmarked')
    const parsed = parseIdentityProviderMetadata(metadata(
      `${key('signing', signing.certificateBase64)}${key('encryption', encryption.certificateBase64)}${key(undefined, third.certificateBase64)}` +
      `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.test/post"/>${REDIRECT}`))
    assert.deepEqual(parsed, {
      entityId: 'https://idp.example.test/entity',
      singleSignOnUrl: 'https://idp.example.test/sso',
      signingCertificates: [signing.certificateBase64, third.certificateBase64]
    })
  })

  test('a commented-out endpoint or key is not an endpoint or key (the document is read as XML, not as text)', () => {
    const parsed = parseIdentityProviderMetadata(metadata(
      '<!-- <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://evil.example/sso"/> -->' +
      `<!-- ${key('signing', encryption.certificateBase64)} -->${key('signing', signing.certificateBase64)}${REDIRECT}`))
    assert.equal(parsed.singleSignOnUrl, 'https://idp.example.test/sso')
    assert.deepEqual(parsed.signingCertificates, [signing.certificateBase64])
  })

  const invalid: ReadonlyArray<[string, string, string]> = [
    ['a DOCTYPE', `<!DOCTYPE md [<!ENTITY e "x">]>${metadata(key('signing', signing.certificateBase64) + REDIRECT)}`, 'document type declaration'],
    ['another root element', `<md:AffiliationDescriptor ${MD}/>`, 'root element is not md:EntityDescriptor or md:EntitiesDescriptor'],
    ['an empty aggregate', `<md:EntitiesDescriptor ${MD}/>`, 'no SAML 2.0 IDPSSODescriptor'],
    ['no entityID', metadata(key('signing', signing.certificateBase64) + REDIRECT, ''), 'entityID missing'],
    ['no HTTP-Redirect endpoint', metadata(key('signing', signing.certificateBase64)), 'no HTTP-Redirect SingleSignOnService'],
    ['no signing certificate', metadata(key('encryption', encryption.certificateBase64) + REDIRECT), 'no signing certificate'],
    ['a javascript: endpoint', metadata(key('signing', signing.certificateBase64) + REDIRECT.replace('https://idp.example.test/sso', 'javascript:alert(1)')), 'SingleSignOnService Location is not an http(s) URL'],
    ['malformed XML', '<md:EntityDescriptor', 'not well-formed']
  ]
  for (const [name, xml, reason] of invalid) {
    test(`metadata with ${name} is refused (${reason})`, () => {
      assert.throws(() => parseIdentityProviderMetadata(xml), (error: unknown) => error instanceof Saml2MetadataError && error.reason === reason)
    })
  }
})

describe('XML reading', () => {
  test('a DOCTYPE is refused before parsing, whatever its case or position', () => {
    for (const xml of ['<!DOCTYPE a><a/>', '<?xml version="1.0"?>\n<!doctype a [<!ENTITY b SYSTEM "file:///etc/passwd">]><a>&b;</a>', '<a/><!ENTITY x "y">']) {
      assert.throws(() => parseXmlDocument(xml, RESPONSE_SHAPE), (error: unknown) => error instanceof Saml2XmlError && error.reason === 'document type declaration')
    }
  })

  test('element text is read whole: a comment inside a NameID does not truncate it', () => {
    const document = parseXmlDocument('<NameID>victim@example.test<!---->.attacker.test</NameID>', RESPONSE_SHAPE)
    assert.equal(textOf(document.documentElement as never), 'victim@example.test.attacker.test')
  })

  test('a posted response with a comment, a DOCTYPE or a non-success status is refused before signature checks', () => {
    const response = (inner: string, status = 'urn:oasis:names:tc:SAML:2.0:status:Success'): string => Buffer.from(
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"><samlp:Status><samlp:StatusCode Value="${status}"/></samlp:Status>${inner}</samlp:Response>`).toString('base64')
    const failureOf = (value: string): string | undefined => {
      try {
        readResponseEnvelope(value)
        return undefined
      } catch (error) {
        return error instanceof Saml2ResponseError ? error.failure : 'other'
      }
    }
    assert.equal(failureOf(response('<saml:Assertion><!-- x --></saml:Assertion>')), 'malformed')
    assert.equal(failureOf(Buffer.from('<!DOCTYPE r><r/>').toString('base64')), 'malformed')
    assert.equal(failureOf(response('<saml:Assertion/>', 'urn:oasis:names:tc:SAML:2.0:status:Requester')), 'provider_error')
    assert.equal(failureOf(response('')), 'malformed')
    assert.equal(failureOf(response('<saml:Assertion/><saml:Assertion/>')), 'malformed')
    assert.equal(failureOf(response('<saml:EncryptedAssertion/>')), 'malformed')
    assert.equal(failureOf('not base64!'), 'malformed')
    assert.equal(failureOf(response('<saml:Assertion/>')), undefined)
  })
})

describe('assertion replay records', () => {
  const store = (maxReplay = 3): EmbeddedStateStore => new EmbeddedStateStore({ maxEntries: { session: 10, index: 10, flow: 10, replay: maxReplay, lock: 10 }, maxCharacters: 1_000_000 }, () => clock)
  let clock = 1000

  test('an id is accepted once until it expires, then may be recorded again', async () => {
    clock = 1000
    const cache = new ReplayCache(store(), 'saml2-assertion')
    assert.equal(await cache.remember('_a', 2000, 1000), true)
    clock = 1500
    assert.equal(await cache.remember('_a', 2000, 1500), false)
    clock = 2000
    assert.equal(await cache.remember('_a', 4000, 2000), true)
  })

  test('when full, expired ids are swept, and an unexpired id is never forgotten: the write is refused instead', async () => {
    clock = 1000
    const cache = new ReplayCache(store(3), 'saml2-assertion')
    await cache.remember('_1', 1500, 1000)
    await cache.remember('_2', 9000, 1000)
    await cache.remember('_3', 9000, 1000)
    clock = 2000
    assert.equal(await cache.remember('_4', 9000, 2000), true, 'the expired _1 made room')
    await assert.rejects(cache.remember('_5', 9000, 2000), (error: unknown) => error instanceof StateStoreFullError && error.kind === 'replay')
    assert.equal(await cache.remember('_2', 9000, 2000), false, 'unexpired ids survive')
  })
})

describe('certificate validity', () => {
  test('expired and not-yet-valid certificates are outside their validity period; PEM and base64 DER both read', () => {
    const now = Date.now()
    const expired = createSigningKey('expired', expiredValidity())
    const future = createSigningKey('future', { notBefore: new Date(now + 86_400_000), notAfter: new Date(now + 2 * 86_400_000) })
    const current = readCertificate(signing.certificatePem)
    assert.equal(readCertificate(signing.certificateBase64).fingerprint256, current.fingerprint256)
    const { current: valid, outside } = partitionByValidity([current, expired.certificate, future.certificate], now, 60_000)
    assert.deepEqual(valid.map((certificate) => certificate.fingerprint256), [current.fingerprint256])
    assert.deepEqual(outside.map((certificate) => certificate.fingerprint256), [expired.certificate.fingerprint256, future.certificate.fingerprint256])
    assert.equal(isCurrentlyValid(future.certificate, now + 86_400_000 - 30_000, 60_000), true, 'clock skew applies')
    assert.throws(() => readCertificate('not a certificate'))
  })
})

describe('node-saml error classification', () => {
  const table: ReadonlyArray<[string, string]> = [
    ['Invalid signature', 'signature'],
    ['Invalid document signature', 'signature'],
    ['Invalid signature: multiple assertions', 'signature'],
    ['Invalid signature: ID cannot refer to more than one element', 'signature'],
    ['Too many signatures found for this element', 'signature'],
    ['SAML assertion not yet valid', 'expired'],
    ['SAML assertion expired: clocks skewed too much', 'expired'],
    ['No valid subject confirmation found among those available in the SAML assertion', 'expired'],
    ['SAML assertion audience mismatch. Expected: a Received: b', 'audience'],
    ['SAML assertion has no AudienceRestriction', 'audience'],
    ['InResponseTo is not valid', 'correlation'],
    ['SubjectInResponseTo is not valid', 'correlation'],
    ['Unknown SAML issuer. Expected: a Received: b', 'issuer'],
    ['Missing SAML assertion', 'malformed']
  ]
  for (const [message, failure] of table) {
    test(`"${message}" -> ${failure}`, () => {
      assert.equal(classifyLibraryError(new Error(message)), failure)
    })
  }
  test('a SAML status error is a provider error; our own errors keep their class', () => {
    assert.equal(classifyLibraryError(new SamlStatusError('SAML provider returned Responder error: x', '<Status/>')), 'provider_error')
    assert.equal(classifyLibraryError(new Saml2ResponseError('replay', 'assertion already used')), 'replay')
  })
})
