/**
 * A SAML 2.0 identity provider for tests, on loopback: serves its metadata over HTTP, receives
 * AuthnRequests by the HTTP-Redirect binding and answers with a page whose form POSTs a response
 * signed with real XML-DSig (xml-crypto, RSA-SHA256, exclusive C14N) to the SP's ACS. Response
 * building is exposed with knobs so tests can break exactly one property at a time.
 */
import { randomBytes, sign as signOctets } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { DOMParser, type Element } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'
import { createSigningKey, type TestSigningKey } from './certificates.js'

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256'
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

export interface TestUser {
  readonly nameId: string
  /** Attribute name -> values (one claim per value). */
  readonly attributes: Readonly<Record<string, readonly string[]>>
}

export interface ResponseOptions {
  readonly acsUrl: string
  readonly audience: string
  readonly user: TestUser
  /** AuthnRequest ID; omitted: an unsolicited response. */
  readonly inResponseTo?: string | undefined
  /** Response InResponseTo when it should differ from the assertion's. */
  readonly responseInResponseTo?: string | undefined
  readonly issuer?: string
  readonly destination?: string
  readonly recipient?: string
  readonly notBefore?: Date
  readonly notOnOrAfter?: Date
  readonly assertionId?: string
  /** Default true. */
  readonly signAssertion?: boolean
  /** Default false. */
  readonly signResponse?: boolean
  /** Default: the IdP's current key. */
  readonly signingKey?: TestSigningKey
  /** Raw XML appended to the AttributeStatement before signing (complex attributes, padding). */
  readonly extraAttributeXml?: string
  /** Applied to the XML after signing (tampering). */
  readonly afterSigning?: (xml: string) => string
  /** The AuthnStatement SessionIndex; default a fresh id. */
  readonly sessionIndex?: string
  /** The AuthnContextClassRef; default PasswordProtectedTransport; null: no AuthnContextClassRef. */
  readonly authnContextClassRef?: string | null
  /** The AuthnInstant; default the response's IssueInstant (now). */
  readonly authnInstant?: Date
}

/** An IdP-initiated LogoutRequest (SAML Profiles 4.4.4.1), one knob per tested property. */
export interface LogoutRequestOptions {
  /** Destination: the SP's logout URL. */
  readonly destination: string
  readonly nameId: string
  /** Default: unspecified, as {@link TestIdentityProvider.buildResponse} issues it. */
  readonly nameIdFormat?: string
  readonly nameQualifier?: string
  /** The SP the NameID was issued to (SAML Core 2.2.2); default none. */
  readonly spNameQualifier?: string
  readonly sessionIndexes?: readonly string[]
  readonly id?: string
  readonly issuer?: string
  readonly issueInstant?: Date
  /** Default: five minutes from now; null: omitted. */
  readonly notOnOrAfter?: Date | null
  /** Default true. */
  readonly sign?: boolean
  /** Default: the IdP's current key. */
  readonly signingKey?: TestSigningKey
  readonly relayState?: string
}

export interface BuiltLogoutRequest {
  readonly id: string
  /** HTTP-Redirect: path and query for the SP (query signature over SAMLRequest, RelayState, SigAlg). */
  readonly redirectPath: string
  /** HTTP-POST: the form fields (enveloped XML signature). */
  readonly postFields: Readonly<Record<string, string>>
}
export interface AuthnRequestSeen {
  readonly id: string
  readonly acsUrl: string
  readonly issuer: string
  readonly relayState: string | undefined
  /** `ForceAuthn="true"` (a step-up with a maximum age). */
  readonly forceAuthn: boolean
  /** `RequestedAuthnContext`: its Comparison and class references. */
  readonly requestedAuthnContext?: { readonly comparison: string, readonly classRefs: readonly string[] }
}

const escapeXml = (value: string): string =>
  value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')

let sharedEncryptionKey: TestSigningKey | undefined
/** Listed in metadata as an encryption key only, so it must never be trusted for signatures. */
const encryptionKey = (): TestSigningKey => (sharedEncryptionKey ??= createSigningKey('unused-encryption'))

const newId = (): string => `_${randomBytes(16).toString('hex')}`

