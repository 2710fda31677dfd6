/**
 * DPoP proofs (RFC 9449; issue 35, item 5): a request with `Authorization: DPoP <token>` carries
 * one `DPoP` header, a JWT the client signs with the key its token is bound to (`cnf.jkt`). This
 * module checks one proof, cheapest first: its size and compact shape, a JSON header with `typ`
 * `dpop+jwt`, an `alg` of the scheme's asymmetric ValidAlgorithms and a public `jwk` (any private
 * member refused: a client that sends its private key has lost it), then the signature with that
 * embedded key (jose), then the claims: `htm` the request's method, `htu` the request's external
 * URL without query and fragment, `iat` within {@link DPOP_PROOF_WINDOW_SECONDS}, `ath` the
 * SHA-256 of the access token, a `jti`. It writes nothing: the caller records the `jti` in the
 * shared replay cache only once the proof and the access token have both passed (so anonymous
 * requests write nothing) and checks the token's `cnf.jkt` against {@link VerifiedProof.jkt}.
 * Plain inputs, no Fastify types.
 */
import { createHash } from 'node:crypto'
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK } from 'jose'
import { BearerTokenError } from './failures.js'

/** Largest accepted proof, in characters: an RSA-4096 key's proof is under 2 KB. */
export const MAX_DPOP_PROOF_BYTES = 4096
/** A proof is accepted this many seconds either side of its `iat` (and its `jti` remembered as long). */
export const DPOP_PROOF_WINDOW_SECONDS = 60
/** Longest accepted `jti`. */
const MAX_JTI_LENGTH = 256

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
/** JWK members that only a private (or symmetric) key has (RFC 7518 section 6). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

export interface ProofExpectations {
  /** The request's method, as sent. */
  readonly method: string
  /** The request's external URL (origin and path; any query is dropped here). */
  readonly url: string
  readonly accessToken: string
  /** The scheme's ValidAlgorithms (asymmetric only). */
  readonly algorithms: ReadonlySet<string>
  readonly nowSeconds: number
}

export interface VerifiedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key: the token's `cnf.jkt` must equal it. */
  readonly jkt: string
  readonly jti: string
  /** The proof's `alg`: the token's scheme must list it too. */
  readonly alg: string
  /** Until when the `jti` must be remembered: the end of the proof's acceptance window. */
  readonly replayUntilMs: number
}

/** `url` without query and fragment, normalized (scheme and host lower case, default port dropped); undefined when not an absolute http(s) URL. */
function htuOf (url: string): string | undefined {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return undefined
  }
}

function jsonObjectOf (segment: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
  } catch {
    throw new BearerTokenError('dpop_malformed')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new BearerTokenError('dpop_malformed')
  return value as Record<string, unknown>
}

/** The `ath` of an access token: base64url SHA-256 of its ASCII text. */
export function accessTokenHashOf (token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url')
}

/** Checks `proof` against the request; throws {@link BearerTokenError} with a `dpop_*` failure class. */
export async function verifyDPoPProof (proof: string, expected: ProofExpectations): Promise<VerifiedProof> {
  if (proof.length > MAX_DPOP_PROOF_BYTES) throw new BearerTokenError('dpop_oversized')
  if (!COMPACT_JWS.test(proof)) throw new BearerTokenError('dpop_malformed')
  const header = jsonObjectOf(proof.slice(0, proof.indexOf('.')))
  const { typ, alg, jwk } = header
  if (typ !== 'dpop+jwt') throw new BearerTokenError('dpop_malformed')
  if (typeof alg !== 'string' || !expected.algorithms.has(alg)) throw new BearerTokenError('dpop_algorithm')
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw new BearerTokenError('dpop_malformed')
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw new BearerTokenError('dpop_private_key')
  let payload: Record<string, unknown>
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...expected.algorithms] }))
  } catch (error) {
    throw new BearerTokenError('dpop_signature', { cause: error })
  }
  const { htm, htu, iat, ath, jti } = payload
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) throw new BearerTokenError('dpop_malformed')
  if (htm !== expected.method) throw new BearerTokenError('dpop_method')
  if (typeof htu !== 'string' || htuOf(htu) === undefined || htuOf(htu) !== htuOf(expected.url)) throw new BearerTokenError('dpop_url')
  if (typeof iat !== 'number' || Math.abs(expected.nowSeconds - iat) > DPOP_PROOF_WINDOW_SECONDS) throw new BearerTokenError('dpop_stale')
  if (ath !== accessTokenHashOf(expected.accessToken)) throw new BearerTokenError('dpop_ath')
  let jkt: string
  try {
    jkt = await calculateJwkThumbprint(jwk as JWK, 'sha256')
  } catch (error) {
    throw new BearerTokenError('dpop_malformed', { cause: error })
  }
  return { jkt, jti, alg, replayUntilMs: (iat + DPOP_PROOF_WINDOW_SECONDS + 1) * 1000 }
}
