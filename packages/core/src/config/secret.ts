import { inspect } from 'node:util'

const REDACTED = '[redacted]'

/**
 * A configured secret (client secret, data-protection key). Wrapped right after validation so
 * that logging, serializing or inspecting the configuration can never print the value; code that
 * needs the value calls {@link Secret.reveal} at the point of use.
 *
 * @public
 */
export class Secret {
  readonly #value: string

  constructor (value: string) {
    this.#value = value
  }

  /** The secret value. Call only where the protocol needs it; never log the result. */
  reveal (): string {
    return this.#value
  }

  /** True when no value is configured (empty or whitespace only). */
  get isEmpty (): boolean {
    return this.#value.trim() === ''
  }

  toString (): string {
    return REDACTED
  }

  toJSON (): string {
    return REDACTED
  }

  [inspect.custom] (): string {
    return REDACTED
  }
}
