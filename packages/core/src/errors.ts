/**
 * The error catalogue: each stable code with its HTTP status, its title (the page heading and the
 * problem+json `title`) and its message, as fastify's lib/errors.js keeps them together. Codes
 * survive the generator's renaming and each has a line in docs/errors.md; test/errors.test.ts keeps
 * the two in step. Messages are safe to show: they name a parameter, key, route or policy, never a
 * configured or submitted value. Raise one with {@link createError}.
 *
 * @public
 */
export const ERRORS = {
  APP_ERR_CONFIG_INVALID: { status: 500, title: 'Configuration is invalid', message: () => 'The configuration is invalid.' },
  APP_ERR_POLICY_UNKNOWN: { status: 500, title: 'Unknown authorization policy', message: (route: string, policy: string) => `Route ${route} names the unknown authorization policy ${policy}.` },
  APP_ERR_POLICY_DUPLICATE: { status: 500, title: 'Authorization policy registered twice', message: (policy: string) => `Authorization policy ${policy} is already registered.` },
  APP_ERR_ROUTE_ACCESS_CONFLICT: { status: 500, title: 'Route access declared twice', message: (route: string) => `Route ${route} declares both allowAnonymous and authorize.` },
  APP_ERR_ROUTE_BEARER_SCHEMES: { status: 500, title: 'Route names unknown bearer schemes', message: (route: string) => `Route ${route} declares config.bearerSchemes that is empty or names a scheme that is not an enabled JwtBearer scheme.` },
  APP_ERR_PROVIDER_DUPLICATE: { status: 500, title: 'Sign-in provider registered twice', message: (scheme: string) => `Provider scheme ${scheme} is already registered.` },
  APP_ERR_AUTH_REQUIRED: { status: 401, title: 'Authentication required', message: () => 'Sign in to access this resource.' },
  APP_ERR_AUTH_FORBIDDEN: { status: 403, title: 'Access denied', message: () => 'The signed-in user does not meet the route\'s policy.' },
  APP_ERR_AUTH_STEP_UP_REQUIRED: { status: 401, title: 'Stronger authentication required', message: () => 'The route requires a more recent or stronger authentication at the identity provider.' },
  APP_ERR_BEARER_INVALID: { status: 401, title: 'Invalid access token', message: () => 'The access token is not valid for this API.' },
  APP_ERR_BEARER_SCOPE: { status: 403, title: 'Insufficient scope', message: () => 'The access token does not carry the scope or client this resource requires.' },
  APP_ERR_API_KEY_REQUEST_INVALID: { status: 400, title: 'API key request not valid', message: (field: string) => `The API key request's ${field} is not valid.` },
  APP_ERR_API_KEY_LIMIT: { status: 409, title: 'Too many API keys', message: () => 'The owner already holds the most API keys allowed; revoke one first.' },
  APP_ERR_API_KEY_SESSION_REQUIRED: { status: 403, title: 'Signed-in session required', message: () => 'API keys are created, listed and revoked from a signed-in session only, never with an API key or access token.' },
  APP_ERR_API_KEY_POLICY_UNKNOWN: { status: 500, title: 'Unknown tenant administrator policy', message: (key: string, policy: string) => `Setting ${key} names the unknown authorization policy ${policy}.` },
  APP_ERR_GOVERNANCE_DENIED: { status: 403, title: 'Action not permitted', message: () => 'The governance evaluator refused the action.' },
  APP_ERR_CSRF_INVALID: { status: 400, title: 'Anti-forgery validation failed', message: () => 'The anti-forgery token is missing or invalid.' },
  APP_ERR_RETURN_URL_INVALID: { status: 400, title: 'Return URL is not local', message: () => 'The return URL must be a local path such as /orders?id=1.' },
  APP_ERR_PROVIDER_UNKNOWN: { status: 400, title: 'Unknown sign-in provider', message: () => 'The provider is not a registered sign-in provider.' },
  APP_ERR_EMAIL_INVALID: { status: 400, title: 'E-mail address not valid', message: () => 'The email parameter must be one e-mail address, such as name@example.com.' },
  APP_ERR_PROVIDER_UNAVAILABLE: { status: 503, title: 'Sign-in provider unavailable', message: () => 'The sign-in provider is unavailable right now.' },
  APP_ERR_AUTH_CORRELATION_FAILED: { status: 400, title: 'Sign-in could not be correlated', message: () => 'The provider callback could not be matched to a sign-in started by this browser.' },
  APP_ERR_AUTH_PROVIDER_FAILED: { status: 400, title: 'Sign-in failed', message: () => 'The provider\'s response was refused.' },
  APP_ERR_STATE_UNAVAILABLE: { status: 503, title: 'Service temporarily unavailable', message: () => 'The service cannot verify sessions right now. Please try again shortly.' },
  APP_ERR_STATE_FULL: { status: 503, title: 'Server state is full', message: (what: string) => `The server holds as many ${what} as it may. Please try again in a few minutes.` },
  APP_ERR_RATE_LIMITED: { status: 429, title: 'Too many requests', message: (seconds: string) => `Too many requests from this address. Please try again in ${seconds} seconds.` },
  APP_ERR_SESSION_DISABLED: { status: 500, title: 'Cookie session is disabled', message: (enabledKey: string, cookieKey: string) => `Sign-in needs ${enabledKey} and ${cookieKey}.` },
  APP_ERR_HOST_NOT_ALLOWED: { status: 400, title: 'Host not allowed', message: (publicOriginKey: string, allowedHostsKey: string) => `The request's host is not one this application answers for. Use the address in ${publicOriginKey}; to answer for another host name, an operator adds it to ${allowedHostsKey}.` },
  APP_ERR_SECRET_INVALID: { status: 500, title: 'Protected secret cannot be opened', message: (reason: string) => `A protected secret could not be opened: ${reason}.` },
  APP_ERR_DOWNSTREAM_SIGN_IN_REQUIRED: { status: 401, title: 'Sign-in required for the API call', message: (api: string) => `Calling ${api} needs a signed-in user whose sign-in saved an access token for it; sign in again.` },
  APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE: { status: 503, title: 'API token unavailable', message: (api: string) => `No access token for ${api} could be obtained right now. Please try again shortly.` },
  APP_ERR_DOWNSTREAM_FAILED: { status: 502, title: 'API call failed', message: (api: string) => `The call to ${api} did not complete.` },
  APP_ERR_DOWNSTREAM_REQUEST_INVALID: { status: 500, title: 'API call refused', message: (api: string) => `The call to ${api} was refused before it was sent.` },
  APP_ERR_NOT_FOUND: { status: 404, title: 'Not found', message: () => 'No route matches the request.' },
  APP_ERR_METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed', message: () => 'The resource does not accept this method; the Allow header lists those it accepts.' },
  APP_ERR_INTERNAL: { status: 500, title: 'Internal server error', message: () => 'An unexpected error occurred.' }
} as const satisfies Record<string, { status: number, title: string, message: (...parameters: string[]) => string }>

