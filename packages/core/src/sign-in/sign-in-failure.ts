/**
 * How a failed external sign-in ends, in two tables: each failure class (logged as `failure`) leads
 * to one outcome ({@link OUTCOME_OF}), and each outcome has its fixed text, the error code logged
 * with it and the page that shows it ({@link SIGN_IN_OUTCOMES}): the login page
 * (`/Account/Login?failure=<outcome>`), or a refusal page with the request id. Nothing from the
 * request is ever echoed.
 */
import type { ErrorCode } from '../errors.js'

/**
 * Every failure class a provider may report through the shared `fail()`: the shared ones
 * (`cancelled` at the provider, `correlation` and `replay` of the flow, `unavailable` metadata or
 * discovery, `provider_error`, unusable `claims`, `group_overage`: the IdP left the groups out,
 * sign-in/group-overage.ts, `step_up_user`: a step-up signed in another user than the session's,
 * sign-in/step-up-flow.ts, `deprovisioned`: the person's organisation deactivated them through
 * SCIM provisioning, `not_provisioned`: a connection that requires provisioned users does not know
 * them, sign-in/provisioning-admission.ts) and the protocols' own. Each protocol folder names its part of this
 * set (`OpenIdConnectFailure` in oidc/errors.ts, `Saml2FailureClass` in saml2/errors.ts,
 * `VendorFailure` in oauth/vendor-client.ts), so a class it reports always has an outcome here.
 */
export const SIGN_IN_FAILURES = [
  'cancelled', 'correlation', 'replay', 'unavailable', 'provider_error', 'claims', 'group_overage',
  'token', 'id_token', 'nonce', 'issuer', 'audience', 'expired', 'signature', 'unknown_key', 'userinfo',
  'pushed_authorization', 'tenant', 'auth_time', 'acr', 'amr', 'authn_context', 'step_up_user',
  'assertion_unsigned', 'destination', 'certificate', 'unsolicited', 'malformed', 'decryption',
  'deprovisioned', 'not_provisioned'
] as const

export type SignInFailure = typeof SIGN_IN_FAILURES[number]

/**
 * What the user is told: the `failure` query value of the login page, or (`organisation`) a
 * refusal page answered by the callback itself.
 */
export type SignInOutcome = 'cancelled' | 'correlation' | 'unavailable' | 'group_overage' | 'organisation' | 'deprovisioned' | 'not_provisioned' | 'failed'

/**
 * Where an outcome is shown: `login`, the login page (`/Account/Login?failure=<outcome>`), where
 * the user can try again; `refusal`, a 403 page answered by the callback request itself, for a
 * refusal of who the user is that trying again cannot change: it shows the id of that request,
 * the `reqId` of its `external.sign_in.failed` and completion log lines, for the administrator.
 */
export type SignInOutcomePage = 'login' | 'refusal'

export const SIGN_IN_OUTCOMES: Readonly<Record<SignInOutcome, { readonly message: string, readonly code: ErrorCode, readonly page: SignInOutcomePage }>> = {
  cancelled: { message: 'Sign-in was cancelled.', code: 'APP_ERR_AUTH_PROVIDER_FAILED', page: 'login' },
  correlation: { message: 'Sign-in could not be completed because the sign-in request could not be matched. Please try again.', code: 'APP_ERR_AUTH_CORRELATION_FAILED', page: 'login' },
  unavailable: { message: 'The sign-in provider is unavailable right now. Please try again later.', code: 'APP_ERR_PROVIDER_UNAVAILABLE', page: 'login' },
  group_overage: { message: 'Sign-in was refused: your account is in more groups than the identity provider puts into a sign-in (group overage), so this application cannot check your group memberships. Ask your administrator to assign application roles or to limit the groups sent to this application.', code: 'APP_ERR_AUTH_PROVIDER_FAILED', page: 'login' },
  organisation: { message: 'Sign-in was refused: your organisation is not set up to use this application. Trying again will not help; give your administrator the request id below, which they can find in the application\'s log.', code: 'APP_ERR_AUTH_PROVIDER_FAILED', page: 'refusal' },
  deprovisioned: { message: 'Sign-in was refused: your organisation has turned off your access to this application. Trying again will not help; if you think this is a mistake, ask your organisation\'s administrator, and give them the request id below.', code: 'APP_ERR_AUTH_PROVIDER_FAILED', page: 'refusal' },
  not_provisioned: { message: 'Sign-in was refused: your organisation has not given you access to this application. Trying again will not help; ask your organisation\'s administrator to assign you the application, and give them the request id below.', code: 'APP_ERR_AUTH_PROVIDER_FAILED', page: 'refusal' },
  failed: { message: 'Sign-in failed. Please try again or contact your administrator.', code: 'APP_ERR_AUTH_PROVIDER_FAILED', page: 'login' }
}

/**
 * The outcome of every failure class, each listed (a new class does not compile until it has
 * one): `tenant` (AllowedTenants: the user's organisation, its Entra tenant, is not listed) is
 * the organisation refusal; the protocol's own checks read as `failed`, never saying which one.
 */
export const OUTCOME_OF: Readonly<Record<SignInFailure, SignInOutcome>> = {
  cancelled: 'cancelled',
  correlation: 'correlation',
  replay: 'correlation',
  unavailable: 'unavailable',
  group_overage: 'group_overage',
  tenant: 'organisation',
  provider_error: 'failed',
  claims: 'failed',
  token: 'failed',
  id_token: 'failed',
  nonce: 'failed',
  issuer: 'failed',
  audience: 'failed',
  expired: 'failed',
  signature: 'failed',
  unknown_key: 'failed',
  userinfo: 'failed',
  pushed_authorization: 'failed',
  auth_time: 'failed',
  acr: 'failed',
  amr: 'failed',
  authn_context: 'failed',
  step_up_user: 'failed',
  assertion_unsigned: 'failed',
  destination: 'failed',
  certificate: 'failed',
  unsolicited: 'failed',
  malformed: 'failed',
  decryption: 'failed',
  deprovisioned: 'deprovisioned',
  not_provisioned: 'not_provisioned'
}

export function outcomeOf (failure: SignInFailure): SignInOutcome {
  return Object.hasOwn(OUTCOME_OF, failure) ? OUTCOME_OF[failure] : 'failed'
}

/** The login page's text for a `failure` query value; an unknown value, or one shown on a page of its own, reads as `failed`. */
export function outcomeMessage (value: string): string {
  const outcome = Object.hasOwn(SIGN_IN_OUTCOMES, value) ? SIGN_IN_OUTCOMES[value as SignInOutcome] : SIGN_IN_OUTCOMES.failed
  return (outcome.page === 'login' ? outcome : SIGN_IN_OUTCOMES.failed).message
}
