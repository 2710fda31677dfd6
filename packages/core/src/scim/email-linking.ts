/**
 * Linking by e-mail address (issue 41, item 3), a connection's opt-in
 * (`Provisioning:Connections:<Name>:LinkByEmail`), written against the account takeovers of
 * ciso-assistant PR #4658. A sign-in that links no SCIM user by `externalId` may link the one SCIM
 * user of the connection with its e-mail address, when every one of these holds:
 *
 * 1. the provider says the address is verified: the connection's `EmailVerifiedClaim` is `true`
 *    (default: OpenID Connect's `email_verified`; no other protocol has a standard one, so a SAML
 *    or OAuth sign-in links by e-mail only with the claim named);
 * 2. the sign-in has one e-mail address (`application:email`), ASCII before the `@`, whose domain
 *    is one of `VerifiedDomains`, compared as ASCII lower case; a label with other characters
 *    counts only as the internationalized domain its `xn--` form names, so a homoglyph
 *    (`cоntoso.test` with a Cyrillic о) or a fullwidth letter that IDNA would map to ASCII never
 *    equals a listed domain;
 * 3. exactly one SCIM user of the connection has that address among its `emails`, it is linked to
 *    no one, and (with an `ExternalIdClaim`) its `externalId` is not another person's.
 *
 * Anything else links nothing: the person signs in as one the directory does not know
 * (`not_provisioned` where the connection requires provisioned users). The checks are plain
 * functions; sign-in-admission.ts asks the store.
 */
import { domainToASCII } from 'node:url'
import type { ConfigurationProblem } from '../config/bind.js'
import { problem } from '../config/rules.js'
import type { ProvisioningConnectionConfiguration } from '../config/schema.js'
import type { ProvisioningSignIn } from '../sign-in/provisioning-admission.js'
import { ApplicationClaimTypes } from '../session/principal.js'

/** A connection's e-mail linking, when `LinkByEmail` is on. */
export interface EmailLinking {
  /** ASCII lower-case domains (internationalized ones in their `xn--` form). */
  readonly verifiedDomains: ReadonlySet<string>
  /** The claim that must be `true`; undefined: `email_verified`, for OpenID Connect sign-ins only. */
  readonly emailVerifiedClaim?: string
}

/** Why a sign-in was not linked by e-mail (the `reason` of `provisioning.sign_in.email_not_linked`). */
export type EmailLinkRefusal = 'unverified' | 'no_single_email' | 'malformed_email' | 'other_domain' | 'no_match' | 'ambiguous' | 'linked_to_another' | 'external_id_mismatch'

/** A DNS name in ASCII: labels of letters, digits and hyphens, at least two of them. */
const ASCII_DOMAIN = /^(?!-)[a-z0-9-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/
/** Printable ASCII, no `@`: the part of an address before its `@`. */
const ASCII_LOCAL_PART = /^[\x21-\x3f\x41-\x7e]{1,64}$/

/** The e-mail linking of a connection's section, or undefined when `LinkByEmail` is off. */
export function emailLinkingOf (section: ProvisioningConnectionConfiguration): EmailLinking | undefined {
  if (!section.LinkByEmail) return undefined
  const claim = section.EmailVerifiedClaim.trim()
  return {
    verifiedDomains: new Set(section.VerifiedDomains.map((domain) => domain.trim().toLowerCase())),
    ...(claim === '' ? {} : { emailVerifiedClaim: claim })
  }
}

/** The startup problems of a connection's e-mail linking keys (`key`: the connection's colon path plus a sub-key). */
export function emailLinkingProblems (section: ProvisioningConnectionConfiguration, key: (sub: string) => string): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  section.VerifiedDomains.forEach((domain, index) => {
    if (!ASCII_DOMAIN.test(domain.trim().toLowerCase())) {
      problems.push(problem(key(`:VerifiedDomains:${index}`), `${key(`:VerifiedDomains:${index}`)} must be a domain name in ASCII (an internationalized domain in its xn-- form), without @ or a trailing dot.`))
    }
  })
  if (section.LinkByEmail && section.VerifiedDomains.length === 0) {
    problems.push(problem(key(':VerifiedDomains'), `${key(':VerifiedDomains')} is required when ${key(':LinkByEmail')} is true: the e-mail domains the customer proved it owns.`))
  }
  return problems
}

