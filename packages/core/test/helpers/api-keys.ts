/**
 * API key tests' common pieces (issue 42): a signed-in caller with a fresh sign-in (what key
 * creation's step-up asks for), and a key store whose every call is counted, to show a refusal
 * made before any store access.
 */
import { randomUUID } from 'node:crypto'
import { MemoryApiKeyStore } from '../../src/api-keys/memory-api-key-store.js'
import { SqlApiKeyStore } from '../../src/api-keys/sql-api-key-store.js'
import { Principal } from '../../src/session/principal.js'
import type { Claim } from '../../src/session/claims.js'

/** A session user `subject` of `scheme`, signed in just now (`atMs`: the app's clock), holding `permissions` (the offered scopes a user key may grant) and, given one, `tenant`. */
export function freshUser (subject: string, options: { readonly scheme?: string, readonly permissions?: readonly string[], readonly tenant?: string, readonly roles?: readonly string[], readonly atMs?: number } = {}): Principal {
  const scheme = options.scheme ?? 'TestFlow'
  const now = Math.floor((options.atMs ?? Date.now()) / 1000)
  const claims: Claim[] = [
    { type: 'application:subject', value: subject, issuer: scheme },
    ...(options.permissions ?? ['application.read']).map((value) => ({ type: 'application:permission', value, issuer: scheme })),
    ...(options.roles ?? []).map((value) => ({ type: 'application:role', value, issuer: scheme })),
    ...(options.tenant === undefined ? [] : [{ type: 'application:tenant', value: options.tenant, issuer: scheme }])
  ]
  return new Principal({ sessionId: randomUUID(), scheme, claims, issuedAt: now, expiresAt: now + 3600, absoluteExpiresAt: now + 3600, authentication: { authTime: now } })
}

/** Counts every call of the core's API key stores (memory and SQL) until `restore()`. */
export function countStoreCalls (): { readonly calls: () => number, readonly restore: () => void } {
  let calls = 0
  const undo: Array<() => void> = []
  for (const prototype of [MemoryApiKeyStore.prototype, SqlApiKeyStore.prototype] as unknown as Array<Record<string, unknown>>) {
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const original = prototype[name]
      if (name === 'constructor' || typeof original !== 'function') continue
      prototype[name] = function (this: unknown, ...args: unknown[]) { calls++; return (original as (...a: unknown[]) => unknown).apply(this, args) }
      undo.push(() => { prototype[name] = original })
    }
  }
  return { calls: () => calls, restore: () => { for (const step of undo) step() } }
}