function sign (xml: string, key: TestSigningKey, target: 'Assertion' | 'Response'): string {
  const signer = new SignedXml({ privateKey: key.privateKeyPem, publicCert: key.certificatePem, signatureAlgorithm: RSA_SHA256, canonicalizationAlgorithm: EXC_C14N })
  const element = target === 'Assertion' ? "/*[local-name(.)='Response']/*[local-name(.)='Assertion']" : "/*[local-name(.)='Response']"
  signer.addReference({ xpath: element, transforms: [ENVELOPED, EXC_C14N], digestAlgorithm: SHA256 })
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `${element}/*[local-name(.)='Issuer']`, action: 'after' } })
  return signer.getSignedXml()
}

function signLogoutRequest (xml: string, key: TestSigningKey): string {
  const signer = new SignedXml({ privateKey: key.privateKeyPem, publicCert: key.certificatePem, signatureAlgorithm: RSA_SHA256, canonicalizationAlgorithm: EXC_C14N })
  const element = "/*[local-name(.)='LogoutRequest']"
  signer.addReference({ xpath: element, transforms: [ENVELOPED, EXC_C14N], digestAlgorithm: SHA256 })
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `${element}/*[local-name(.)='Issuer']`, action: 'after' } })
  return signer.getSignedXml()
}

/** Reads the AuthnRequest carried by an HTTP-Redirect binding URL. */
export function readAuthnRequest (location: string): AuthnRequestSeen {
  const url = new URL(location)
  const encoded = url.searchParams.get('SAMLRequest')
  if (encoded === null) throw new Error('no SAMLRequest in the redirect')
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8')
  const request = new DOMParser().parseFromString(xml, 'text/xml').documentElement
  if (request === null || request.localName !== 'AuthnRequest') throw new Error('not an AuthnRequest')
  const issuer = request.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]?.textContent ?? ''
  return {
    id: request.getAttribute('ID') ?? '',
    acsUrl: request.getAttribute('AssertionConsumerServiceURL') ?? '',
    issuer,
    relayState: url.searchParams.get('RelayState') ?? undefined,
    forceAuthn: request.getAttribute('ForceAuthn') === 'true',
    ...requestedAuthnContextOf(request)
  }
}

function requestedAuthnContextOf (request: Element): Pick<AuthnRequestSeen, 'requestedAuthnContext'> {
  const requested = request.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:protocol', 'RequestedAuthnContext')[0]
  if (requested === undefined) return {}
  const classRefs = [...requested.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'AuthnContextClassRef')].map((element) => element.textContent ?? '')
  return { requestedAuthnContext: { comparison: requested.getAttribute('Comparison') ?? 'exact', classRefs } }
}

export class TestIdentityProvider {
  readonly entityId: string
  readonly users: Map<string, TestUser> = new Map()
  /** The user the next /sso request signs in. */
  nextUser = ''
  signingKey: TestSigningKey
  /** Extra metadata documents by path (for example an expired certificate variant). */
  readonly documents = new Map<string, () => string>()
  readonly requests: AuthnRequestSeen[] = []
  metadataFetches = 0
  /** Every SAMLResponse value this IdP has handed out (for the log-leak scan). */
  readonly issuedResponses: string[] = []
  #server: Server | undefined
  #origin = ''

  constructor (entityId = 'http://localhost/test-idp') {
    this.entityId = entityId
    this.signingKey = createSigningKey('test-idp')
  }

  get origin (): string {
    return this.#origin
  }

  get metadataUrl (): string {
    return `${this.#origin}/metadata`
  }

