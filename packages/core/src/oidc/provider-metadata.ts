/** The discovered provider metadata: loaded in the background, refreshed, retried with backoff, and its readiness. */
import * as client from 'openid-client'
import { CoreError, type LogCode } from '../errors.js'
import { isNetworkFailure } from './errors.js'

/** Availability of the discovered metadata, as health and the login page report it. */
export interface MetadataStatus {
  readonly available: boolean
  readonly reason?: 'metadata_loading' | 'metadata_unreachable' | 'metadata_invalid'
}

export interface MetadataScheduleOptions {
  /** Refresh interval after a successful load. Default 1 hour. */
  readonly refreshMs?: number
  /** First retry delay after a failed load; doubles up to {@link maxRetryMs}. Default 15 s. */
  readonly retryMs?: number
  readonly maxRetryMs?: number
  /** Called after each failed attempt (for a log line). */
  readonly onFailure?: (reason: NonNullable<MetadataStatus['reason']>, error: unknown) => void
  readonly onLoaded?: () => void
}

/**
 * Discovery loaded in the background and refreshed on a schedule. Timers are unref'd (they never
 * keep the process alive) and {@link stop} clears them. A failed refresh keeps the last good
 * metadata; until a first load succeeds the status is unavailable with a reason class.
 */
export class ProviderMetadata {
  readonly #load: () => Promise<client.Configuration>
  readonly #options: MetadataScheduleOptions
  #current: client.Configuration | undefined
  #reason: NonNullable<MetadataStatus['reason']> = 'metadata_loading'
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  #retryMs: number

  constructor (load: () => Promise<client.Configuration>, options: MetadataScheduleOptions = {}) {
    this.#load = load
    this.#options = options
    this.#retryMs = options.retryMs ?? 15_000
  }

  get current (): client.Configuration | undefined {
    return this.#current
  }

  status (): MetadataStatus {
    return this.#current !== undefined ? { available: true } : { available: false, reason: this.#reason }
  }

  /** Starts the first load without waiting for it. */
  start (): void {
    this.refresh().catch(() => {})
  }

  /** Loads now; resolves when the attempt has finished (never rejects). */
  async refresh (): Promise<void> {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    let delay: number
    try {
      this.#current = await this.#load()
      this.#retryMs = this.#options.retryMs ?? 15_000
      delay = this.#options.refreshMs ?? 3_600_000
      this.#options.onLoaded?.()
    } catch (error) {
      this.#reason = isNetworkFailure(error) ? 'metadata_unreachable' : 'metadata_invalid'
      this.#options.onFailure?.(this.#reason, error)
      delay = this.#current === undefined ? this.#retryMs : Math.min(this.#retryMs, this.#options.refreshMs ?? 3_600_000)
      this.#retryMs = Math.min(this.#retryMs * 2, this.#options.maxRetryMs ?? 300_000)
    }
    if (this.#stopped) return
    this.#timer = setTimeout(() => { this.refresh().catch(() => {}) }, delay)
    this.#timer.unref()
  }

  stop (): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }
}

/**
 * The discovery members naming an endpoint the app calls, sends a credential or token to, or sends
 * the browser to, or whose answer it trusts. For a provider from the provider source each must be
 * on the issuer's origin (issue 40, item 18): a hostile customer's discovery could otherwise name
 * another server's token endpoint (so that an assertion signed for it came to the customer's PAR
 * endpoint) or another provider's keys. `userinfo_endpoint` is apart: see
 * {@link IGNORED_OFF_ORIGIN_ENDPOINTS}.
 */
export const SAME_ORIGIN_ENDPOINTS = [
  'authorization_endpoint', 'token_endpoint', 'pushed_authorization_request_endpoint', 'jwks_uri', 'end_session_endpoint',
  'introspection_endpoint', 'revocation_endpoint', 'registration_endpoint', 'device_authorization_endpoint', 'backchannel_authentication_endpoint'
] as const

/**
 * Members that, off the issuer's origin, are not used instead of refusing the provider: Entra ID's
 * discovery names `https://graph.microsoft.com/oidc/userinfo`, and the ID token carries the claims
 * (a sign-in then merges no userinfo).
 */
export const IGNORED_OFF_ORIGIN_ENDPOINTS = ['userinfo_endpoint'] as const

/** Whether `url` is an absolute URL on `issuer`'s origin (scheme, host and port). */
function onOriginOf (url: unknown, issuer: string): boolean {
  if (typeof url !== 'string') return false
  try {
    return new URL(url).origin === new URL(issuer).origin
  } catch {
    return false
  }
}

/** The members of `metadata` among `members` whose URL is not on the issuer's origin (absent members are fine). */
export function offOriginEndpoints (metadata: Readonly<Record<string, unknown>> & { readonly issuer: string }, members: readonly string[]): string[] {
  return members.filter((member) => metadata[member] !== undefined && !onOriginOf(metadata[member], metadata.issuer))
}

/**
 * A provider from the provider source whose discovery names an endpoint off the issuer's origin:
 * the metadata is refused (the provider stays unavailable) and the log line names the member
 * (`endpoint`), never its URL's path or query.
 */
export class EndpointOriginError extends CoreError {
  readonly code = 'ENDPOINT_OFF_ISSUER_ORIGIN' satisfies LogCode
  /** The discovery member, such as `token_endpoint`. */
  readonly endpoint: string

  constructor (endpoint: string) {
    super(`the provider's discovery document names its ${endpoint} off the issuer's origin; a provider from the provider source must serve every endpoint on its issuer's origin`)
    this.name = 'EndpointOriginError'
    this.endpoint = endpoint
  }
}