/** @public */
export type ErrorCode = keyof typeof ERRORS

/**
 * The codes of the core's own errors that end in a log line, not a response: a step throws them and
 * the caller logs the code as `errorCode` (or, for a refused connection, `causeCode`) beside the
 * failure class, or raises its own answer from the catalogue above. Each is the `code` of one error
 * class under {@link CoreError} and has a line in docs/errors.md ("Codes in log lines"), kept in step
 * by test/errors.test.ts. Other `errorCode` values of a log line are the protocol's own (an OAuth
 * `error`, a jose or network code), as docs/providers.md lists them.
 */
export const LOG_CODES = {
  ID_TOKEN_KEY_UNKNOWN: 'ID token signed with a key the provider does not publish',
  JWKS_UNAVAILABLE: 'Provider key set could not be loaded',
  ENDPOINT_OFF_ISSUER_ORIGIN: 'Discovery names an endpoint off the issuer\'s origin',
  CLIENT_ASSERTION_KEY_INVALID: 'Client assertion key or certificate refused',
  PAR_ENDPOINT_MISSING: 'Pushed authorization required but not offered',
  ALLOWED_TENANTS_REQUIRED: 'Multi-tenant issuer without allowed tenants',
  ISSUER_TEMPLATE_MISMATCH: 'Issuer template does not fit the Authority',
  BEARER_TOKEN_INVALID: 'Request credential refused',
  RESPONSE_TOO_LARGE: 'Outbound response over its size limit',
  ERR_INTERNAL_ADDRESS: 'Provider host resolved to an internal address'
} as const satisfies Record<string, string>

/** A code of {@link LOG_CODES}. */
export type LogCode = keyof typeof LOG_CODES