  async start (): Promise<void> {
    this.#server = createServer((request, response) => { this.#handle(request, response) })
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve))
    const { port } = this.#server.address() as AddressInfo
    // The IdP is addressed as `localhost`, the app as 127.0.0.1: different sites.
    this.#origin = `http://localhost:${port}`
  }

  async stop (): Promise<void> {
    const server = this.#server
    if (server === undefined) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => { resolve() }))
  }

  metadata (certificates: readonly TestSigningKey[] = [this.signingKey]): string {
    const keys = certificates.map((key) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${key.certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`).join('')
    return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${escapeXml(this.entityId)}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${keys}
    <md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${encryptionKey().certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${this.#origin}/sso-post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${this.#origin}/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`
  }

  /** A base64 SAMLResponse built from `options` (one knob per tested property). */
  buildResponse (options: ResponseOptions): string {
    const now = Date.now()
    const issueInstant = new Date(now).toISOString()
    const notBefore = (options.notBefore ?? new Date(now - 60_000)).toISOString()
    const notOnOrAfter = (options.notOnOrAfter ?? new Date(now + 5 * 60_000)).toISOString()
    const issuer = escapeXml(options.issuer ?? this.entityId)
    const inResponseTo = options.inResponseTo === undefined ? '' : ` InResponseTo="${escapeXml(options.inResponseTo)}"`
    const responseInResponseTo = options.responseInResponseTo ?? options.inResponseTo
    const responseIrt = responseInResponseTo === undefined ? '' : ` InResponseTo="${escapeXml(responseInResponseTo)}"`
    const classRef = options.authnContextClassRef === undefined ? 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport' : options.authnContextClassRef
    // Without a class reference, the AuthnContext carries only a declaration reference (SAML Core 2.7.2.2).
    const authnContext = classRef === null ? '<saml:AuthnContextDeclRef>urn:example:declaration</saml:AuthnContextDeclRef>' : `<saml:AuthnContextClassRef>${escapeXml(classRef)}</saml:AuthnContextClassRef>`
    const attributes = Object.entries(options.user.attributes).map(([name, values]) =>
      `<saml:Attribute Name="${escapeXml(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri">${values.map((value) => `<saml:AttributeValue>${escapeXml(value)}</saml:AttributeValue>`).join('')}</saml:Attribute>`).join('')
    let xml = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${newId()}" Version="2.0" IssueInstant="${issueInstant}" Destination="${escapeXml(options.destination ?? options.acsUrl)}"${responseIrt}>` +
      `<saml:Issuer>${issuer}</saml:Issuer>` +
      '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
      `<saml:Assertion ID="${escapeXml(options.assertionId ?? newId())}" Version="2.0" IssueInstant="${issueInstant}">` +
      `<saml:Issuer>${issuer}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">${escapeXml(options.user.nameId)}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${escapeXml(options.recipient ?? options.acsUrl)}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${escapeXml(options.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${options.authnInstant?.toISOString() ?? issueInstant}" SessionIndex="${escapeXml(options.sessionIndex ?? newId())}"><saml:AuthnContext>${authnContext}</saml:AuthnContext></saml:AuthnStatement>` +
      (attributes === '' && options.extraAttributeXml === undefined ? '' : `<saml:AttributeStatement>${attributes}${options.extraAttributeXml ?? ''}</saml:AttributeStatement>`) +
      '</saml:Assertion></samlp:Response>'
    const key = options.signingKey ?? this.signingKey
    if (options.signAssertion ?? true) xml = sign(xml, key, 'Assertion')
    if (options.signResponse ?? false) xml = sign(xml, key, 'Response')
    if (options.afterSigning !== undefined) xml = options.afterSigning(xml)
    const encoded = Buffer.from(xml, 'utf8').toString('base64')
    this.issuedResponses.push(encoded)
    return encoded
  }

  /**
   * A LogoutRequest this IdP sends when the user signs out at the IdP (its portal, or another SP
   * starting Single Logout), in both bindings. Every SAMLRequest is kept in {@link issuedResponses}
   * for the log-leak scans.
   */
  buildLogoutRequest (options: LogoutRequestOptions): BuiltLogoutRequest {
    const id = options.id ?? newId()
    const notOnOrAfter = options.notOnOrAfter === undefined ? new Date(Date.now() + 5 * 60_000) : options.notOnOrAfter
    const qualifier = (options.nameQualifier === undefined ? '' : ` NameQualifier="${escapeXml(options.nameQualifier)}"`) +
      (options.spNameQualifier === undefined ? '' : ` SPNameQualifier="${escapeXml(options.spNameQualifier)}"`)
    const xml = `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${escapeXml(id)}" Version="2.0"` +
      ` IssueInstant="${(options.issueInstant ?? new Date()).toISOString()}" Destination="${escapeXml(options.destination)}"` +
      (notOnOrAfter === null ? '' : ` NotOnOrAfter="${notOnOrAfter.toISOString()}"`) + '>' +
      `<saml:Issuer>${escapeXml(options.issuer ?? this.entityId)}</saml:Issuer>` +
      `<saml:NameID Format="${escapeXml(options.nameIdFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified')}"${qualifier}>${escapeXml(options.nameId)}</saml:NameID>` +
      (options.sessionIndexes ?? []).map((index) => `<samlp:SessionIndex>${escapeXml(index)}</samlp:SessionIndex>`).join('') +
      '</samlp:LogoutRequest>'
    const key = options.signingKey ?? this.signingKey
    const signed = options.sign ?? true
    const pairs = [
      `SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`,
      ...(options.relayState === undefined ? [] : [`RelayState=${encodeURIComponent(options.relayState)}`])
    ]
    if (signed) {
      pairs.push(`SigAlg=${encodeURIComponent(RSA_SHA256)}`)
      pairs.push(`Signature=${encodeURIComponent(signOctets('sha256', Buffer.from(pairs.join('&'), 'utf8'), key.privateKeyPem).toString('base64'))}`)
    }
    const postXml = signed ? signLogoutRequest(xml, key) : xml
    const postFields = { SAMLRequest: Buffer.from(postXml, 'utf8').toString('base64'), ...(options.relayState === undefined ? {} : { RelayState: options.relayState }) }
    this.issuedResponses.push(decodeURIComponent((pairs[0] as string).slice('SAMLRequest='.length)), postFields.SAMLRequest)
    return { id, redirectPath: `${new URL(options.destination).pathname}?${pairs.join('&')}`, postFields }
  }

  #handle (request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', this.#origin)
    const document = url.pathname === '/metadata' ? () => this.metadata() : this.documents.get(url.pathname)
    if (request.method === 'GET' && document !== undefined) {
      this.metadataFetches++
      response.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(document())
      return
    }
    if (request.method === 'GET' && url.pathname === '/sso') {
      const seen = readAuthnRequest(url.href)
      this.requests.push(seen)
      const user = this.users.get(this.nextUser)
      if (user === undefined) {
        response.writeHead(400, { 'content-type': 'text/plain' }).end('unknown test user')
        return
      }
      const samlResponse = this.buildResponse({ acsUrl: seen.acsUrl, audience: seen.issuer, user, inResponseTo: seen.id })
      const relayState = seen.relayState === undefined ? '' : `<input type="hidden" name="RelayState" value="${escapeXml(seen.relayState)}">`
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html><head><title>Test IdP</title></head><body>
<h1>Test identity provider</h1>
<p>Signing in as <span id="idp-user">${escapeXml(user.nameId)}</span></p>
<form method="post" action="${escapeXml(seen.acsUrl)}">
<input type="hidden" name="SAMLResponse" value="${samlResponse}">
${relayState}
<button type="submit" id="idp-continue">Continue</button>
</form></body></html>`)
      return
    }
    if (request.method === 'GET' && url.pathname === '/idp-initiated') {
      // A dashboard tile (Okta, Entra My Apps): an unsolicited response, no AuthnRequest.
      const user = this.users.get(this.nextUser)
      const acsUrl = url.searchParams.get('acs') ?? ''
      if (user === undefined || acsUrl === '') {
        response.writeHead(400, { 'content-type': 'text/plain' }).end('unknown test user or ACS')
        return
      }
      const samlResponse = this.buildResponse({ acsUrl, audience: url.searchParams.get('audience') ?? '', user })
      const relayState = url.searchParams.get('relayState')
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html><head><title>Test IdP dashboard</title></head><body>
<form method="post" action="${escapeXml(acsUrl)}">
<input type="hidden" name="SAMLResponse" value="${samlResponse}">
${relayState === null ? '' : `<input type="hidden" name="RelayState" value="${escapeXml(relayState)}">`}
<button type="submit" id="idp-tile">Open the application</button>
</form></body></html>`)
      return
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  }

  /** The IdP dashboard tile that posts an unsolicited response for {@link nextUser}. */
  idpInitiatedUrl (acsUrl: string, audience: string, relayState?: string): string {
    const url = new URL('/idp-initiated', this.#origin)
    url.searchParams.set('acs', acsUrl)
    url.searchParams.set('audience', audience)
    if (relayState !== undefined) url.searchParams.set('relayState', relayState)
    return url.href
  }
}
