/**
 * Secrets the app keeps at rest (a runtime provider's client secret, SP private key or
 * certificate in the app's own database), sealed with the app's key ring: AES-256-GCM by
 * {@link sealBytes}, under the ring's `protectedSecret` purpose (application-name.ts), which no
 * other use of the ring shares, so a protected secret never opens as a session ticket, cookie or
 * anti-forgery token, nor one of those as a secret. The first key of the ring seals, every key
 * opens: after a new first key is added, values sealed before still open until their key is
 * removed (docs/security/keys-and-storage.md, "Protected secrets"; re-seal them before removing it).
 *
 * Opening fails with `APP_ERR_SECRET_INVALID` naming only why (its key is not in the ring, or
 * the value is not one this ring sealed for this purpose), never the value or its plaintext.
 */
import { createError, type AppError } from '../errors.js'
import { openJson, sealBytes } from './authenticated-encryption.js'
import { purposesOf, type KeyRing } from './key-ring.js'

/**
 * Longest sealed value opened: 64 KiB, room for a PEM private key with its certificate chain; a
 * longer value is refused before any decoding.
 *
 * @public
 */
export const MAX_PROTECTED_SECRET_LENGTH = 64 * 1024

const KEY_ID = /^[A-Za-z0-9_-]{8}\./

/** The sealed JSON: a format version, so the form can change without guessing, and the secret. */
interface SealedSecret {
  readonly v: 1
  readonly s: string
}

const purposeOf = (ring: KeyRing): Buffer => Buffer.from(purposesOf(ring).protectedSecret, 'utf8')

function invalid (reason: string): AppError {
  return createError('APP_ERR_SECRET_INVALID', reason)
}

/**
 * `plaintext` sealed with the ring's first key under the protected-secret purpose: text safe to
 * store (`<key id>.<base64url>`, ASCII). Each call uses a fresh nonce, so sealing one value twice
 * gives two different texts.
 *
 * @public
 */
export function protectSecret (ring: KeyRing, plaintext: string): string {
  if (typeof plaintext !== 'string') throw new TypeError('protectSecret: plaintext must be a string')
  return sealBytes(JSON.stringify({ v: 1, s: plaintext } satisfies SealedSecret), ring, purposeOf(ring))
}

/**
 * The plaintext of a value made by {@link protectSecret} with any key of `ring`. Throws an
 * {@link AppError} `APP_ERR_SECRET_INVALID` when the value's key is no longer in the ring, or the
 * value was altered, truncated, sealed for another purpose, application or discriminator, or is
 * not a protected secret at all; the error never holds the value.
 *
 * @public
 */
export function unprotectSecret (ring: KeyRing, protectedValue: string): string {
  if (typeof protectedValue !== 'string' || protectedValue.length > MAX_PROTECTED_SECRET_LENGTH || !KEY_ID.test(protectedValue)) {
    throw invalid('it is not a protected secret')
  }
  if (!ring.opening.has(protectedValue.slice(0, 8))) {
    throw invalid('the key that sealed it is not in the key ring (removed, or another application\'s)')
  }
  const opened = openJson<SealedSecret>(protectedValue, ring, purposeOf(ring), MAX_PROTECTED_SECRET_LENGTH)
  if (opened === undefined) throw invalid('it was altered, or sealed for another purpose or application')
  if (opened.v !== 1 || typeof opened.s !== 'string') throw invalid('it is not a protected secret')
  return opened.s
}