/** The parameters a code's message names (a route, a policy, a key), in order. @public */
export type MessageParameters<C extends ErrorCode> = Parameters<(typeof ERRORS)[C]['message']>

/** A code's catalogue message with its parameters filled in. @public */
export function messageOf<C extends ErrorCode> (code: C, ...parameters: MessageParameters<C>): string {
  return (ERRORS[code].message as (...values: string[]) => string)(...parameters)
}

/**
 * The one root of every error the core raises on purpose, as Auth.js's `errors.ts` has one base
 * error: the coded application errors ({@link AppError}, rendered from the catalogue), the
 * refusals of a provider's response, logout token or token refresh ({@link SignInRefusal}, logged
 * with their failure class) and the state store's refusals (state/state-store.ts, rendered as
 * `APP_ERR_STATE_*`), and the errors a step throws for its caller to log ({@link LOG_CODES}). No
 * other class in the core extends `Error` (test/errors.test.ts checks it). Callers tell them apart
 * with `instanceof` on the subclass, never by duck typing; the error handler answers an error by
 * its own catalogue code. The base adds nothing but the common ancestry.
 *
 * @public
 */
export class CoreError extends Error {}

/** An error with a stable code; its message is safe for logs and, below 500, for responses. @public */
export class AppError extends CoreError {
  readonly code: ErrorCode
  readonly statusCode: number

  /** Prefer {@link createError}, which takes the message from the catalogue. */
  constructor (code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'AppError'
    this.code = code
    this.statusCode = ERRORS[code].status
  }
}

/** The catalogue's error for `code`, its message naming `parameters`. @public */
export function createError<C extends ErrorCode> (code: C, ...parameters: MessageParameters<C>): AppError {
  return new AppError(code, messageOf(code, ...parameters))
}

/** One configuration problem: the full colon path and a sentence naming it, never its value. @public */
export interface KeyedProblem {
  readonly key: string
  readonly message: string
}

/**
 * Startup refused for a configuration reason found only when a resource is opened (the key
 * directory, a certificate): reported like validation failures (`APP_ERR_CONFIG_INVALID`, the
 * sentences naming keys), never as a stack trace.
 *
 * @public
 */
export class ConfigurationError extends AppError {
  readonly problems: readonly KeyedProblem[]

  constructor (problems: readonly KeyedProblem[], options?: ErrorOptions) {
    super('APP_ERR_CONFIG_INVALID', problems.map((problem) => problem.message).join(' '), options)
    this.name = 'ConfigurationError'
    this.problems = problems
  }
}

/**
 * Safe log fields of a refusal, chosen by the code that refuses: an HTTP status, an OAuth
 * `error` code, a network cause code, a fixed algorithm name. Never a value taken from the
 * message, a token, a description or a secret.
 *
 * @public @experimental
 */
export type RefusalDiagnostics = Readonly<Record<string, string | number>>

/**
 * A refused step, the base of every refusal a provider's response, logout token or token refresh
 * can end in: the protocol folders throw their own subclass (`Saml2ResponseError`,
 * `OpenIdConnectError`, `VendorFlowError`, `LogoutTokenError`, `TokenRefreshError`), and the
 * plugins tell a refusal from any other error with `instanceof SignInRefusal` and read its fields.
 * `failure` is the class logged as `failure`, from the subclass's closed set (a sign-in
 * protocol's part of `SignInFailure` in sign-in/sign-in-failure.ts, or the classes of logout
 * tokens and token refresh), `diagnostics` the safe log fields, `cause` the library error (for the
 * log's error name and code only). The message is a fixed phrase, never message content. A
 * refusal has no error code of its own: sign-in/sign-in-failure.ts maps its failure class to the
 * outcome and the code logged with it.
 *
 * @public @experimental
 */
export class SignInRefusal<F extends string, D extends object = RefusalDiagnostics> extends CoreError {
  /** The failure class, logged as `failure`. */
  readonly failure: F
  /** Safe log fields ({@link RefusalDiagnostics}); the empty object when there are none. */
  readonly diagnostics: D

  constructor (failure: F, message: string, options?: ErrorOptions & { readonly diagnostics?: D }) {
    super(message, options)
    this.name = 'SignInRefusal'
    this.failure = failure
    // Every diagnostics shape has optional fields only: none is the empty object.
    this.diagnostics = options?.diagnostics ?? {} as D
  }
}
