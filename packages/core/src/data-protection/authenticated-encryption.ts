/**
 * AES-256-GCM sealing with the key ring, shared by the session ticket and the sign-in correlation
 * cookie. Node's crypto, synchronous, keys derived once at startup (docs/security.md, "Session
 * format"). Sealed form: `<key id>.<base64url(iv[12] | ciphertext | tag[16])>`; the purpose string
 * is the additional authenticated data, so a value sealed for one purpose never opens for another.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { KeyRing } from './key-ring.js'

const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_ID_LENGTH = 8

export function sealBytes (plaintext: string, ring: KeyRing, purpose: Buffer): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', ring.sealing.key, iv)
  cipher.setAAD(purpose)
  const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${ring.sealing.id}.${body.toString('base64url')}`
}

/** The plaintext, or undefined when the value is not authentic for `purpose` under any ring key. */
export function openBytes (sealed: string, ring: KeyRing, purpose: Buffer, maxLength: number): Buffer | undefined {
  if (sealed.length > maxLength) return undefined
  if (sealed.indexOf('.') !== KEY_ID_LENGTH) return undefined
  const key = ring.opening.get(sealed.slice(0, KEY_ID_LENGTH))
  if (key === undefined) return undefined
  const encoded = sealed.slice(KEY_ID_LENGTH + 1)
  const body = Buffer.from(encoded, 'base64url')
  // Node's decoder skips foreign characters and ignores padding bits: insist on the canonical form.
  if (body.length < IV_BYTES + TAG_BYTES + 2 || body.toString('base64url') !== encoded) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, body.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES })
    decipher.setAAD(purpose)
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES))
    return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()])
  } catch {
    return undefined
  }
}

/**
 * A JSON object sealed by {@link sealBytes}, opened: its fields unchecked (`Partial`), for the
 * caller to validate; undefined when not authentic for `purpose`, not JSON or not an object.
 */
export function openJson<T extends object> (sealed: string, ring: KeyRing, purpose: Buffer, maxLength: number): Partial<T> | undefined {
  const plain = openBytes(sealed, ring, purpose, maxLength)
  if (plain === undefined) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(plain.toString('utf8'))
  } catch {
    return undefined
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Partial<T> : undefined
}