/** The comparison form of a domain from a sign-in: ASCII lower case, or undefined when a label is neither ASCII nor a genuine internationalized one. */
export function domainKeyOf (domain: string): string | undefined {
  const labels: string[] = []
  for (const label of domain.split('.')) {
    if (/^[\x21-\x7e]*$/.test(label)) {
      labels.push(label.toLowerCase())
      continue
    }
    // IDNA maps some characters to ASCII (fullwidth letters, the ideographic full stop): only a
    // label that stays internationalized (xn--) stands for itself.
    const ascii = domainToASCII(label).toLowerCase()
    if (!ascii.startsWith('xn--') || ascii.includes('.')) return undefined
    labels.push(ascii)
  }
  const key = labels.join('.')
  return ASCII_DOMAIN.test(key) ? key : undefined
}

/** The comparison form of an e-mail address (ASCII lower case, the domain by {@link domainKeyOf}), or undefined when it has none. */
export function addressKeyOf (address: string): string | undefined {
  const at = address.indexOf('@')
  if (at <= 0 || at !== address.lastIndexOf('@')) return undefined
  const local = address.slice(0, at)
  const domain = domainKeyOf(address.slice(at + 1))
  return ASCII_LOCAL_PART.test(local) && domain !== undefined ? `${local.toLowerCase()}@${domain}` : undefined
}

/** Whether the provider said the sign-in's e-mail address is verified. */
export function isEmailVerified (linking: EmailLinking, signIn: Pick<ProvisioningSignIn, 'protocol' | 'providerClaims'>): boolean {
  const claim = linking.emailVerifiedClaim ?? (signIn.protocol === 'OpenIdConnect' ? 'email_verified' : undefined)
  if (claim === undefined) return false
  const values = signIn.providerClaims.filter((candidate) => candidate.type === claim).map((candidate) => candidate.value.trim().toLowerCase())
  return values.length > 0 && values.every((value) => value === 'true')
}

/** What a sign-in offers for linking by e-mail: its address's comparison form and the forms to look it up by, or why nothing. */
export type LinkableEmail = { readonly key: string, readonly lookups: readonly string[] } | { readonly refused: EmailLinkRefusal }

/** The verified address of a sign-in at one of the connection's verified domains, or why there is none. */
export function linkableEmailOf (linking: EmailLinking, signIn: Pick<ProvisioningSignIn, 'protocol' | 'providerClaims' | 'claims'>): LinkableEmail {
  if (!isEmailVerified(linking, signIn)) return { refused: 'unverified' }
  const values = [...new Set(signIn.claims.filter((claim) => claim.type === ApplicationClaimTypes.Email).map((claim) => claim.value))]
  const sent = values[0]
  if (sent === undefined || values.length !== 1) return { refused: 'no_single_email' }
  const key = addressKeyOf(sent)
  if (key === undefined) return { refused: 'malformed_email' }
  if (!linking.verifiedDomains.has(key.slice(key.indexOf('@') + 1))) return { refused: 'other_domain' }
  // A SCIM user's address may be stored as the provider sent it or with its domain in xn-- form.
  return { key, lookups: [...new Set([key, sent])] }
}

/** Whether a SCIM user's `emails` hold the address whose comparison form is `key` (the store's case folding is wider than ASCII). */
export function hasEmail (attributes: Readonly<Record<string, unknown>>, key: string): boolean {
  const emails = attributes.emails
  if (!Array.isArray(emails)) return false
  return emails.some((email: unknown) => {
    const value = (email as { value?: unknown } | null)?.value
    return typeof value === 'string' && addressKeyOf(value) === key
  })
}
