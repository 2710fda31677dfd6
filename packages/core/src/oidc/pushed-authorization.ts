/**
 * Pushed authorization requests (RFC 9126), per OpenID Connect scheme (`PushedAuthorization`):
 * `Never` (the default), `IfAvailable` or `Require`. The provider's discovery document alone never
 * switches PAR on: ASP.NET's .NET 9 default did (it pushed whenever the document named an endpoint)
 * and broke sign-ins at Okta and Keycloak for clients not allowed to push (dotnet/aspnetcore
 * #62166). With PAR the parameters go to the provider over the back channel, with the client's
 * authentication, and the browser's authorization request carries only `client_id` and
 * `request_uri` (RFC 9126 section 4).
 */
import type * as client from 'openid-client'
import { CoreError, type LogCode } from '../errors.js'

/** `PushedAuthorization`: when the authorization request is pushed first (RFC 9126). */
export type PushedAuthorization = 'Never' | 'IfAvailable' | 'Require'

export const PUSHED_AUTHORIZATION_VALUES: readonly PushedAuthorization[] = ['Never', 'IfAvailable', 'Require']

/** The provider's PAR endpoint (RFC 9126 section 5), when its discovery document names one. */
export function pushedAuthorizationEndpointOf (metadata: client.ServerMetadata): string | undefined {
  const endpoint = metadata.pushed_authorization_request_endpoint
  return typeof endpoint === 'string' && endpoint !== '' ? endpoint : undefined
}

/** Whether this scheme pushes its authorization requests: `Never` never does, whatever discovery says. */
export function usesPushedAuthorization (setting: PushedAuthorization, metadata: client.ServerMetadata): boolean {
  if (setting === 'Never') return false
  return pushedAuthorizationEndpointOf(metadata) !== undefined
}

/**
 * `PushedAuthorization: Require` against a provider whose discovery document names no PAR
 * endpoint: the discovered metadata is not usable (the provider stays unavailable and its
 * readiness says so), and the failure's log line names the setting.
 */
export class PushedAuthorizationUnsupportedError extends CoreError {
  readonly code = 'PAR_ENDPOINT_MISSING' satisfies LogCode
  /** The colon path of `PushedAuthorization`. */
  readonly setting: string

  constructor (setting: string) {
    super(`${setting} is Require but the provider's discovery document names no pushed_authorization_request_endpoint (RFC 9126 section 5)`)
    this.name = 'PushedAuthorizationUnsupportedError'
    this.setting = setting
  }
}

/** Throws {@link PushedAuthorizationUnsupportedError} when `Require` meets a provider without a PAR endpoint. */
export function assertPushedAuthorizationAvailable (setting: PushedAuthorization, metadata: client.ServerMetadata, settingPath: string): void {
  if (setting === 'Require' && pushedAuthorizationEndpointOf(metadata) === undefined) throw new PushedAuthorizationUnsupportedError(settingPath)
}

/**
 * The longest `request_uri` a PAR answer may give (RFC 9126 section 2.2 sets none; providers
 * answer `urn:ietf:params:oauth:request_uri:<reference>` of well under 200 characters). It is copied
 * into the redirect's `Location`: a provider's 200,000 characters overflowed the browser's header
 * limit (issue 40, item 21).
 */
export const MAX_REQUEST_URI_LENGTH = 1024

/** An absolute URI (RFC 3986 section 4.3) of URI characters only: a scheme, a colon, the rest. */
const REQUEST_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/

/** Whether a PAR answer's `request_uri` may go into the browser's authorization request: bounded, and shaped as an absolute URI. */
export function isUsableRequestUri (value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_REQUEST_URI_LENGTH && REQUEST_URI.test(value)
}
