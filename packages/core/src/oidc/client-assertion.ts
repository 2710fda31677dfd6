/**
 * `TokenEndpointAuthMethod: private_key_jwt`: the client authenticates with a JWT it signs with
 * its private key (RFC 7523 section 2.2; OpenID Connect Core 1.0, section 9), at the token
 * endpoint and at the pushed authorization request endpoint (RFC 9126 section 2).
 *
 * The keys are one or two PEM private keys (RSA of 2048 bits or more, EC P-256, P-384 or P-521,
 * Ed25519), each with an optional certificate. Two keys exist for rotation: the app signs with the
 * newest, so the overlap happens at the provider (register the new certificate or public key
 * there first; Entra ID and Okta accept several at once), then deploy the app with both keys.
 * "Newest": among keys whose certificate is valid now, the latest NotBefore; a key without a
 * certificate counts by its position (the later listed is newer, and newer than any certificate's
 * key listed before it).
 *
 * Each assertion: header `alg` from the key, `kid` the key's JWK thumbprint (RFC 7638), and with a
 * certificate `x5t#S256` and `x5t` (its SHA-256 and SHA-1 thumbprints, as Entra ID requires);
 * claims `iss` and `sub` the client id, `aud` one string (never an array): the provider's issuer
 * identifier by default (`ClientAssertionAudience: Issuer`; the remedy of the OpenID Foundation's
 * 2025 private_key_jwt advisory, draft-ietf-oauth-rfc7523bis, FAPI 2.0; Keycloak 26.2 and later,
 * oidc-provider and RFC 9126 section 2 accept it), or with `ClientAssertionAudience: Endpoint`
 * (configured providers only: Entra ID and Okta document the URL of the endpoint called) the URL
 * of the one endpoint the request goes to; a unique `jti` (256 random bits), `iat`, `nbf` and an
 * `exp` {@link ASSERTION_LIFETIME_SECONDS} later. A fresh assertion per request (token, refresh,
 * PAR, client credentials): never one assertion at two endpoints.
 *
 * Why not the token endpoint by default: an audience taken from the discovery document is whatever
 * that document names. A hostile provider whose discovery named another server's token endpoint
 * received, at its own PAR endpoint, an assertion that other server accepted (issue 40, item 18).
 * The issuer is the one value the app itself checked (discovery's issuer equals the Authority).
 *
 * Refusals name the setting and what is wrong, never a key, certificate or part of one.
 */
import { createHash, createPrivateKey, randomBytes, X509Certificate, type KeyObject } from 'node:crypto'
import { SignJWT } from 'jose'
import type * as client from 'openid-client'
import { CoreError, type LogCode } from '../errors.js'

/** Seconds an assertion is valid: long enough for one request, too short to be worth stealing. */
export const ASSERTION_LIFETIME_SECONDS = 60

/** At most this many keys at once: the current one and the next. */
export const MAX_CLIENT_ASSERTION_KEYS = 2

/** RFC 7523 section 2.2. */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** One parsed signing key. */
export interface ClientAssertionKey {
  readonly key: KeyObject
  readonly alg: string
  /** The RFC 7638 JWK thumbprint of the public key. */
  readonly kid: string
  /** Position in the configured list (0 first). */
  readonly position: number
  readonly certificate?: {
    /** base64url SHA-256 thumbprint of the DER certificate (`x5t#S256`, RFC 7515 section 4.1.8). */
    readonly x5tS256: string
    /** base64url SHA-1 thumbprint of the DER certificate (`x5t`, RFC 7515 section 4.1.7). */
    readonly x5t: string
    readonly notBefore: number
    readonly notAfter: number
  }
}

/** Why the configured keys are refused. */
export type ClientAssertionKeyProblem =
  | 'missing' | 'unparsable' | 'encrypted' | 'too_many' | 'unsupported_key' | 'weak_key'
  | 'certificate_as_key' | 'public_key' | 'escaped_line_breaks'
  | 'certificate_unparsable' | 'certificate_mismatch' | 'certificate_duplicate' | 'key_as_certificate' | 'certificate_escaped_line_breaks'

