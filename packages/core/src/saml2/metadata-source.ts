/**
 * Keeps the IdP description current when Providers:Saml2:LoadMetadata is true: fetches
 * MetadataUrl (timeout, size limit, no redirects) without blocking startup, refreshes every
 * MetadataRefreshMinutes and, at most once per {@link FAILURE_REFRESH_INTERVAL_MS}, after a
 * signature failure (the IdP may have rolled its key). A failed refresh keeps the last good
 * description; until the first success the provider is unavailable with a reason class.
 */
import { CoreError } from '../errors.js'
import { fetchBounded, OUTBOUND_RESPONSE_LIMITS, OutboundResponseTooLargeError } from '../http/bounded-fetch.js'
import type { Dispatcher } from '../http/outbound-address.js'
import { parseIdentityProviderMetadata, Saml2MetadataError, verifyMetadataSignature, type IdentityProviderDescription } from './metadata.js'

export const METADATA_TIMEOUT_MS = 10_000
/** Largest metadata document read (after decompression): the `saml_metadata` cap of http/bounded-fetch.ts. */
export const METADATA_MAX_BYTES = OUTBOUND_RESPONSE_LIMITS.saml_metadata
/** Retry interval while no metadata has ever loaded. */
export const METADATA_RETRY_MS = 30_000
export const FAILURE_REFRESH_INTERVAL_MS = 30_000

/** Reason classes reported while unavailable (health, login page, logs). */
export type MetadataReason = 'metadata_not_loaded' | 'metadata_unreachable' | 'metadata_invalid' | 'metadata_signature'

export type MetadataEvent =
  | { readonly kind: 'loaded', readonly certificates: number }
  | { readonly kind: 'failed', readonly reason: MetadataReason, readonly detail: string, readonly error?: unknown }

export interface MetadataSourceOptions {
  readonly url: string
  readonly refreshMs: number
  readonly timeoutMs?: number
  readonly retryMs?: number
  /** Providers:Saml2:IdpEntityId: selects the IdP of an EntitiesDescriptor aggregate. */
  readonly entityId?: string
  /** Providers:Saml2:MetadataSigningCertificates: when any, the metadata must carry a valid signature by one of them. */
  readonly metadataSigningCertificates?: readonly string[]
  /** Extra acceptance rule for a parsed description (for example the SSO URL's scheme); returns a problem phrase or undefined. */
  readonly check?: (description: IdentityProviderDescription) => string | undefined
  readonly onEvent: (event: MetadataEvent) => void
  /** A provider from the provider source: its connections (public addresses only outside Development). */
  readonly dispatcher?: Dispatcher
}

class MetadataFetchError extends CoreError {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'MetadataFetchError'
  }
}

export class IdentityProviderMetadataSource {
  readonly #options: MetadataSourceOptions
  #current: IdentityProviderDescription | undefined
  #reason: MetadataReason = 'metadata_not_loaded'
  #timer: NodeJS.Timeout | undefined
  #inFlight: Promise<void> | undefined
  #abort = new AbortController()
  #stopped = false
  #lastFailureRefresh = 0

  constructor (options: MetadataSourceOptions) {
    this.#options = options
  }

  /** The last good description, or undefined until one has loaded. */
  get current (): IdentityProviderDescription | undefined {
    return this.#current
  }

  get reason (): MetadataReason | undefined {
    return this.#current === undefined ? this.#reason : undefined
  }

  /** Starts loading in the background; never throws, never blocks. */
  start (): void {
    this.#background()
  }

  /** Refreshes now unless a refresh is running; returns when it has finished. */
  async refresh (): Promise<void> {
    if (this.#stopped) return
    if (this.#inFlight !== undefined) return await this.#inFlight
    this.#inFlight = this.#load().finally(() => {
      this.#inFlight = undefined
      this.#schedule()
    })
    return await this.#inFlight
  }

  /** After a signature failure: refresh, at most once per FAILURE_REFRESH_INTERVAL_MS. */
  refreshAfterFailure (nowMs = Date.now()): void {
    if (nowMs - this.#lastFailureRefresh < FAILURE_REFRESH_INTERVAL_MS) return
    this.#lastFailureRefresh = nowMs
    this.#background()
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    this.#abort.abort()
  }

  /** Starts a refresh nobody awaits; #load reports its own failures, so nothing can reject. */
  #background (): void {
    this.refresh().catch(() => {})
  }

  #schedule (): void {
    if (this.#stopped) return
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    const delay = this.#current === undefined ? Math.min(this.#options.retryMs ?? METADATA_RETRY_MS, this.#options.refreshMs) : this.#options.refreshMs
    this.#timer = setTimeout(() => { this.#background() }, delay)
    this.#timer.unref()
  }

  async #load (): Promise<void> {
    let text: string
    try {
      // One deadline for the request and the body; the body read through the one bounded reader.
      const response = await fetchBounded(this.#options.url, {
        redirect: 'error',
        headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' },
        signal: this.#abort.signal
      }, { kind: 'saml_metadata', timeoutMs: this.#options.timeoutMs ?? METADATA_TIMEOUT_MS, ...(this.#options.dispatcher === undefined ? {} : { dispatcher: this.#options.dispatcher }) })
      if (!response.ok) throw new MetadataFetchError('metadata endpoint answered with an error status')
      text = await response.text()
    } catch (error) {
      if (this.#stopped) return
      const detail = error instanceof MetadataFetchError ? error.message : error instanceof OutboundResponseTooLargeError ? 'metadata too large' : 'metadata request failed'
      this.#fail('metadata_unreachable', detail, error)
      return
    }
    const signers = this.#options.metadataSigningCertificates ?? []
    if (signers.length > 0) {
      // Unsigned, wrongly signed or expired metadata is not trusted at all; the last good
      // (verified) description stays in use.
      try {
        text = await verifyMetadataSignature(text, signers)
      } catch (error) {
        this.#fail('metadata_signature', error instanceof Saml2MetadataError ? error.reason : 'metadata signature not valid', error)
        return
      }
    }
    let description: IdentityProviderDescription
    try {
      description = parseIdentityProviderMetadata(text, { entityId: this.#options.entityId })
    } catch (error) {
      this.#fail('metadata_invalid', error instanceof Saml2MetadataError ? error.reason : 'metadata cannot be read', error)
      return
    }
    const problem = this.#options.check?.(description)
    if (problem !== undefined) {
      this.#fail('metadata_invalid', problem)
      return
    }
    this.#current = description
    this.#options.onEvent({ kind: 'loaded', certificates: description.signingCertificates.length })
  }

  #fail (reason: MetadataReason, detail: string, error?: unknown): void {
    if (this.#current === undefined) this.#reason = reason
    this.#options.onEvent({ kind: 'failed', reason, detail, ...(error === undefined ? {} : { error }) })
  }
}
