/**
 * SAML2 attack corpus (issue 6, "SAML2 negatives"): every hostile response is posted to the real
 * ACS of the real app, signed with real XML-DSig by the test IdP (xml-crypto, RSA-SHA256,
 * exclusive C14N) and then tampered with the way an attacker would. Each case asserts: no session
 * cookie, no 5xx (a redirect to the login page), exactly one `external.sign_in.failed` line with
 * the expected failure class and no `external.sign_in.succeeded`. Entity expansion (billion
 * laughs, external entities) is guarded without a clock: every DOCTYPE payload, decoded as the ACS
 * decodes it, is refused by parseXmlDocument before any parser sees it, so nothing is expanded
 * (no time or heap assertions, which would flake on a loaded machine). At the end every captured
 * log line is scanned for every posted SAMLResponse and for the attacker-chosen identities.
 *
 * XML signature wrapping follows the XSW1-XSW8 catalogue of Somorovsky et al., "On Breaking SAML:
 * Be Whoever You Want to Be" (USENIX Security 2012), as implemented by SAML Raider: XSW1/XSW2 wrap
 * a signed Response (evil Response outside, the signed original inside the Signature or beside
 * it), XSW3-XSW8 wrap a signed Assertion. Each variant is built twice: the evil copy with a fresh
 * ID (the IdP's signature over the moved original still verifies, checked with xml-crypto) and
 * with the signed ID duplicated. A second pass calls validateResponse() directly, bypassing
 * readResponseEnvelope's structure checks, so the layer underneath is proven on its own.
 *
 * Payload data lives in test/saml2/corpora/*.json so the corpus can grow without code.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { validateResponse, type Saml2FailureClass, classifyLibraryError } from '../../src/saml2/service-provider.js'
import { ReplayCache } from '../../src/state/replay-cache.js'
import { parseXmlDocument, Saml2XmlError } from '../../src/saml2/xml.js'
import { RESPONSE_SHAPE } from '../../src/saml2/message-shape.js'
import { EmbeddedStateStore } from '../../src/state/embedded-store.js'
import { cookieHeaderFrom, type TestApp } from '../helpers/app.js'
import {
  assertNoLeak, buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2, type StartedFlow
} from '../helpers/saml2/app.js'
import { createSigningKey, expiredValidity } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider, type ResponseOptions, type TestUser } from '../helpers/saml2/identity-provider.js'
import { ATTACKER_NAME_ID, originalSignatureVerifies, wrap, XSW_AT_ACS, XSW_DESCRIPTIONS, type XswVariant } from '../helpers/saml2/xsw.js'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

/** The attacker's own, legitimate IdP account: what the IdP really signs. */
const MALLORY: TestUser = { nameId: 'mallory@example.com', attributes: { role: ['Reader'] } }
const ATTACKER: TestUser = { nameId: ATTACKER_NAME_ID, attributes: { role: ['Administrator'] } }

/** Per-case bounds: generous for 2 cores, far below what an entity expansion needs. */

interface DoctypePayload { readonly name: string, readonly prolog: string, readonly nameIdReplacement?: string, readonly encoding?: 'utf8' | 'utf16le' }
interface NameIdInjection { readonly name: string, readonly signedNameId: string, readonly injected: string, readonly truncated: string }
const corpus = <T>(name: string): T[] => (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'saml2', 'corpora', name), 'utf8')) as { values: T[] }).values
const DOCTYPE_PAYLOADS = corpus<DoctypePayload>('doctype-entity-expansion-and-xxe.json')
const NAME_ID_INJECTIONS = corpus<NameIdInjection>('name-id-comment-truncation.json')

const encode = (xml: string, encoding: 'utf8' | 'utf16le' = 'utf8'): string =>
  (encoding === 'utf16le' ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]) : Buffer.from(xml, 'utf8')).toString('base64')
const decode = (samlResponse: string): string => Buffer.from(samlResponse, 'base64').toString('utf8')

/** Replaces the (escaped) NameID text of a signed response; a plain substring, asserted present once. */
function replaceNameId (xml: string, from: string, to: string): string {
  const marker = `>${from}</saml:NameID>`
  assert.equal(xml.split(marker).length, 2, 'fixture: the NameID appears once')
  return xml.replace(marker, `>${to}</saml:NameID>`)
}

// ---------------------------------------------------------------------------------------------
// The table

