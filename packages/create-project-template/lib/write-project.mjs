// @ts-check
/**
 * Writes planned files into the target directory and keeps a journal of what it changed, so that
 * a failure part-way removes every file and directory it created and restores every file it
 * overwrote (--force).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { UsageError } from './errors.mjs'

/** Errors from creating the target itself that mean "you cannot write there" (invalid input). */
const UNWRITABLE_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOENT'])

/**
 * @typedef {object} Journal
 * @property {string[]} createdDirectories in creation order
 * @property {string[]} createdFiles
 * @property {Array<{ path: string, data: Buffer, mode: number }>} overwrittenFiles
 */

/**
 * Creates `directory` and its missing ancestors, recording each one created.
 * @param {string} directory
 * @param {Journal} journal
 */
function makeDirectory (directory, journal) {
  /** @type {string[]} */
  const missing = []
  for (let path = directory; !existsSync(path); path = dirname(path)) missing.unshift(path)
  for (const path of missing) {
    mkdirSync(path)
    journal.createdDirectories.push(path)
  }
}

/**
 * Undoes a journal: restores overwritten files, removes created files, then created directories
 * (deepest first). Best effort: a failure to undo one entry does not stop the others.
 * @param {Journal} journal
 * @returns {string[]} paths that could not be undone
 */
export function rollBack (journal) {
  /** @type {string[]} */
  const left = []
  /** @param {string} path @param {() => void} undo */
  const attempt = (path, undo) => {
    try {
      undo()
    } catch (error) {
      // Nothing there to undo: the write that would have created it failed.
      const code = /** @type {NodeJS.ErrnoException} */ (error).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') left.push(path)
    }
  }
  for (const file of journal.overwrittenFiles) {
    attempt(file.path, () => { writeFileSync(file.path, file.data); chmodSync(file.path, file.mode) })
  }
  for (const path of journal.createdFiles) attempt(path, () => rmSync(path, { force: true }))
  for (const path of [...journal.createdDirectories].reverse()) {
    attempt(path, () => rmSync(path, { recursive: true, force: true }))
  }
  return left
}

/**
 * Writes `files` below `target`. On failure everything written is rolled back and the error is
 * rethrown; a failure to create the target directory itself becomes a {@link UsageError}.
 * @param {string} target absolute path
 * @param {readonly import('./plan.mjs').PlannedFile[]} files
 * @returns {Journal}
 */
export function writeProject (target, files) {
  /** @type {Journal} */
  const journal = { createdDirectories: [], createdFiles: [], overwrittenFiles: [] }
  try {
    makeDirectory(target, journal)
  } catch (error) {
    rollBack(journal)
    const code = /** @type {NodeJS.ErrnoException} */ (error).code ?? ''
    if (UNWRITABLE_CODES.has(code)) {
      const reason = error instanceof Error ? error.message : code
      throw new UsageError(`The target directory ${target} cannot be created: ${reason}.`, { cause: error })
    }
    throw error
  }
  let current = target
  try {
    for (const file of files) {
      const path = join(target, ...file.path.split('/'))
      current = path
      makeDirectory(dirname(path), journal)
      if (existsSync(path)) {
        const stats = statSync(path)
        if (!stats.isFile()) throw new Error(`${path} exists and is not a file.`)
        journal.overwrittenFiles.push({ path, data: readFileSync(path), mode: stats.mode & 0o777 })
      } else {
        journal.createdFiles.push(path)
      }
      writeFileSync(path, file.data, { mode: file.mode })
      chmodSync(path, file.mode)
    }
  } catch (error) {
    const left = rollBack(journal)
    const reason = error instanceof Error ? error.message : String(error)
    const undone = left.length === 0 ? 'everything written was removed' : `these could not be removed: ${left.join(', ')}`
    throw new Error(`Writing ${current} failed (${reason}); ${undone}.`, { cause: error })
  }
  return journal
}
