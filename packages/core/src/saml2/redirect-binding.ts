/**
 * The SAML HTTP-Redirect binding's query signature (SAML Bindings 3.4.4.1), both ways: verifying
 * an IdP's signed LogoutRequest or LogoutResponse over the query octets exactly as received, and
 * signing this SP's own messages. @node-saml/node-saml's redirect check is not used for incoming
 * messages: it accepts a query without a Signature, any hash Node knows (SHA-1 included) and
 * finds parameters by substring.
 */
import { sign, verify } from 'node:crypto'
import { deflateRawSync } from 'node:zlib'
import { Saml2ResponseError } from './errors.js'

/** Redirect-binding signature algorithms accepted on incoming messages (SHA-1 is not). */
export const REDIRECT_SIGNATURE_ALGORITHMS: Readonly<Record<string, string>> = {
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': 'sha512'
}

/** The algorithm this SP signs with (as its AuthnRequests and LogoutRequests: RSA-SHA256). */
export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'

/** Which message a query carries. */
export type RedirectMessage = 'SAMLRequest' | 'SAMLResponse'

export interface SignedRedirectQuery {
  readonly message: RedirectMessage
  /** The message parameter as the caller read it (base64 of the deflated XML). */
  readonly value: string
  /** The request's raw query string, whose exact octets the signature covers. */
  readonly rawQuery: string
  readonly signature: string | undefined
  readonly sigAlg: string | undefined
  readonly relayState: string | undefined
}

/** The raw `name=value` pair of a query string, or undefined; null when repeated. */
function rawParameter (rawQuery: string, name: string): string | undefined | null {
  const pairs = rawQuery.split('&').filter((pair) => pair.startsWith(`${name}=`))
  if (pairs.length > 1) return null
  return pairs[0]
}

function decodeQueryValue (pair: string, label: string): string {
  try {
    return decodeURIComponent(pair.slice(pair.indexOf('=') + 1).replaceAll('+', ' '))
  } catch (error) {
    throw new Saml2ResponseError('malformed', `${label} query is not URL-encoded`, { cause: error })
  }
}

/**
 * Verifies the query signature with one of `certificatesPem` and requires the message and
 * RelayState the caller read to be exactly the signed ones (so a parser that reads parameters
 * differently, by case or encoding of their names, cannot slip in another message). A missing
 * Signature or an algorithm outside {@link REDIRECT_SIGNATURE_ALGORITHMS} is `signature`.
 */
export function verifyRedirectSignature (query: SignedRedirectQuery, certificatesPem: readonly string[], label: string): void {
  const algorithm = query.sigAlg === undefined ? undefined : REDIRECT_SIGNATURE_ALGORITHMS[query.sigAlg]
  if (query.signature === undefined || query.signature === '' || algorithm === undefined) throw new Saml2ResponseError('signature', `${label} not signed with an accepted algorithm`)
  // SAML Bindings 3.4.4.1: the message, RelayState (when present), SigAlg, as received.
  const parts = [query.message, 'RelayState', 'SigAlg'].map((name) => rawParameter(query.rawQuery, name))
  if (parts.some((part) => part === null) || parts[0] === undefined || parts[2] === undefined) throw new Saml2ResponseError('malformed', `${label} query parameters repeated or missing`)
  if (decodeQueryValue(parts[0] as string, label) !== query.value || decodeQueryValue(parts[2] as string, label) !== query.sigAlg ||
    (parts[1] === undefined ? undefined : decodeQueryValue(parts[1] as string, label)) !== query.relayState) {
    throw new Saml2ResponseError('malformed', `${label} parameters differ from the signed query`)
  }
  const octets = Buffer.from(parts.filter((part): part is string => typeof part === 'string').join('&'), 'utf8')
  const signature = Buffer.from(query.signature, 'base64')
  const verified = certificatesPem.some((pem) => {
    try {
      return verify(algorithm, octets, pem, signature)
    } catch {
      return false
    }
  })
  if (!verified) throw new Saml2ResponseError('signature', `${label} signature not valid`)
}

/**
 * `location` with `message` (deflated, base64), RelayState when given, SigAlg and the RSA-SHA256
 * Signature over those three as encoded here, added to its query.
 */
export function signedRedirectUrl (location: string, message: RedirectMessage, xml: string, relayState: string | undefined, privateKeyPem: string): string {
  const pairs = [
    `${message}=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`,
    ...(relayState === undefined ? [] : [`RelayState=${encodeURIComponent(relayState)}`]),
    `SigAlg=${encodeURIComponent(RSA_SHA256)}`
  ]
  const signature = sign('sha256', Buffer.from(pairs.join('&'), 'utf8'), privateKeyPem).toString('base64')
  const url = new URL(location)
  const query = [...pairs, `Signature=${encodeURIComponent(signature)}`].join('&')
  return `${url.origin}${url.pathname}?${url.search === '' ? '' : `${url.search.slice(1)}&`}${query}${url.hash}`
}
