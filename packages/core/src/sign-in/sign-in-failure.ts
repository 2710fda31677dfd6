/**
 * How a failed external sign-in ends, in one table: each failure class (logged as `failure`) leads
 * to one of five login-page outcomes (`/Account/Login?failure=<outcome>`), and each outcome has its
 * fixed text and the error code logged with it. Nothing from the request is ever echoed.
 */
import type { ErrorCode } from '../errors.js'

/**
 * Every failure class a provider may report through the shared `fail()`: the shared ones
 * (`cancelled` at the provider, `correlation` and `replay` of the flow, `unavailable` metadata or
 * discovery, `provider_error`, unusable `claims`, `group_overage`: the IdP left the groups out,
 * sign-in/group-overage.ts, `step_up_user`: a step-up signed in another user than the session's,
 * sign-in/step-up-flow.ts) and the protocols' own. Each protocol folder names its part of this
 * set (`OpenIdConnectFailure` in oidc/errors.ts, `Saml2FailureClass` in saml2/errors.ts,
 * `VendorFailure` in oauth/vendor-client.ts), so a class it reports always has an outcome here.
 */
export type SignInFailure =
  | 'cancelled' | 'correlation' | 'replay' | 'unavailable' | 'provider_error' | 'claims' | 'group_overage'
  | 'token' | 'id_token' | 'nonce' | 'issuer' | 'audience' | 'expired' | 'signature' | 'unknown_key' | 'userinfo'
  | 'pushed_authorization' | 'tenant' | 'auth_time' | 'acr' | 'amr' | 'authn_context' | 'step_up_user'
  | 'assertion_unsigned' | 'destination' | 'certificate' | 'unsolicited' | 'malformed' | 'decryption'

/** What the login page says: the `failure` query value. */
export type SignInOutcome = 'cancelled' | 'correlation' | 'unavailable' | 'group_overage' | 'failed'

export const SIGN_IN_OUTCOMES: Readonly<Record<SignInOutcome, { readonly message: string, readonly code: ErrorCode }>> = {
  cancelled: { message: 'Sign-in was cancelled.', code: 'APP_ERR_AUTH_PROVIDER_FAILED' },
  correlation: { message: 'Sign-in could not be completed because the sign-in request could not be matched. Please try again.', code: 'APP_ERR_AUTH_CORRELATION_FAILED' },
  unavailable: { message: 'The sign-in provider is unavailable right now. Please try again later.', code: 'APP_ERR_PROVIDER_UNAVAILABLE' },
  group_overage: { message: 'Sign-in was refused: your account is in more groups than the identity provider puts into a sign-in (group overage), so this application cannot check your group memberships. Ask your administrator to assign application roles or to limit the groups sent to this application.', code: 'APP_ERR_AUTH_PROVIDER_FAILED' },
  failed: { message: 'Sign-in failed. Please try again or contact your administrator.', code: 'APP_ERR_AUTH_PROVIDER_FAILED' }
}

/** The failure classes with an outcome of their own; every other class is `failed`. */
const OUTCOME_OF: Readonly<Partial<Record<SignInFailure, SignInOutcome>>> = {
  cancelled: 'cancelled',
  correlation: 'correlation',
  replay: 'correlation',
  unavailable: 'unavailable',
  group_overage: 'group_overage'
}

export function outcomeOf (failure: SignInFailure): SignInOutcome {
  return OUTCOME_OF[failure] ?? 'failed'
}

/** The login page's text for a `failure` query value; an unknown value reads as `failed`. */
export function outcomeMessage (value: string): string {
  return (Object.hasOwn(SIGN_IN_OUTCOMES, value) ? SIGN_IN_OUTCOMES[value as SignInOutcome] : SIGN_IN_OUTCOMES.failed).message
}
