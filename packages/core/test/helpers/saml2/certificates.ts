/**
 * Test-time X.509 certificates: an RSA key from node:crypto and a minimal self-signed
 * certificate DER-encoded by hand (node:crypto parses certificates but does not issue them), so no
 * key material is committed and the validity period is whatever a test needs (expired, future).
 */
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto'

export interface TestSigningKey {
  /** PKCS#8 PEM. */
  readonly privateKeyPem: string
  readonly certificatePem: string
  /** Base64 DER, as in metadata. */
  readonly certificateBase64: string
  readonly certificate: X509Certificate
}

function length (size: number): Buffer {
  if (size < 0x80) return Buffer.from([size])
  const bytes: number[] = []
  for (let rest = size; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(content.length), content])
const sequence = (...parts: Buffer[]): Buffer => tlv(0x30, Buffer.concat(parts))
const integer = (value: Buffer): Buffer => tlv(0x02, (value[0] as number) & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value)
const SHA256_WITH_RSA = sequence(tlv(0x06, Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b])), tlv(0x05, Buffer.alloc(0)))
const commonName = (name: string): Buffer => sequence(tlv(0x31, sequence(tlv(0x06, Buffer.from([0x55, 0x04, 0x03])), tlv(0x0c, Buffer.from(name, 'utf8')))))

function time (date: Date): Buffer {
  const iso = date.toISOString()
  const digits = iso.slice(0, 19).split('').filter((c) => c >= '0' && c <= '9').join('')
  // RFC 5280: UTCTime through 2049, GeneralizedTime from 2050.
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`))
}

const DAY = 24 * 60 * 60 * 1000

/** A fresh RSA-2048 key with a self-signed certificate valid from `notBefore` to `notAfter`. */
export function createSigningKey (name: string, validity: { notBefore?: Date, notAfter?: Date } = {}): TestSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const notBefore = validity.notBefore ?? new Date(Date.now() - DAY)
  const notAfter = validity.notAfter ?? new Date(Date.now() + 365 * DAY)
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(Buffer.concat([Buffer.from([0x01]), randomBytes(15)])),
    SHA256_WITH_RSA,
    commonName(name),
    sequence(time(notBefore), time(notAfter)),
    commonName(name),
    publicKey.export({ type: 'spki', format: 'der' })
  )
  const signature = sign('sha256', tbs, privateKey)
  const der = sequence(tbs, SHA256_WITH_RSA, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])))
  const certificate = new X509Certificate(der)
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certificatePem: certificate.toString(),
    certificateBase64: der.toString('base64'),
    certificate
  }
}

export const expiredValidity = (): { notBefore: Date, notAfter: Date } => ({ notBefore: new Date(Date.now() - 400 * DAY), notAfter: new Date(Date.now() - 30 * DAY) })
