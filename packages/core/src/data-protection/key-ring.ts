/**
 * The session key ring: the first key seals, every key opens, so keys rotate without signing
 * everyone out. Keys come from `ProjectTemplate:DataProtection:Keys` (a secret shared by every
 * instance); with none configured, one key is generated once and kept, 0600, in the key directory
 * (0700). Encryption keys and key ids are derived with HKDF once at startup, never per request,
 * and the derivation binds the application discriminator (docs/security/keys-and-storage.md, "Key ring"), so a
 * value sealed by one application or environment never opens in another even with the same keys.
 *
 * The key directory is checked the same way by `npm run check-config` ({@link inspectKeyStore},
 * read-only) and at startup ({@link loadKeyRing}): a problem is a {@link ConfigurationProblem}
 * naming `ProjectTemplate:DataProtection:KeyDirectory`, never a key or the file's content.
 */
import { randomBytes, hkdfSync } from 'node:crypto'
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync, type Stats } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { applicationNaming, PURPOSES, rootKeyOf, type Purposes } from '../application-name.js'
import type { ConfigurationProblem } from '../config/bind.js'
import { creationProblem, writeProblem } from '../config/directory-access.js'
import type { Secret } from '../config/secret.js'
import { ConfigurationError } from '../errors.js'

/** @public */
export interface SessionKey {
  /** 8 base64url characters derived from the key; not secret, identifies the key in a ticket. */
  readonly id: string
  /** 32-byte AES-256-GCM key. */
  readonly key: Buffer
}

/** @public */
export interface KeyRing {
  readonly sealing: SessionKey
  readonly opening: ReadonlyMap<string, SessionKey>
  /**
   * The purpose strings of the application the ring belongs to (its name is in every one), used by
   * whatever seals or derives with the ring; absent: the default application's (`ProjectTemplate`).
   */
  readonly purposes?: Purposes
}

/** Key material must be at least this long (the rule for configured keys and key-file entries). */
export const MINIMUM_KEY_BYTES = 32

/**
 * HKDF info: the purpose (keys derived for session tickets are useless for anything else) and
 * label, a zero byte, then the discriminator (unambiguous for any discriminator).
 */
function info (purpose: string, label: string, applicationDiscriminator: string): Buffer {
  return Buffer.concat([Buffer.from(`${purpose}:${label}`, 'utf8'), Buffer.alloc(1), Buffer.from(applicationDiscriminator, 'utf8')])
}

export function deriveSessionKey (material: Buffer, applicationDiscriminator: string, purpose: string = PURPOSES.keyRing): SessionKey {
  const key = Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), info(purpose, 'encryption', applicationDiscriminator), 32))
  const id = Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), info(purpose, 'key-id', applicationDiscriminator), 6)).toString('base64url')
  return { id, key }
}

/**
 * A ring from raw key material. `applicationDiscriminator` isolates applications and environments
 * that share keys; the application always passes one ({@link loadKeyRing}); tests and benchmarks
 * that build a throwaway ring may leave it empty. `applicationName` (none: the default
 * application's, {@link rootKeyOf}) names the purposes the keys are derived and used under, so
 * that two applications never open each other's cookies even with the same keys.
 *
 * @public
 */
export function createKeyRing (materials: readonly Buffer[], applicationDiscriminator = '', applicationName?: string): KeyRing {
  const { purposes } = applicationNaming(rootKeyOf(applicationName))
  const keys = materials.map((material) => deriveSessionKey(material, applicationDiscriminator, purposes.keyRing))
  const sealing = keys[0]
  if (sealing === undefined) throw new RangeError('A key ring needs at least one key.')
  return { sealing, opening: new Map(keys.map((key) => [key.id, key])), purposes }
}

/** The purpose strings a ring's keys are used under (see {@link KeyRing.purposes}). */
export function purposesOf (ring: KeyRing): Purposes {
  return ring.purposes ?? PURPOSES
}

/**
 * A new data-protection key for `DataProtection:Keys`: base64 of {@link MINIMUM_KEY_BYTES} random
 * bytes (what `npm run generate-key` prints).
 *
 * @public
 */
export function generateKeyMaterial (): string {
  return randomBytes(MINIMUM_KEY_BYTES).toString('base64')
}

