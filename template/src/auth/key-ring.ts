/**
 * The session key ring: the first key seals, every key opens, so keys rotate without signing
 * everyone out. Keys come from `ProjectTemplate:DataProtection:Keys` (a secret shared by every
 * instance); with none configured, one key is generated once and kept, 0600, in the key directory.
 * Encryption keys and key ids are derived with HKDF once at startup, never per request.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hkdfSync, randomBytes } from 'node:crypto'
import { isAbsolute, join, resolve } from 'node:path'
import type { Secret } from '../config/secret.js'

export interface SessionKey {
  /** 8 base64url characters derived from the key; not secret, identifies the key in a ticket. */
  readonly id: string
  /** 32-byte AES-256-GCM key. */
  readonly key: Buffer
}

export interface KeyRing {
  readonly sealing: SessionKey
  readonly opening: ReadonlyMap<string, SessionKey>
}

/** Purpose string: keys derived for session tickets are useless for anything else. */
const PURPOSE = 'ProjectTemplate.Web.Authentication.SessionTicket.v1'

export function deriveSessionKey (material: Buffer): SessionKey {
  const key = Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), `${PURPOSE}:encryption`, 32))
  const id = Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), `${PURPOSE}:key-id`, 6)).toString('base64url')
  return { id, key }
}

export function createKeyRing (materials: readonly Buffer[]): KeyRing {
  const keys = materials.map(deriveSessionKey)
  const sealing = keys[0]
  if (sealing === undefined) throw new RangeError('A key ring needs at least one key.')
  return { sealing, opening: new Map(keys.map((key) => [key.id, key])) }
}

export const GENERATED_KEY_FILE = 'session-keys.json'

export interface KeyRingSource {
  readonly ring: KeyRing
  /** `configuration`, or `generated` / `key directory` for the single-instance fallback. */
  readonly origin: 'configuration' | 'generated' | 'key directory'
  readonly directory?: string
}

/**
 * Keys from configuration, else the key kept in `keyDirectory` (created on first use). The
 * configured values were validated at startup (base64, at least 32 bytes).
 */
export function loadKeyRing (configured: readonly Secret[], keyDirectory: string, contentRoot: string): KeyRingSource {
  if (configured.length > 0) {
    return { ring: createKeyRing(configured.map((key) => Buffer.from(key.reveal().trim(), 'base64'))), origin: 'configuration' }
  }
  const directory = isAbsolute(keyDirectory) ? keyDirectory : resolve(contentRoot, keyDirectory)
  const file = join(directory, GENERATED_KEY_FILE)
  if (existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { keys?: unknown }
    const keys = Array.isArray(stored.keys) ? stored.keys.filter((key): key is string => typeof key === 'string') : []
    if (keys.length > 0) {
      return { ring: createKeyRing(keys.map((key) => Buffer.from(key, 'base64'))), origin: 'key directory', directory }
    }
  }
  mkdirSync(directory, { recursive: true, mode: 0o700 })
  const material = randomBytes(32)
  writeFileSync(file, `${JSON.stringify({ keys: [material.toString('base64')] })}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return { ring: createKeyRing([material]), origin: 'generated', directory }
}