/** A refusal of the configured keys: `setting` is the colon path of the key or certificate setting. */
export class ClientAssertionKeyError extends CoreError {
  readonly code = 'CLIENT_ASSERTION_KEY_INVALID' satisfies LogCode
  readonly setting: string
  readonly problem: ClientAssertionKeyProblem

  constructor (setting: string, problem: ClientAssertionKeyProblem) {
    super(`${setting}: ${PROBLEM_TEXT[problem]}`)
    this.name = 'ClientAssertionKeyError'
    this.setting = setting
    this.problem = problem
  }
}

const PROBLEM_TEXT: Readonly<Record<ClientAssertionKeyProblem, string>> = {
  missing: 'a PEM private key is required with TokenEndpointAuthMethod private_key_jwt.',
  unparsable: 'is not a readable PEM private key (PKCS#8 "PRIVATE KEY", "RSA PRIVATE KEY" or "EC PRIVATE KEY").',
  encrypted: 'holds an encrypted private key; supply it decrypted through a secret store.',
  too_many: `holds more than ${MAX_CLIENT_ASSERTION_KEYS} private keys (the current one and the next).`,
  unsupported_key: 'holds a key of a type that cannot sign client assertions (use RSA, EC P-256/P-384/P-521 or Ed25519).',
  weak_key: 'holds an RSA key shorter than 2048 bits.',
  certificate_as_key: 'holds a certificate ("BEGIN CERTIFICATE"), not a private key: the private key goes here, its certificate in ClientAssertionCertificates.',
  public_key: 'holds a public key ("BEGIN PUBLIC KEY"), not a private key: the private key goes here; the provider gets the public key or certificate.',
  escaped_line_breaks: 'holds a PEM whose line breaks are the two characters \\n (a backslash and an n): give the key with real line breaks (a key-per-file directory keeps them; in JSON write \\n, not \\\\n; in a shell "$(cat key.pem)").',
  certificate_unparsable: 'is not a readable PEM certificate ("CERTIFICATE").',
  key_as_certificate: 'holds a private key, not a certificate: the private key goes in ClientAssertionKeys, its certificate ("BEGIN CERTIFICATE") here.',
  certificate_escaped_line_breaks: 'holds a PEM whose line breaks are the two characters \\n (a backslash and an n): give the certificate with real line breaks.',
  certificate_mismatch: 'holds a certificate that does not match any of the configured private keys.',
  certificate_duplicate: 'holds two certificates for the same private key.'
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g

function pemBlocks (text: string): Array<{ label: string, pem: string }> {
  return [...text.matchAll(PEM_BLOCK)].map((match) => ({ label: match[1]!, pem: match[0] }))
}

function base64url (data: Buffer): string {
  return data.toString('base64url')
}

/** The JWS algorithm the key signs with. */
function algorithmOf (key: KeyObject, setting: string): string {
  const details = key.asymmetricKeyDetails ?? {}
  switch (key.asymmetricKeyType) {
    case 'rsa':
      if ((details.modulusLength ?? 0) < 2048) throw new ClientAssertionKeyError(setting, 'weak_key')
      return 'RS256'
    case 'ec':
      switch (details.namedCurve) {
        case 'prime256v1': return 'ES256'
        case 'secp384r1': return 'ES384'
        case 'secp521r1': return 'ES512'
        default: throw new ClientAssertionKeyError(setting, 'unsupported_key')
      }
    case 'ed25519':
      return 'EdDSA'
    default:
      throw new ClientAssertionKeyError(setting, 'unsupported_key')
  }
}

/** RFC 7638: the SHA-256 of the required members of the public JWK, in lexical order. */
export function jwkThumbprintOf (key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' }) as Record<string, string>
  const members = jwk.kty === 'RSA' ? ['e', 'kty', 'n'] : jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : ['crv', 'kty', 'x']
  const canonical = `{${members.map((name) => `${JSON.stringify(name)}:${JSON.stringify(jwk[name])}`).join(',')}}`
  return base64url(createHash('sha256').update(canonical).digest())
}

/** One PEM block of a setting, with the name of the entry it came from (`ClientAssertionKeys:1`). */
interface NamedBlock { readonly label: string, readonly pem: string, readonly setting: string }

/**
 * The PEM blocks of a setting given as its entries (each named `<setting>:<index>`) or as one text
 * (named `<setting>`); blank entries are skipped. A block whose body has the two characters `\n`
 * where line breaks belong (a PEM pasted through an escaping layer) is refused as such, and an
 * entry with no PEM block at all as `unreadable`.
 */
function namedBlocks (value: string | readonly string[], setting: string, escaped: ClientAssertionKeyProblem, unreadable: ClientAssertionKeyProblem): NamedBlock[] {
  const entries = typeof value === 'string' ? [{ text: value, setting }] : value.map((text, index) => ({ text, setting: `${setting}:${index}` }))
  return entries.filter((entry) => entry.text.trim() !== '').flatMap((entry) => {
    const blocks = pemBlocks(entry.text)
    if (blocks.some((block) => block.pem.includes('\\n'))) throw new ClientAssertionKeyError(entry.setting, escaped)
    if (blocks.length === 0) throw new ClientAssertionKeyError(entry.setting, unreadable)
    return blocks.map((block) => ({ ...block, setting: entry.setting }))
  })
}

/** Why a block of ClientAssertionKeys is no private key, or undefined when it may be one. */
function keyBlockProblem (label: string): ClientAssertionKeyProblem | undefined {
  if (label === 'CERTIFICATE') return 'certificate_as_key'
  if (label === 'PUBLIC KEY' || label === 'RSA PUBLIC KEY') return 'public_key'
  if (!label.endsWith('PRIVATE KEY')) return 'unparsable'
  return label.startsWith('ENCRYPTED') ? 'encrypted' : undefined
}

/**
 * Parses `keys` (one or two PEM private keys) and `certificates` (none, or one PEM certificate per
 * key, matched to its key by public key), each given as the setting's entries or as one text.
 * Throws {@link ClientAssertionKeyError} naming `settings.keys` or `settings.certificates`, with
 * the entry's index when entries were given (`...:ClientAssertionKeys:1`).
 */
export function readClientAssertionKeys (keys: string | readonly string[], certificates: string | readonly string[], settings: { readonly keys: string, readonly certificates: string }): ClientAssertionKey[] {
  const keyBlocks = namedBlocks(keys, settings.keys, 'escaped_line_breaks', 'unparsable')
  if (keyBlocks.length === 0) throw new ClientAssertionKeyError(settings.keys, 'missing')
  for (const block of keyBlocks) {
    const problem = keyBlockProblem(block.label)
    if (problem !== undefined) throw new ClientAssertionKeyError(block.setting, problem)
  }
  if (keyBlocks.length > MAX_CLIENT_ASSERTION_KEYS) throw new ClientAssertionKeyError(settings.keys, 'too_many')
  const parsed = keyBlocks.map((block, position) => {
    let key: KeyObject
    try {
      key = createPrivateKey(block.pem)
    } catch {
      throw new ClientAssertionKeyError(block.setting, 'unparsable')
    }
    return { key, alg: algorithmOf(key, block.setting), kid: jwkThumbprintOf(key), position }
  })

  const certificateBlocks = namedBlocks(certificates, settings.certificates, 'certificate_escaped_line_breaks', 'certificate_unparsable')
  for (const block of certificateBlocks) {
    if (block.label.endsWith('PRIVATE KEY')) throw new ClientAssertionKeyError(block.setting, 'key_as_certificate')
    if (block.label !== 'CERTIFICATE') throw new ClientAssertionKeyError(block.setting, 'certificate_unparsable')
  }
  const certificateOf = new Map<number, ClientAssertionKey['certificate']>()
  for (const block of certificateBlocks) {
    let certificate: X509Certificate
    try {
      certificate = new X509Certificate(block.pem)
    } catch {
      throw new ClientAssertionKeyError(block.setting, 'certificate_unparsable')
    }
    const owner = parsed.find((candidate) => safeCheckPrivateKey(certificate, candidate.key))
    if (owner === undefined) throw new ClientAssertionKeyError(block.setting, 'certificate_mismatch')
    if (certificateOf.has(owner.position)) throw new ClientAssertionKeyError(block.setting, 'certificate_duplicate')
    certificateOf.set(owner.position, {
      x5tS256: base64url(createHash('sha256').update(certificate.raw).digest()),
      x5t: base64url(createHash('sha1').update(certificate.raw).digest()),
      notBefore: Date.parse(certificate.validFrom),
      notAfter: Date.parse(certificate.validTo)
    })
  }
  return parsed.map((entry) => {
    const certificate = certificateOf.get(entry.position)
    return certificate === undefined ? entry : { ...entry, certificate }
  })
}

function safeCheckPrivateKey (certificate: X509Certificate, key: KeyObject): boolean {
  try {
    return certificate.checkPrivateKey(key)
  } catch {
    return false
  }
}

/**
 * The key that signs now: the newest among those whose certificate is valid at `nowMs` (keys
 * without a certificate always are); when none is, the newest of all, so that the provider's
 * refusal (not a local guess) reports the expired certificate.
 */
export function signingKeyOf (keys: readonly ClientAssertionKey[], nowMs: number): ClientAssertionKey {
  const valid = keys.filter((entry) => entry.certificate === undefined || (entry.certificate.notBefore <= nowMs && nowMs <= entry.certificate.notAfter))
  const candidates = valid.length > 0 ? valid : keys
  return candidates.reduce((newest, entry) => isNewer(entry, newest) ? entry : newest)
}

function isNewer (entry: ClientAssertionKey, than: ClientAssertionKey): boolean {
  if (entry.certificate !== undefined && than.certificate !== undefined && entry.certificate.notBefore !== than.certificate.notBefore) {
    return entry.certificate.notBefore > than.certificate.notBefore
  }
  return entry.position > than.position
}

/** Signs one client assertion for `clientId` with the newest key, for `audience`. */
export async function signClientAssertion (keys: readonly ClientAssertionKey[], clientId: string, audience: string, nowMs = Date.now()): Promise<string> {
  const signing = signingKeyOf(keys, nowMs)
  const now = Math.floor(nowMs / 1000)
  return await new SignJWT({ jti: base64url(randomBytes(32)) })
    .setProtectedHeader({
      alg: signing.alg,
      typ: 'JWT',
      kid: signing.kid,
      ...(signing.certificate === undefined ? {} : { 'x5t#S256': signing.certificate.x5tS256, x5t: signing.certificate.x5t })
    })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + ASSERTION_LIFETIME_SECONDS)
    .sign(signing.key)
}

