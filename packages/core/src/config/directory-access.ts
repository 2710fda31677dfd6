/**
 * Whether the process may create or write a directory the configuration names (the key
 * directory, the embedded store's data directory), asked without creating or changing anything,
 * so that `npm run check-config` finds what startup would fail on. Plain paths in, an errno code
 * (or undefined) out; the callers turn it into a {@link ConfigurationProblem} naming their key.
 */
import { accessSync, constants, statSync, type Stats } from 'node:fs'
import { dirname } from 'node:path'

/** Deepest path walked up before giving up (a path is never that deep in practice). */
const MAX_DEPTH = 64

function statOrCode (path: string): Stats | undefined | string {
  try {
    return statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' ? undefined : code ?? 'error'
  }
}

/** The errno code why `directory` cannot be written (created files, renamed files), or undefined. */
export function writeProblem (directory: string): string | undefined {
  try {
    accessSync(directory, constants.W_OK | constants.X_OK)
    return undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error'
  }
}

/** Why a missing directory could not be created (its nearest existing ancestor), if it could not. */
export function creationProblem (directory: string): string | undefined {
  let ancestor = dirname(directory)
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const stats = statOrCode(ancestor)
    if (typeof stats === 'string') return stats
    if (stats !== undefined) return stats.isDirectory() ? writeProblem(ancestor) : 'ENOTDIR'
    const parent = dirname(ancestor)
    if (parent === ancestor) return undefined
    ancestor = parent
  }
  return undefined
}