/**
 * The key material of a configured or stored key: standard or url-safe base64 of at least
 * {@link MINIMUM_KEY_BYTES} bytes, surrounding whitespace ignored; undefined otherwise.
 */
export function keyMaterialOf (text: string): Buffer | undefined {
  const trimmed = text.trim()
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined
  const material = Buffer.from(trimmed, 'base64')
  return material.length >= MINIMUM_KEY_BYTES ? material : undefined
}

/** Development, Production...: the discriminator used when none is configured. */
export function applicationDiscriminatorOf (configured: string, environmentName: string): string {
  const value = configured.trim()
  return value === '' ? environmentName : value
}

export const GENERATED_KEY_FILE = 'session-keys.json'

export interface KeyRingSource {
  readonly ring: KeyRing
  /** `configuration`, or `generated` / `key directory` for the single-instance fallback. */
  readonly origin: 'configuration' | 'generated' | 'key directory'
  readonly directory?: string
}

/** The problems of the key directory, named under the application's root key. */
function keyDirectoryProblems (rootKey: string): { problem: (message: string) => ConfigurationProblem, accessProblem: (what: string, code: string) => ConfigurationProblem } {
  const key = `${rootKey}:DataProtection:KeyDirectory`
  const problem = (message: string): ConfigurationProblem => ({ key, message: `${key} ${message}` })
  return {
    problem,
    /** The next step after a key directory the process cannot create, read or write (errno `code`). */
    accessProblem: (what, code) => problem(`${what} (${code}). ` +
      `Make it a directory (mode 0700) the user running the application may write, point ${key} at one, ` +
      `or configure shared keys in ${rootKey}:DataProtection:Keys (npm run generate-key makes one).`)
  }
}

function statOrUndefined (path: string): Stats | undefined | NodeJS.ErrnoException {
  try {
    return statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : error as NodeJS.ErrnoException
  }
}

const modeOf = (stats: Stats): string => `0${(stats.mode & 0o777).toString(8).padStart(3, '0')}`

interface StoreInspection {
  readonly problems: ConfigurationProblem[]
  /** The stored key materials, when the key file exists and is valid. */
  readonly materials?: Buffer[]
}

/** Reads and checks the key directory and key file without creating or changing anything. */
function readKeyStore (directory: string, rootKey: string): StoreInspection {
  const { problem, accessProblem } = keyDirectoryProblems(rootKey)
  const directoryStats = statOrUndefined(directory)
  if (directoryStats === undefined) {
    const reason = creationProblem(directory)
    return { problems: reason === undefined ? [] : [accessProblem('does not exist and cannot be created', reason)] }
  }
  if (directoryStats instanceof Error) return { problems: [accessProblem('cannot be read', directoryStats.code ?? 'error')] }
  if (!directoryStats.isDirectory()) return { problems: [problem('must name a directory; a file is in its place.')] }
  const problems: ConfigurationProblem[] = []
  if ((directoryStats.mode & 0o077) !== 0) {
    problems.push(problem(`must be accessible to its owner only (mode 0700); it has mode ${modeOf(directoryStats)}. Run chmod 700 on it, and rotate the key if others could read it.`))
  }
  const file = join(directory, GENERATED_KEY_FILE)
  const fileStats = statOrUndefined(file)
  if (fileStats === undefined) {
    // Startup writes the key file here: a directory it cannot write fails startup, so say so now.
    const reason = writeProblem(directory)
    return { problems: reason === undefined ? problems : [...problems, accessProblem('cannot be written', reason)] }
  }
  if (fileStats instanceof Error) return { problems: [...problems, problem(`holds a ${GENERATED_KEY_FILE} that cannot be read (${fileStats.code ?? 'error'}).`)] }
  if (!fileStats.isFile()) return { problems: [...problems, problem(`holds a ${GENERATED_KEY_FILE} that is not a regular file.`)] }
  if ((fileStats.mode & 0o077) !== 0) {
    problems.push(problem(`holds a ${GENERATED_KEY_FILE} readable or writable by others (mode ${modeOf(fileStats)}; required 0600). Run chmod 600 on it, and rotate the key if others could read it.`))
  }
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    return { problems: [...problems, problem(`holds a ${GENERATED_KEY_FILE} that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`)] }
  }
  let stored: unknown
  try {
    stored = JSON.parse(text)
  } catch {
    // JSON.parse's message quotes the text it choked on: key material. Never pass it on.
    return { problems: [...problems, problem(`holds a ${GENERATED_KEY_FILE} that is not valid JSON.`)] }
  }
  const keys = stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as { keys?: unknown }).keys : undefined
  if (!Array.isArray(keys) || keys.length === 0) {
    return { problems: [...problems, problem(`holds a ${GENERATED_KEY_FILE} without keys; expected {"keys": ["<base64 of at least ${MINIMUM_KEY_BYTES} random bytes>", ...]}.`)] }
  }
  const materials: Buffer[] = []
  keys.forEach((value: unknown, index) => {
    const material = typeof value === 'string' ? keyMaterialOf(value) : undefined
    if (material === undefined) problems.push(problem(`holds a ${GENERATED_KEY_FILE} whose keys:${index} is not base64 of at least ${MINIMUM_KEY_BYTES} random bytes.`))
    else materials.push(material)
  })
  return problems.length === 0 ? { problems, materials } : { problems }
}

