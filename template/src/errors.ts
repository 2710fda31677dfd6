/**
 * The error catalogue. Codes are stable (they survive the generator's renaming) and each has a
 * line in docs/errors.md; test/errors.test.ts keeps the two in step. Messages are safe to show:
 * they name a parameter or key, never a value.
 */
export const ERRORS = {
  APP_ERR_CONFIG_INVALID: { status: 500, title: 'Configuration is invalid' },
  APP_ERR_POLICY_UNKNOWN: { status: 500, title: 'Unknown authorization policy' },
  APP_ERR_AUTH_REQUIRED: { status: 401, title: 'Authentication required' },
  APP_ERR_AUTH_FORBIDDEN: { status: 403, title: 'Access denied' },
  APP_ERR_GOVERNANCE_DENIED: { status: 403, title: 'Action not permitted' },
  APP_ERR_CSRF_INVALID: { status: 400, title: 'Anti-forgery validation failed' },
  APP_ERR_RETURN_URL_INVALID: { status: 400, title: 'Return URL is not local' },
  APP_ERR_PROVIDER_UNKNOWN: { status: 400, title: 'Unknown sign-in provider' },
  APP_ERR_PROVIDER_UNAVAILABLE: { status: 503, title: 'Sign-in provider unavailable' },
  APP_ERR_AUTH_CORRELATION_FAILED: { status: 400, title: 'Sign-in could not be correlated' },
  APP_ERR_AUTH_PROVIDER_FAILED: { status: 400, title: 'Sign-in failed' },
  APP_ERR_STATE_UNAVAILABLE: { status: 503, title: 'Service temporarily unavailable' },
  APP_ERR_STATE_FULL: { status: 503, title: 'Too many sign-ins in progress' },
  APP_ERR_SESSION_DISABLED: { status: 500, title: 'Cookie session is disabled' },
  APP_ERR_BAD_REQUEST: { status: 400, title: 'Bad request' },
  APP_ERR_HOST_NOT_ALLOWED: { status: 400, title: 'Host not allowed' },
  APP_ERR_NOT_FOUND: { status: 404, title: 'Not found' },
  APP_ERR_INTERNAL: { status: 500, title: 'Internal server error' }
} as const satisfies Record<string, { status: number, title: string }>

export type ErrorCode = keyof typeof ERRORS

/** An error with a stable code; its message is safe for logs and, below 500, for responses. */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number

  constructor (code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'AppError'
    this.code = code
    this.statusCode = ERRORS[code].status
  }
}

/** One configuration problem: the full colon path and a sentence naming it, never its value. */
export interface KeyedProblem {
  readonly key: string
  readonly message: string
}

/**
 * Startup refused for a configuration reason found only when a resource is opened (the key
 * directory, a certificate): reported like validation failures (`APP_ERR_CONFIG_INVALID`, the
 * sentences naming keys), never as a stack trace.
 */
export class ConfigurationError extends AppError {
  readonly problems: readonly KeyedProblem[]

  constructor (problems: readonly KeyedProblem[], options?: ErrorOptions) {
    super('APP_ERR_CONFIG_INVALID', problems.map((problem) => problem.message).join(' '), options)
    this.name = 'ConfigurationError'
    this.problems = problems
  }
}
