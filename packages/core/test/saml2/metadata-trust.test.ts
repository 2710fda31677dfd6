/**
 * IdP metadata as federations and ADFS/Entra publish it: an EntitiesDescriptor aggregate (the IdP
 * selected by Providers:Saml2:IdpEntityId; required when the aggregate lists several IdPs) and
 * the metadata's own XML signature (Providers:Saml2:MetadataSigningCertificates), checked with
 * real XML-DSig made by xml-crypto. Untrusted metadata leaves Saml2 unavailable with a readiness
 * reason and a `saml2.metadata.failed` log line; it is never used.
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { SignedXml } from 'xml-crypto'
import { parseIdentityProviderMetadata, Saml2MetadataError, verifyMetadataSignature } from '../../src/saml2/metadata.js'
import type { TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey, type TestSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'

const MD_NS = 'urn:oasis:names:tc:SAML:2.0:metadata'
const DAY = 24 * 60 * 60 * 1000

const withoutDeclaration = (xml: string): string => xml.replace(/^<\?xml[^>]*\?>\s*/, '')

function aggregate (entities: readonly string[], attributes = ''): string {
  return `<md:EntitiesDescriptor xmlns:md="${MD_NS}" ID="_aggregate" Name="urn:example:federation"${attributes}>${entities.map(withoutDeclaration).join('')}</md:EntitiesDescriptor>`
}

/** Another IdP of the federation, with its own entity id and endpoints. */
function otherIdp (idp: TestIdentityProvider, entityId: string): string {
  return idp.metadata().replace(`entityID="${idp.entityId}"`, `entityID="${entityId}"`).replaceAll(`${idp.origin}/sso`, 'https://other.example/sso')
}

const SP_ENTITY = `<md:EntityDescriptor xmlns:md="${MD_NS}" entityID="https://sp.example/"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example/acs" index="1"/></md:SPSSODescriptor></md:EntityDescriptor>`

/** Enveloped signature of the root (reference #ID), as federation signers (pyFF, ADFS) produce. */
function signRoot (xml: string, key: TestSigningKey, referenceXpath = '/*'): string {
  const signer = new SignedXml({ privateKey: key.privateKeyPem, publicCert: key.certificatePem, signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#' })
  signer.addReference({ xpath: referenceXpath, transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'], digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256' })
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: referenceXpath, action: 'prepend' } })
  return signer.getSignedXml()
}

async function readinessReason (subject: TestApp, expected: string): Promise<string | undefined> {
  const deadline = Date.now() + 5000
  let reason: string | undefined
  while (Date.now() < deadline) {
    const ready = await subject.app.inject({ method: 'GET', url: '/health/ready' })
    // The app has one provider (Saml2): the aggregate's one failure class is its reason.
    reason = (ready.json() as { checks?: { providers?: { reasons?: string[] } } }).checks?.providers?.reasons?.[0]
    if (reason === expected) return reason
    await sleep(20)
  }
  return reason
}