function keyDirectoryOf (keyDirectory: string, contentRoot: string): string {
  return isAbsolute(keyDirectory) ? keyDirectory : resolve(contentRoot, keyDirectory)
}

/**
 * What startup would refuse about the key store, without creating or changing anything (for
 * `npm run check-config` and the startup rules). No problems when keys are configured.
 */
export function inspectKeyStore (configured: readonly Secret[], keyDirectory: string, contentRoot: string, rootKey: string): ConfigurationProblem[] {
  if (configured.length > 0) return []
  return readKeyStore(keyDirectoryOf(keyDirectory, contentRoot), rootKey).problems
}

/** Writes a fresh key file without ever exposing a partly written one (link is atomic, never overwrites). */
function generateKeyFile (directory: string, rootKey: string): Buffer | undefined {
  const file = join(directory, GENERATED_KEY_FILE)
  const temporary = join(directory, `.${GENERATED_KEY_FILE}.${randomBytes(6).toString('hex')}.tmp`)
  const material = randomBytes(32)
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 })
    writeFileSync(temporary, `${JSON.stringify({ keys: [material.toString('base64')] })}\n`, { mode: 0o600, flag: 'wx' })
    chmodSync(temporary, 0o600)
    try {
      linkSync(temporary, file)
    } catch (error) {
      // Another instance sharing the directory won the race: use its key.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined
      throw error
    }
    return material
  } catch (error) {
    throw new ConfigurationError([keyDirectoryProblems(rootKey).accessProblem('cannot be created or written', (error as NodeJS.ErrnoException).code ?? 'error')], { cause: error })
  } finally {
    try { unlinkSync(temporary) } catch {}
  }
}

/**
 * Keys from configuration, else the key kept in `keyDirectory` (created on first use). The
 * configured values were validated at startup (base64, at least 32 bytes). Throws
 * {@link ConfigurationError} when the key store is unusable or unsafe.
 */
export function loadKeyRing (configured: readonly Secret[], keyDirectory: string, contentRoot: string, applicationDiscriminator: string, rootKey: string): KeyRingSource {
  if (configured.length > 0) {
    const materials = configured.map((key, index) => {
      const material = keyMaterialOf(key.reveal())
      if (material === undefined) {
        const path = `${rootKey}:DataProtection:Keys:${index}`
        throw new ConfigurationError([{ key: path, message: `${path} must be base64 of at least ${MINIMUM_KEY_BYTES} random bytes.` }])
      }
      return material
    })
    return { ring: createKeyRing(materials, applicationDiscriminator, rootKey), origin: 'configuration' }
  }
  const directory = keyDirectoryOf(keyDirectory, contentRoot)
  for (let attempt = 0; attempt < 2; attempt++) {
    const store = readKeyStore(directory, rootKey)
    if (store.problems.length > 0) throw new ConfigurationError(store.problems)
    if (store.materials !== undefined) return { ring: createKeyRing(store.materials, applicationDiscriminator, rootKey), origin: 'key directory', directory }
    const material = generateKeyFile(directory, rootKey)
    if (material !== undefined) return { ring: createKeyRing([material], applicationDiscriminator, rootKey), origin: 'generated', directory }
  }
  throw new ConfigurationError([keyDirectoryProblems(rootKey).problem(`holds a ${GENERATED_KEY_FILE} that could not be read after it was created.`)])
}