/**
 * `ClientAssertionAudience`: `Issuer` (the default: the provider's issuer identifier) or `Endpoint`
 * (the URL of the endpoint the assertion is sent to; a configured provider only, never one from
 * the provider source).
 */
export type ClientAssertionAudience = 'Issuer' | 'Endpoint'

export const CLIENT_ASSERTION_AUDIENCES: readonly ClientAssertionAudience[] = ['Issuer', 'Endpoint']

/**
 * The one endpoint a request of openid-client goes to, from its form body: a grant (`grant_type`:
 * authorization code, refresh, client credentials) goes to the token endpoint, an authorization
 * request (`response_type`) to the PAR endpoint (RFC 9126 section 2.1). Undefined otherwise.
 */
function endpointOfRequest (as: client.ServerMetadata, body: URLSearchParams): string | undefined {
  if (body.has('grant_type')) return as.token_endpoint
  if (body.has('response_type')) return as.pushed_authorization_request_endpoint
  return undefined
}

/** The audience of one assertion: the issuer, or with `Endpoint` the URL of the request's endpoint (the issuer when it cannot tell). */
export function assertionAudienceOf (audience: ClientAssertionAudience, as: client.ServerMetadata, body: URLSearchParams): string {
  return audience === 'Endpoint' ? endpointOfRequest(as, body) ?? as.issuer : as.issuer
}

/**
 * openid-client's client authentication with a fresh assertion per request (openid-client calls
 * it once per request, before sending): `client_id`, `client_assertion_type` and
 * `client_assertion` in the form body (RFC 7523 section 2.2), the audience
 * {@link assertionAudienceOf} as one string.
 */
export function privateKeyJwtAuthentication (keys: readonly ClientAssertionKey[], audience: ClientAssertionAudience = 'Issuer'): client.ClientAuth {
  return async (as, metadata, body) => {
    body.set('client_id', metadata.client_id)
    body.set('client_assertion_type', CLIENT_ASSERTION_TYPE)
    body.set('client_assertion', await signClientAssertion(keys, metadata.client_id, assertionAudienceOf(audience, as, body)))
  }
}