type AppName = 'main' | 'responseSignatureOnly' | 'certificatesOutsideValidity'

/** What a case posts, given a started flow on its app. */
interface Posted {
  readonly SAMLResponse: string
  readonly RelayState?: string | undefined
  readonly cookie?: string
}

interface CaseContext {
  readonly idp: TestIdentityProvider
  readonly flow: StartedFlow
  /** Options for a correct response answering `flow` for the attacker-chosen identity. */
  readonly base: ResponseOptions
  readonly subject: TestApp
}

interface AttackCase {
  /** States the property the payload breaks. */
  readonly name: string
  readonly app: AppName
  readonly failure: Saml2FailureClass
  /** Identities that must never become a session subject nor appear in a log line. */
  readonly attackerNameIds: readonly string[]
  readonly build: (context: CaseContext) => Posted | Promise<Posted>
  /** XSW only: whether the IdP's signature over the moved original still verifies (fixture check). */
  readonly signatureIntact?: boolean
}

const keys = {
  untrusted: createSigningKey('untrusted-idp'),
  expired: createSigningKey('expired-idp', expiredValidity()),
  notYetValid: createSigningKey('not-yet-valid-idp', { notBefore: new Date(Date.now() + 30 * DAY), notAfter: new Date(Date.now() + 400 * DAY) })
}

function xswCases (): AttackCase[] {
  const cases: AttackCase[] = []
  for (const variant of ['XSW1', 'XSW2', 'XSW3', 'XSW4', 'XSW5', 'XSW6', 'XSW7', 'XSW8'] as const) {
    const responseLevel = variant === 'XSW1' || variant === 'XSW2'
    for (const id of ['fresh', 'duplicate'] as const) {
      cases.push({
        name: `${variant} (${id === 'fresh' ? 'evil copy with a fresh ID' : 'signed ID duplicated'}): ${XSW_DESCRIPTIONS[variant]}`,
        // Response-level wrapping matters where the Response signature is the only one.
        app: responseLevel ? 'responseSignatureOnly' : 'main',
        failure: XSW_AT_ACS[variant][id],
        attackerNameIds: [ATTACKER_NAME_ID],
        signatureIntact: id === 'fresh',
        build: ({ idp, flow, base }) => ({
          SAMLResponse: idp.buildResponse({
            ...base,
            user: MALLORY,
            signAssertion: !responseLevel,
            signResponse: responseLevel,
            afterSigning: (xml) => wrap(xml, variant, id)
          }),
          RelayState: flow.relayState
        })
      })
    }
  }
  return cases
}

const withFlow = (flow: StartedFlow, SAMLResponse: string): Posted => ({ SAMLResponse, RelayState: flow.relayState })

