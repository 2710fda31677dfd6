/**
 * The service provider's own keys (Providers:Saml2 SigningKey/SigningCertificate[Next],
 * EncryptionKey[Previous]/EncryptionCertificate): read with node:crypto, checked for a key that
 * matches its certificate, and returned as PEM for @node-saml/node-saml. A problem names the key
 * and what is wrong, never a value: a private key must not reach a log, a page or an error.
 */
import { createPrivateKey, type KeyObject, type X509Certificate } from 'node:crypto'
import { readCertificate } from './certificates.js'

/** Settings as configured; secret values are passed revealed, only here. */
export interface ServiceProviderKeyInput {
  readonly signingKey: string
  readonly signingCertificate: string
  readonly signingCertificateNext: string
  readonly encryptionKey: string
  readonly encryptionKeyPrevious: string
  readonly encryptionCertificate: string
}

export interface ServiceProviderSigning {
  /** PKCS#8 PEM. */
  readonly privateKeyPem: string
  /** PEM; the first matches the key, a second is published while rolling. */
  readonly certificatesPem: readonly string[]
}

export interface ServiceProviderDecryption {
  /** PKCS#8 PEM, the current key first, then the previous one (accepted while the IdP rolls over). */
  readonly privateKeysPem: readonly string[]
  /** PEM of the current key's certificate (published as use="encryption"). */
  readonly certificatePem: string
}

export interface ServiceProviderKeys {
  readonly signing: ServiceProviderSigning | undefined
  readonly decryption: ServiceProviderDecryption | undefined
}

/** A problem with one key (the last segment of its colon path), as a fixed sentence. */
export interface KeyProblem {
  readonly key: string
  readonly message: string
}

const blank = (value: string): boolean => value.trim() === '' || /^<[^>]*>$/.test(value.trim())

function readKey (value: string): KeyObject | undefined {
  try {
    const key = createPrivateKey({ key: value.trim(), format: 'pem' })
    return key.asymmetricKeyType === 'rsa' ? key : undefined
  } catch {
    return undefined
  }
}

function readCertificateOrUndefined (value: string): X509Certificate | undefined {
  try {
    return readCertificate(value)
  } catch {
    return undefined
  }
}

const pkcs8 = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString()

/** A private key and its certificate, both required once either is set, and matching; problems named by key. */
function readPair (keyValue: string, certificateValue: string, keyName: string, certificateName: string, problems: KeyProblem[]) {
  const key = blank(keyValue) ? undefined : readKey(keyValue)
  const certificate = blank(certificateValue) ? undefined : readCertificateOrUndefined(certificateValue)
  if (blank(keyValue)) problems.push({ key: keyName, message: `is required when ${certificateName} is set.` })
  else if (key === undefined) problems.push({ key: keyName, message: 'is not a PEM RSA private key.' })
  if (blank(certificateValue)) problems.push({ key: certificateName, message: `is required when ${keyName} is set.` })
  else if (certificate === undefined) problems.push({ key: certificateName, message: 'is not a PEM or base64 DER X.509 certificate.' })
  if (key !== undefined && certificate !== undefined && !certificate.checkPrivateKey(key)) {
    problems.push({ key: certificateName, message: `does not match ${keyName} (the certificate's public key is not the key's).` })
  }
  return { key, certificate }
}

/**
 * Reads and cross-checks the SP keys. Returns the problems (key name relative to
 * Providers:Saml2) and, when there are none, the usable keys.
 */
export function readServiceProviderKeys (input: ServiceProviderKeyInput): { keys: ServiceProviderKeys, problems: KeyProblem[] } {
  const problems: KeyProblem[] = []
  let signing: ServiceProviderSigning | undefined
  let decryption: ServiceProviderDecryption | undefined

  if (!blank(input.signingKey) || !blank(input.signingCertificate)) {
    const { key, certificate } = readPair(input.signingKey, input.signingCertificate, 'SigningKey', 'SigningCertificate', problems)
    const next = blank(input.signingCertificateNext) ? undefined : readCertificateOrUndefined(input.signingCertificateNext)
    if (!blank(input.signingCertificateNext) && next === undefined) problems.push({ key: 'SigningCertificateNext', message: 'is not a PEM or base64 DER X.509 certificate.' })
    if (key !== undefined && certificate !== undefined && problems.length === 0) {
      signing = { privateKeyPem: pkcs8(key), certificatesPem: next === undefined ? [certificate.toString()] : [certificate.toString(), next.toString()] }
    }
  } else if (!blank(input.signingCertificateNext)) {
    problems.push({ key: 'SigningCertificateNext', message: 'is set without SigningKey and SigningCertificate.' })
  }

  const encryptionProblems = problems.length
  if (!blank(input.encryptionKey) || !blank(input.encryptionCertificate)) {
    const { key, certificate } = readPair(input.encryptionKey, input.encryptionCertificate, 'EncryptionKey', 'EncryptionCertificate', problems)
    const previous = blank(input.encryptionKeyPrevious) ? undefined : readKey(input.encryptionKeyPrevious)
    if (!blank(input.encryptionKeyPrevious) && previous === undefined) problems.push({ key: 'EncryptionKeyPrevious', message: 'is not a PEM RSA private key.' })
    if (key !== undefined && certificate !== undefined && problems.length === encryptionProblems) {
      decryption = { privateKeysPem: previous === undefined ? [pkcs8(key)] : [pkcs8(key), pkcs8(previous)], certificatePem: certificate.toString() }
    }
  } else if (!blank(input.encryptionKeyPrevious)) {
    problems.push({ key: 'EncryptionKeyPrevious', message: 'is set without EncryptionKey and EncryptionCertificate.' })
  }
  return { keys: { signing, decryption }, problems }
}
