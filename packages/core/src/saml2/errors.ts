/**
 * The SAML2 refusals: the failure classes the ACS and the logout endpoints report, the error that
 * carries one, and node-saml's uncoded errors mapped onto them.
 */
import { SamlStatusError } from '@node-saml/node-saml'
import { SignInRefusal } from '../errors.js'
import type { SignInFailure } from '../sign-in/sign-in-failure.js'

/** Failure classes the ACS reports through the shared external sign-in `fail()`. */
export type Saml2FailureClass = Extract<SignInFailure,
  | 'correlation' | 'replay' | 'signature' | 'assertion_unsigned' | 'audience' | 'expired' | 'destination' | 'issuer'
  | 'certificate' | 'unsolicited' | 'malformed' | 'provider_error' | 'decryption' | 'auth_time' | 'authn_context' | 'amr'>

/**
 * A response refused for `failure`; the message is a fixed phrase, never message content.
 * `diagnostics` are fixed log fields (the external.sign_in.failed line carries them).
 */
export class Saml2ResponseError extends SignInRefusal<Saml2FailureClass, Readonly<Record<string, string>>> {
  constructor (failure: Saml2FailureClass, message: string, options?: ErrorOptions & { diagnostics?: Readonly<Record<string, string>> }) {
    super(failure, message, options)
    this.name = 'Saml2ResponseError'
  }
}

/** Maps node-saml's (uncoded) errors to failure classes; the table is pinned by tests. */
export function classifyLibraryError (error: unknown): Saml2FailureClass {
  if (error instanceof Saml2ResponseError) return error.failure
  if (error instanceof SamlStatusError) return 'provider_error'
  const message = error instanceof Error ? error.message : ''
  if (message.includes('InResponseTo')) return 'correlation'
  if (message.includes('audience') || message.includes('AudienceRestriction')) return 'audience'
  if (message.includes('not yet valid') || message.includes('expired') || message.includes('No valid subject confirmation')) return 'expired'
  if (message.includes('signature') || message.includes('signed') || message.includes('ID cannot refer')) return 'signature'
  if (message.includes('issuer')) return 'issuer'
  return 'malformed'
}