const CASES: readonly AttackCase[] = [
  ...xswCases(),
  ...NAME_ID_INJECTIONS.map((injection): AttackCase => ({
    name: `NameID injection, ${injection.name}: the signature covers "${injection.signedNameId}", a careless reader sees "${injection.truncated}"`,
    app: 'main',
    failure: 'malformed',
    attackerNameIds: [injection.truncated],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({
      ...base,
      user: { nameId: injection.signedNameId, attributes: { role: ['Administrator'] } },
      afterSigning: (xml) => replaceNameId(xml, injection.signedNameId, injection.injected)
    }))
  })),
  {
    name: 'unsigned assertion inside a signed response with RequireSignedAssertions true',
    app: 'main',
    failure: 'assertion_unsigned',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, signAssertion: false, signResponse: true }))
  },
  {
    name: 'unsigned assertion in an unsigned response',
    app: 'main',
    failure: 'signature',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, signAssertion: false }))
  },
  {
    name: 'assertion signed by a certificate the IdP metadata does not list',
    app: 'main',
    failure: 'signature',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, signingKey: keys.untrusted }))
  },
  {
    name: 'assertion signed with a listed but expired certificate (ValidateCertificates true, a current one also listed)',
    app: 'main',
    failure: 'signature',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, signingKey: keys.expired }))
  },
  {
    name: 'expired: NotOnOrAfter ten minutes ago (beyond the clock skew)',
    app: 'main',
    failure: 'expired',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, notBefore: new Date(Date.now() - 30 * MINUTE), notOnOrAfter: new Date(Date.now() - 10 * MINUTE) }))
  },
  {
    name: 'NotBefore ten minutes in the future (beyond the clock skew)',
    app: 'main',
    failure: 'expired',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, notBefore: new Date(Date.now() + 10 * MINUTE), notOnOrAfter: new Date(Date.now() + 20 * MINUTE) }))
  },
  {
    name: 'wrong Audience (another SP)',
    app: 'main',
    failure: 'audience',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, audience: 'http://127.0.0.1/another-sp' }))
  },
  {
    name: 'wrong Destination (another ACS)',
    app: 'main',
    failure: 'destination',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, destination: 'https://other-sp.example/Saml2/Acs' }))
  },
  {
    name: 'wrong Recipient in the bearer SubjectConfirmationData',
    app: 'main',
    failure: 'destination',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, recipient: 'https://other-sp.example/Saml2/Acs' }))
  },
  {
    name: 'missing InResponseTo (an unsolicited response posted into a started flow)',
    app: 'main',
    failure: 'correlation',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, inResponseTo: undefined }))
  },
  {
    name: 'missing InResponseTo and no flow (unsolicited, AllowUnsolicitedResponses false)',
    app: 'main',
    failure: 'unsolicited',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, inResponseTo: undefined }), cookie: '' })
  },
  {
    name: 'mismatched InResponseTo (answers another request)',
    app: 'main',
    failure: 'correlation',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, inResponseTo: `_${randomBytes(20).toString('hex')}` }))
  },
  {
    name: 'mismatched InResponseTo in the assertion only (response InResponseTo matches)',
    app: 'main',
    failure: 'correlation',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => withFlow(flow, idp.buildResponse({ ...base, inResponseTo: `_${randomBytes(20).toString('hex')}`, responseInResponseTo: flow.request.id }))
  },
  {
    name: 'replayed response (the same signed assertion posted again with its flow)',
    app: 'main',
    failure: 'replay',
    attackerNameIds: [],
    build: async ({ idp, flow, base, subject }) => {
      const samlResponse = idp.buildResponse({ ...base, user: MALLORY })
      const first = await postToAcs(subject.app, withFlow(flow, samlResponse), flow.cookie)
      assert.equal(setsSessionCookie(first), true, 'fixture: the first post signs in')
      return withFlow(flow, samlResponse)
    }
  },
  {
    name: 'replayed response posted into a fresh flow (its InResponseTo answers the consumed request)',
    app: 'main',
    failure: 'correlation',
    attackerNameIds: [],
    build: async ({ idp, flow, base, subject }) => {
      const samlResponse = idp.buildResponse({ ...base, user: MALLORY })
      const first = await postToAcs(subject.app, withFlow(flow, samlResponse), flow.cookie)
      assert.equal(setsSessionCookie(first), true, 'fixture: the first post signs in')
      const second = await startSaml2SignIn(subject.app)
      return { SAMLResponse: samlResponse, RelayState: second.relayState, cookie: second.cookie }
    }
  },
  ...DOCTYPE_PAYLOADS.map((payload): AttackCase => ({
    name: `DOCTYPE: ${payload.name}`,
    app: 'main',
    failure: 'malformed',
    attackerNameIds: [ATTACKER_NAME_ID],
    build: ({ idp, flow, base }) => {
      const signed = decode(idp.buildResponse(base))
      const body = payload.nameIdReplacement === undefined ? signed : replaceNameId(signed, ATTACKER_NAME_ID, payload.nameIdReplacement)
      return withFlow(flow, encode(`${payload.prolog}${body}`, payload.encoding))
    }
  }))
]

// ---------------------------------------------------------------------------------------------
// The run