describe('Saml2 metadata aggregates and metadata signatures', () => {
  const idp = new TestIdentityProvider()
  const federation = createSigningKey('federation-signer')
  const stranger = createSigningKey('not-the-federation')
  const apps: TestApp[] = []

  before(async () => {
    await idp.start()
    idp.users.set('ada', { nameId: 'ada@example.test', attributes: {} })
    const twoIdps = (): string => aggregate([idp.metadata(), otherIdp(idp, 'https://other.example/idp'), SP_ENTITY])
    idp.documents.set('/aggregate-two', twoIdps)
    idp.documents.set('/aggregate-one', () => aggregate([SP_ENTITY, idp.metadata()]))
    idp.documents.set('/aggregate-nested', () => aggregate([aggregate([otherIdp(idp, 'https://other.example/idp')]).replace('ID="_aggregate"', 'ID="_inner"'), idp.metadata()]))
    idp.documents.set('/signed', () => signRoot(twoIdps(), federation))
    idp.documents.set('/signed-by-stranger', () => signRoot(twoIdps(), stranger))
    // The SSO endpoint redirected after signing: the digest no longer matches.
    idp.documents.set('/signed-then-tampered', () => signRoot(twoIdps(), federation).replace(`${idp.origin}/sso"`, 'https://evil.example/sso"'))
    idp.documents.set('/signed-expired', () => signRoot(aggregate([idp.metadata()], ` validUntil="${new Date(Date.now() - DAY).toISOString()}"`), federation))
    // Wrapping: an unsigned evil aggregate at the root, the genuinely signed one nested inside it.
    idp.documents.set('/signed-wrapped', () => aggregate([
      otherIdp(idp, idp.entityId).replace('<md:EntityDescriptor', '<md:EntityDescriptor ID="_evil"'),
      withoutDeclaration(signRoot(twoIdps(), federation)).replace('ID="_aggregate"', 'ID="_signed"')
    ]).replace('ID="_aggregate"', 'ID="_root"'))
    // The signature covers one child entity, not the root.
    idp.documents.set('/signed-child-only', () => signRoot(aggregate([otherIdp(idp, 'https://other.example/idp').replace('<md:EntityDescriptor', '<md:EntityDescriptor ID="_child"'), idp.metadata()]), federation, "//*[@ID='_child']"))
  })
  after(async () => {
    for (const subject of apps) await subject.app.close()
    await idp.stop()
  })

  async function appFor (path: string, overrides: Record<string, string | string[]> = {}): Promise<TestApp> {
    const subject = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}${path}`, ...overrides })
    apps.push(subject)
    return subject
  }

  async function signsIn (subject: TestApp): Promise<void> {
    await waitForSaml2(subject.app)
    idp.nextUser = 'ada'
    const flow = await startSaml2SignIn(subject.app)
    assert.ok(flow.request.acsUrl !== '')
    const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: { nameId: 'ada@example.test', attributes: {} }, inResponseTo: flow.request.id })
    const response = await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
  }

  test('an aggregate with several IdPs and IdpEntityId: the selected IdP signs in', async () => {
    await signsIn(await appFor('/aggregate-two', { IdpEntityId: idp.entityId }))
  })

  test('an aggregate with several IdPs and no IdpEntityId: unavailable (metadata_invalid), the log names IdpEntityId', async () => {
    const subject = await appFor('/aggregate-two')
    assert.equal(await readinessReason(subject, 'metadata_invalid'), 'metadata_invalid')
    const failed = subject.logs.events('saml2.metadata.failed')
    assert.ok(failed.some((record) => String(record.detail).includes('IdpEntityId')))
  })

  test('an aggregate with one IdP (and SPs) needs no IdpEntityId; nested aggregates are searched', async () => {
    await signsIn(await appFor('/aggregate-one'))
    await signsIn(await appFor('/aggregate-nested', { IdpEntityId: idp.entityId }))
  })

  test('IdpEntityId not in the aggregate, or not the entityID of a single EntityDescriptor: unavailable', async () => {
    assert.equal(await readinessReason(await appFor('/aggregate-two', { IdpEntityId: 'https://absent.example/idp' }), 'metadata_invalid'), 'metadata_invalid')
    assert.equal(await readinessReason(await appFor('/metadata', { IdpEntityId: 'https://absent.example/idp' }), 'metadata_invalid'), 'metadata_invalid')
  })

  test('signed metadata verified with MetadataSigningCertificates: the IdP signs in', async () => {
    await signsIn(await appFor('/signed', { IdpEntityId: idp.entityId, MetadataSigningCertificates: [stranger.certificatePem, federation.certificateBase64] }))
  })

  for (const [name, path] of [
    ['unsigned metadata', '/aggregate-two'],
    ['metadata signed by another key', '/signed-by-stranger'],
    ['metadata changed after signing', '/signed-then-tampered'],
    ['signed metadata past its validUntil', '/signed-expired'],
    ['a signed aggregate wrapped inside an unsigned one', '/signed-wrapped'],
    ['a signature covering one child entity, not the root', '/signed-child-only']
  ] as const) {
    test(`${name} with MetadataSigningCertificates: not trusted (metadata_signature), a log line, no sign-in`, async () => {
      const subject = await appFor(path, { IdpEntityId: idp.entityId, MetadataSigningCertificates: [federation.certificatePem] })
      assert.equal(await readinessReason(subject, 'metadata_signature'), 'metadata_signature')
      assert.ok(subject.logs.events('saml2.metadata.failed').some((record) => record.reason === 'metadata_signature'))
      const challenge = await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2' })
      assert.equal(challenge.statusCode, 503)
    })
  }

  test('verifyMetadataSignature returns only the signed bytes; parse reads the selected IdP from them', async () => {
    const signed = await verifyMetadataSignature(signRoot(aggregate([idp.metadata(), otherIdp(idp, 'https://other.example/idp')]), federation), [federation.certificatePem])
    const description = parseIdentityProviderMetadata(signed, { entityId: 'https://other.example/idp' })
    assert.equal(description.singleSignOnUrl, 'https://other.example/sso')
    await assert.rejects(verifyMetadataSignature(`<!DOCTYPE x>${aggregate([idp.metadata()])}`, [federation.certificatePem]), Saml2MetadataError)
  })
})
