/** The discovered provider metadata: loaded in the background, refreshed, retried with backoff, and its readiness. */
import * as client from 'openid-client'
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
