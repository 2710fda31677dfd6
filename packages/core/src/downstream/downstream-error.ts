/**
 * The refusals of a call to a downstream API (issue 35 item 7), one class with a stable code from
 * the catalogue (errors.ts, docs/errors.md) and a failure class for the log line. The message names
 * the API (its configuration name), never a token, a URL's query or a response body; 5xx answers
 * show the catalogue's generic text only.
 */
import { AppError, messageOf } from '../errors.js'

/**
 * Why a call failed, logged as `failure`:
 * - `sign_in_required`: no signed-in user, no saved access token of the API's UserToken scheme, or
 *   the session signed in with another scheme or ended when its refresh token was refused;
 * - `token_unavailable`: the client-credentials token could not be obtained (logged with the
 *   token request's own failure class);
 * - `unreachable`, `timeout`, `too_large`: the API was not reached, did not answer within
 *   TimeoutSeconds, or answered with more than MaxResponseBytes;
 * - `invalid_target`: the app's code asked for an unknown API, a call kind the API is not
 *   configured for, an absolute URL, or a path that leaves the BaseUrl (nothing was sent).
 *
 * @public @experimental
 */
export type DownstreamFailure = 'sign_in_required' | 'token_unavailable' | 'unreachable' | 'timeout' | 'too_large' | 'invalid_target'

const CODE_OF = {
  sign_in_required: 'APP_ERR_DOWNSTREAM_SIGN_IN_REQUIRED',
  token_unavailable: 'APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE',
  unreachable: 'APP_ERR_DOWNSTREAM_FAILED',
  timeout: 'APP_ERR_DOWNSTREAM_FAILED',
  too_large: 'APP_ERR_DOWNSTREAM_FAILED',
  invalid_target: 'APP_ERR_DOWNSTREAM_REQUEST_INVALID'
} as const satisfies Record<DownstreamFailure, string>

/** A call to a downstream API that did not complete; rendered from the catalogue like every {@link AppError}. @public @experimental */
export class DownstreamApiError extends AppError {
  /** The API's configuration name (`DownstreamApis:<Name>`). */
  readonly api: string
  /** Why the call failed ({@link DownstreamFailure}), as its `downstream.*` log line names it. */
  readonly failure: DownstreamFailure

  constructor (api: string, failure: DownstreamFailure, options?: ErrorOptions) {
    const code = CODE_OF[failure]
    super(code, messageOf(code, api), options)
    this.name = 'DownstreamApiError'
    this.api = api
    this.failure = failure
  }
}
