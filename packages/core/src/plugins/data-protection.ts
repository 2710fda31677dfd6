/**
 * `app.dataProtection`: the app's key ring (`<Root>:DataProtection`) offered to the app for the
 * secrets it keeps at rest, such as a runtime provider's client secret in its own database
 * (data-protection/secrets.ts; docs/security/keys-and-storage.md, "Protected secrets"). The ring itself stays
 * inside the core: the app gets the two operations, never the keys.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { KeyRing } from '../data-protection/key-ring.js'
import { protectSecret, unprotectSecret } from '../data-protection/secrets.js'

/** Sealing with the app's key ring, for secrets the app stores (see {@link protectSecret}). @public */
export interface DataProtectionApi {
  /** `plaintext` sealed with the first key of the ring: ASCII text safe to store. */
  readonly protectSecret: (plaintext: string) => string
  /**
   * The plaintext of a value `protectSecret` made with any key of the ring; throws
   * `APP_ERR_SECRET_INVALID` (never holding the value) when it cannot be opened.
   */
  readonly unprotectSecret: (protectedValue: string) => string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's key ring for secrets it keeps at rest (docs/security/keys-and-storage.md, "Protected secrets"). */
    dataProtection: DataProtectionApi
  }
}

export interface DataProtectionPluginOptions {
  readonly keyRing: KeyRing
}

async function dataProtection (app: FastifyInstance, options: DataProtectionPluginOptions): Promise<void> {
  const { keyRing } = options
  app.decorate('dataProtection', Object.freeze({
    protectSecret: (plaintext: string) => protectSecret(keyRing, plaintext),
    unprotectSecret: (protectedValue: string) => unprotectSecret(keyRing, protectedValue)
  }) satisfies DataProtectionApi)
}

export default fp(dataProtection, { name: 'data-protection' })
