// @ts-check
/**
 * Checks on the target directory, made before anything is written: it must be a directory (or
 * creatable), empty unless --force, writable, and not inside the template itself.
 */
import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, relative, resolve, isAbsolute } from 'node:path'
import { UsageError } from './errors.mjs'

/** Entries that do not make a directory "non-empty" (a fresh `git init`). */
export const IGNORED_ENTRIES = ['.git']

/**
 * @param {string} path
 * @returns {boolean}
 */
function writable (path) {
  try {
    accessSync(path, constants.W_OK | constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * @param {string} parent
 * @param {string} child
 */
function isInside (parent, child) {
  const path = relative(parent, child)
  return path === '' || (!path.startsWith('..') && !isAbsolute(path))
}

/**
 * Throws a {@link UsageError} when `target` cannot receive a generated project.
 * @param {string} target absolute path
 * @param {{ force: boolean, templateDir: string }} options
 */
export function checkTarget (target, options) {
  if (isInside(resolve(options.templateDir), target)) {
    throw new UsageError(`The target directory ${target} is inside the template (${options.templateDir}); choose a directory outside it.`)
  }
  if (existsSync(target)) {
    if (!statSync(target).isDirectory()) {
      throw new UsageError(`The target ${target} exists and is not a directory.`)
    }
    const entries = readdirSync(target).filter((entry) => !IGNORED_ENTRIES.includes(entry))
    if (entries.length > 0 && !options.force) {
      throw new UsageError(`The target directory ${target} is not empty; choose a new or empty directory, or pass --force to write into it (files with the same names are overwritten).`)
    }
    if (!writable(target)) throw new UsageError(`The target directory ${target} is not writable.`)
    return
  }
  let ancestor = dirname(target)
  while (!existsSync(ancestor)) ancestor = dirname(ancestor)
  if (!statSync(ancestor).isDirectory()) {
    throw new UsageError(`The target directory ${target} cannot be created: ${ancestor} is not a directory.`)
  }
  if (!writable(ancestor)) {
    throw new UsageError(`The target directory ${target} cannot be created: ${ancestor} is not writable.`)
  }
}
