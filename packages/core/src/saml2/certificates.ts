/**
 * IdP signing certificates: read from metadata (base64 DER) or configuration (PEM or base64 DER)
 * with node:crypto's X509Certificate, and split by validity period, because
 * @node-saml/node-saml checks signatures with the public key only and ignores the dates
 * (Providers:Saml2:ValidateCertificates).
 */
import { X509Certificate } from 'node:crypto'

/** Parses a PEM certificate or the base64 of its DER form; throws when it is neither. */
export function readCertificate (value: string): X509Certificate {
  const text = value.trim()
  if (text.startsWith('-----BEGIN CERTIFICATE-----')) return new X509Certificate(text)
  return new X509Certificate(Buffer.from(text, 'base64'))
}

export interface CertificatesByValidity {
  /** Within their validity period at `now` (give or take the clock skew). */
  readonly current: readonly X509Certificate[]
  /** Expired or not yet valid. */
  readonly outside: readonly X509Certificate[]
}

export function isCurrentlyValid (certificate: X509Certificate, nowMs: number, skewMs: number): boolean {
  const from = Date.parse(certificate.validFrom)
  const to = Date.parse(certificate.validTo)
  return Number.isFinite(from) && Number.isFinite(to) && nowMs + skewMs >= from && nowMs - skewMs <= to
}

export function partitionByValidity (certificates: readonly X509Certificate[], nowMs: number, skewMs: number): CertificatesByValidity {
  const current: X509Certificate[] = []
  const outside: X509Certificate[] = []
  for (const certificate of certificates) (isCurrentlyValid(certificate, nowMs, skewMs) ? current : outside).push(certificate)
  return { current, outside }
}
