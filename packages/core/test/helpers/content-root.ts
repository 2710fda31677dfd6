/**
 * Temporary content roots for configuration tests: a directory holding appsettings files and a
 * package.json with a userSecretsId, plus helpers for user-secrets and key-per-file directories.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { userSecretsPath } from '../../src/config/sources.js'

export const TEST_USER_SECRETS_ID = 'config-test-2b9d'

export interface TempContentRoot {
  readonly root: string
  /** Use as XDG_CONFIG_HOME so the user-secrets file lives in the temp directory. */
  readonly configHome: string
  /** Writes `appsettings.json` or `appsettings.<Env>.json` (or any file) at the root. */
  writeJson: (name: string, document: unknown) => void
  /** Writes the Development user-secrets file at the path server code computes. */
  writeUserSecrets: (document: unknown) => string
  /** Creates a key-per-file directory with one file per entry; returns its path. */
  writeKeyPerFile: (files: Record<string, string>) => string
  remove: () => void
}

export function createContentRoot (): TempContentRoot {
  const root = mkdtempSync(join(tmpdir(), 'pt-config-'))
  const configHome = join(root, 'xdg-config')
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'config-test', userSecretsId: TEST_USER_SECRETS_ID }))
  const writeJson = (name: string, document: unknown): void => {
    writeFileSync(join(root, name), typeof document === 'string' ? document : JSON.stringify(document))
  }
  return {
    root,
    configHome,
    writeJson,
    writeUserSecrets (document) {
      const path = userSecretsPath({ XDG_CONFIG_HOME: configHome }, TEST_USER_SECRETS_ID)
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, typeof document === 'string' ? document : JSON.stringify(document))
      return path
    },
    writeKeyPerFile (files) {
      const directory = join(root, 'key-per-file')
      mkdirSync(directory, { recursive: true })
      for (const [name, value] of Object.entries(files)) writeFileSync(join(directory, name), value)
      return directory
    },
    remove () {
      rmSync(root, { recursive: true, force: true })
    }
  }
}

/** `{ ProjectTemplate: <section> }` as appsettings content. */
export const settingsFile = (section: Record<string, unknown>): Record<string, unknown> => ({ ProjectTemplate: section })