describe('SAML2 attack corpus against the ACS', () => {
  const idp = new TestIdentityProvider()
  const apps = new Map<AppName, TestApp>()
  /** Every SAMLResponse posted, hostile or not, for the log scan. */
  const posted: string[] = []

  before(async () => {
    await idp.start()
    idp.documents.set('/metadata-with-expired', () => idp.metadata([idp.signingKey, keys.expired]))
    idp.documents.set('/metadata-outside-validity', () => idp.metadata([keys.expired, keys.notYetValid]))
    const built = await Promise.all([
      buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-with-expired`, RequireSignedAssertions: true, ValidateCertificates: true }),
      buildSaml2App(idp, { RequireSignedAssertions: false, ValidateCertificates: true }),
      buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-outside-validity`, ValidateCertificates: true })
    ])
    apps.set('main', built[0]).set('responseSignatureOnly', built[1]).set('certificatesOutsideValidity', built[2])
    await Promise.all([waitForSaml2(built[0].app), waitForSaml2(built[1].app)])
    // The third app never trusts a key; it is available once its metadata has loaded.
    const deadline = Date.now() + 5000
    while (built[2].logs.events('saml2.metadata.loaded').length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  })

  after(async () => {
    await Promise.all([...apps.values()].map(async (subject) => { await subject.app.close() }))
    await idp.stop()
  })

  const appOf = (name: AppName): TestApp => apps.get(name) as TestApp

  test('controls: the untampered fixtures sign the attacker\'s own account in (so every rejection below is the attack\'s doing)', async () => {
    for (const [name, options] of [['main', { signAssertion: true }], ['responseSignatureOnly', { signAssertion: false, signResponse: true }]] as const) {
      const subject = appOf(name)
      const flow = await startSaml2SignIn(subject.app)
      const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: MALLORY, inResponseTo: flow.request.id, ...options })
      posted.push(samlResponse)
      const response = await postToAcs(subject.app, withFlow(flow, samlResponse), flow.cookie)
      assert.equal(response.statusCode, 302, name)
      assert.equal(response.headers.location, '/', name)
      assert.equal(setsSessionCookie(response), true, name)
      const home = await subject.app.inject({ method: 'GET', url: '/', headers: { cookie: cookieHeaderFrom(response) } })
      assert.ok(home.body.includes(`<td>NameID</td><td>${MALLORY.nameId}</td>`), name)
      const administration = await subject.app.inject({ method: 'GET', url: '/api/application-information/administration', headers: { cookie: cookieHeaderFrom(response), accept: 'application/json' } })
      assert.equal(administration.statusCode, 403, `${name}: the Reader account is not an administrator`)
    }
  })

  // Only certificates outside their validity (expired, not yet valid): no flow can start any more
  // (readiness and the login page say certificate_expired), so the attacker can only post.
  test('signing certificates all outside validity (ValidateCertificates true): unavailable (certificate_expired), challenge 503, posted responses create no session', async () => {
    const subject = appOf('certificatesOutsideValidity')
    assert.deepEqual(subject.app.authentication.providers.get('Saml2')?.status(), { available: false, reason: 'certificate_expired' })
    assert.equal((await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2' })).statusCode, 503)
    for (const signingKey of [keys.expired, keys.notYetValid]) {
      const samlResponse = idp.buildResponse({ acsUrl: 'http://localhost:80/Saml2/Acs', audience: SP_ENTITY_ID, user: ATTACKER, signingKey })
      posted.push(samlResponse)
      const failedBefore = subject.logs.events('external.sign_in.failed').length
      const response = await postToAcs(subject.app, { SAMLResponse: samlResponse })
      assert.equal(response.statusCode, 302)
      assert.equal(setsSessionCookie(response), false)
      assert.deepEqual(subject.logs.events('external.sign_in.failed').slice(failedBefore).map((event) => event.failure), ['unsolicited'])
    }
  })

  for (const attack of CASES) {
    test(`${attack.name} -> ${attack.failure}`, async () => {
      const subject = appOf(attack.app)
      const flow = await startSaml2SignIn(subject.app)
      const base: ResponseOptions = { acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: ATTACKER, inResponseTo: flow.request.id }
      const issuedBefore = idp.issuedResponses.length
      const toPost = await attack.build({ idp, flow, base, subject })
      posted.push(...idp.issuedResponses.slice(issuedBefore), toPost.SAMLResponse)
      if (attack.signatureIntact !== undefined) {
        assert.equal(originalSignatureVerifies(decode(toPost.SAMLResponse), idp.signingKey), attack.signatureIntact, 'fixture: the IdP signature over the moved original')
      }
      const failedBefore = subject.logs.events('external.sign_in.failed').length
      const succeededBefore = subject.logs.events('external.sign_in.succeeded').length

      const response = await postToAcs(subject.app, toPost, toPost.cookie ?? flow.cookie)

      assert.ok(response.statusCode < 500, `no 5xx (got ${response.statusCode})`)
      assert.equal(response.statusCode, 302)
      assert.match(String(response.headers.location), /^\/Account\/Login\?failure=[a-z]+$/)
      assert.equal(setsSessionCookie(response), false, 'no session cookie')
      assert.equal(response.cookies.some((cookie) => cookie.name.includes('Authentication')), false, 'no session cookie of any shape')
      const failed = subject.logs.events('external.sign_in.failed').slice(failedBefore)
      assert.deepEqual(failed.map((event) => [event.provider, event.failure]), [['Saml2', attack.failure]], 'exactly one failure line with the expected class')
      assert.equal(subject.logs.events('external.sign_in.succeeded').length, succeededBefore, 'nobody signed in')
      for (const nameId of attack.attackerNameIds) {
        assert.equal(subject.logs.text().includes(nameId), false, `the attacker identity ${nameId} appears in no log line`)
      }
    })
  }

  test('no log line of any app carries a posted SAMLResponse, its signature value, or an attacker identity', () => {
    assert.ok(posted.length >= CASES.length)
    const attackerNameIds = new Set(CASES.flatMap((attack) => attack.attackerNameIds))
    for (const [name, subject] of apps) {
      const text = subject.logs.text()
      assertNoLeak(text, posted)
      for (const nameId of attackerNameIds) assert.equal(text.includes(nameId), false, `${name}: ${nameId} in the logs`)
    }
  })

  test('every DOCTYPE payload, decoded as the ACS decodes it, is refused before an XML parser sees it', () => {
    for (const payload of DOCTYPE_PAYLOADS) {
      const received = decode(encode(`${payload.prolog}<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>`, payload.encoding))
      // UTF-8 payloads are refused by the keyword check, ahead of the parser; a UTF-16 document read
      // as UTF-8 (as the ACS reads every response) is not XML at all.
      const reason = payload.encoding === 'utf16le' ? 'not well-formed' : 'document type declaration'
      assert.throws(() => parseXmlDocument(received, RESPONSE_SHAPE), (error: unknown) => error instanceof Saml2XmlError && error.reason === reason, payload.name)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Defence in depth: validateResponse() on its own

describe('XSW1-XSW8 against validateResponse() alone (readResponseEnvelope bypassed)', () => {
  const idp = new TestIdentityProvider()
  const acsUrl = 'https://app.example/Saml2/Acs'
  const description = { entityId: idp.entityId, singleSignOnUrl: 'https://idp.example/sso', signingCertificates: [idp.signingKey.certificateBase64] }

  /**
   * Without readResponseEnvelope, node-saml refuses two sibling assertions itself ('signature':
   * "multiple assertions"); XSW7 with a fresh ID verifies at node-saml and is refused by the
   * single-assertion check that follows it.
   */
  const EXPECTED: Readonly<Record<XswVariant, { fresh: Saml2FailureClass, duplicate: Saml2FailureClass }>> = {
    ...XSW_AT_ACS,
    XSW3: { fresh: 'signature', duplicate: 'signature' },
    XSW5: { fresh: 'signature', duplicate: 'signature' }
  }

  for (const variant of Object.keys(EXPECTED) as XswVariant[]) {
    for (const id of ['fresh', 'duplicate'] as const) {
      const expected = EXPECTED[variant][id]
      test(`${variant} (${id} ID): refused (${expected}), the attacker identity never returned`, async () => {
        const responseLevel = variant === 'XSW1' || variant === 'XSW2'
        const requestId = `_${randomBytes(20).toString('hex')}`
        const xml = decode(idp.buildResponse({
          acsUrl,
          audience: SP_ENTITY_ID,
          user: MALLORY,
          inResponseTo: requestId,
          signAssertion: !responseLevel,
          signResponse: responseLevel,
          afterSigning: (signed) => wrap(signed, variant, id)
        }))
        const input = {
          envelope: { xml, inResponseTo: requestId, destination: acsUrl, issuer: idp.entityId },
          settings: { entityId: SP_ENTITY_ID, requireSignedAssertions: !responseLevel, validateCertificates: true, allowUnsolicitedResponses: false, clockSkewSeconds: 60, sectionKey: 'ProjectTemplate:Authentication:Providers:Saml2' },
          idp: description,
          acsUrl,
          expectedRequestId: requestId,
          replayCache: new ReplayCache(new EmbeddedStateStore({ maxEntries: { session: 1, index: 1, flow: 1, replay: 100, lock: 10 }, maxCharacters: 100_000 }), 'saml2-assertion')
        }
        let outcome: string
        try {
          const assertion = await validateResponse(input)
          outcome = `accepted as ${assertion.nameId}`
        } catch (error) {
          outcome = classifyLibraryError(error)
        }
        assert.equal(outcome, expected)
      })
    }
  }
})
