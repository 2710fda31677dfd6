// @ts-check
/**
 * Test helpers: run the generator's bin as a child process with bounded waits, snapshot a
 * directory tree (to prove that nothing was written), find leftovers of the template's name.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, relative, resolve as resolvePath } from 'node:path'
import { fileURLToPath } from 'node:url'
import { contentDigest, readReleases } from '../../core/scripts/release-record.mjs'
import { packCore } from '../lib/core-package.mjs'
import { findTemplateName } from '../lib/naming.mjs'
import { isText } from '../lib/template-files.mjs'

export const PACKAGE_DIR = resolvePath(dirname(fileURLToPath(import.meta.url)), '..')
export const BIN = join(PACKAGE_DIR, 'bin', 'create-project-template.mjs')
export const TEMPLATE_DIR = resolvePath(PACKAGE_DIR, '..', '..', 'template')
export const CORE_DIR = resolvePath(PACKAGE_DIR, '..', 'core')

/** @type {import('../lib/core-package.mjs').CoreTarball | undefined} */
let packedCore
/**
 * The core as this checkout packs it (packed once per test process): its package.json version
 * when the content is that version's release in releases.json, else the `-dev.` prerelease
 * (lib/core-package.mjs; test/core-release.test.mjs checks the rule itself).
 */
export function checkoutCore () {
  packedCore ??= packCore(CORE_DIR, process.env)
  return packedCore
}

/**
 * The tarball of a release recorded in packages/core/releases.json, rebuilt from the commit that
 * added its record: `git archive` of packages/core into `workDir`, built with this checkout's
 * installed packages (the release's own lock file is the same or close), packed into
 * `destination`. Fails unless its content digest is the recorded one.
 * @param {string} version
 * @param {string} destination
 * @param {string} workDir
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<string>} the tarball's file name
 */
export async function rebuildRelease (version, destination, workDir, env) {
  const root = resolvePath(PACKAGE_DIR, '..', '..')
  const log = await run('git', ['log', '--format=%H', '--reverse', '-S', `"${version}": {`, '--', 'packages/core/releases.json'], { cwd: root })
  const commit = log.stdout.split('\n')[0] ?? ''
  assert.match(commit, /^[0-9a-f]{40}$/, `no commit records ${version} in packages/core/releases.json: ${log.stderr}`)
  const tree = join(workDir, `core-${version}`)
  mkdirSync(tree)
  const archive = await run('sh', ['-c', `git archive ${commit} packages/core | tar -x -C "${tree}"`], { cwd: root })
  assert.equal(archive.status, 0, archive.stderr)
  for (const [installed, link] of [[join(root, 'node_modules'), join(tree, 'node_modules')], [join(CORE_DIR, 'node_modules'), join(tree, 'packages', 'core', 'node_modules')]]) {
    if (existsSync(installed) && !existsSync(link)) symlinkSync(installed, link)
  }
  const packed = await run('npm', ['pack', '--json', '--pack-destination', destination], { cwd: join(tree, 'packages', 'core'), env, timeoutMs: 4 * 60_000 })
  assert.equal(packed.status, 0, tail(packed.stdout + packed.stderr))
  const { filename } = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))[0]
  assert.equal(filename, `project-template-core-${version}.tgz`)
  assert.equal(contentDigest(readFileSync(join(destination, filename))), readReleases(CORE_DIR)[version]?.digest, `${version} rebuilt from ${commit} has the recorded content`)
  return filename
}

/** A fresh directory under the OS temporary directory. */
export function tempDir (label = 'cpt-') {
  return mkdtempSync(join(tmpdir(), label))
}

/**
 * The caller's environment without anything an outer `npm test`, the outer test runner or a
 * configuration layer would leak into a child: npm_* settings, INIT_CWD, NODE_ENV,
 * NODE_TEST_CONTEXT (with it, a generated project's `node --test` skips every file as a
 * "recursive run"), `<Name>__` configuration variables.
 * @param {Record<string, string>} [extra]
 * @returns {NodeJS.ProcessEnv}
 */
export function childEnv (extra = {}) {
  /** @type {NodeJS.ProcessEnv} */
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || ['INIT_CWD', 'NODE_ENV', 'NODE_TEST_CONTEXT'].includes(key) || key.includes('__')) continue
    env[key] = value
  }
  // An outer npm run puts the monorepo's node_modules/.bin on PATH; a generated project must
  // find its tools in its own node_modules.
  env.PATH = (env.PATH ?? '').split(delimiter).filter((entry) => !/node_modules[\\/]\.bin|node-gyp-bin/.test(entry)).join(delimiter)
  return { ...env, ...extra }
}

/**
 * @typedef {object} RunResult
 * @property {number | null} status
 * @property {string | null} signal
 * @property {string} stdout
 * @property {string} stderr
 */

/**
 * Runs a command to completion; kills its whole process group after `timeoutMs` and rejects.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, timeoutMs?: number, input?: string }} [options]
 * @returns {Promise<RunResult>}
 */
export function run (command, args, options = {}) {
  const timeoutMs = options.timeoutMs ?? 30_000
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? PACKAGE_DIR,
      env: options.env ?? childEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
    child.stdin.end(options.input ?? '')
    const timer = setTimeout(() => {
      killGroup(child.pid)
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms.\n${tail(stdout + stderr)}`))
    }, timeoutMs)
    child.on('error', (error) => { clearTimeout(timer); reject(error) })
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      resolve({ status, signal, stdout, stderr })
    })
  })
}

/**
 * Runs the generator's bin.
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, timeoutMs?: number }} [options]
 */
export function generate (args, options = {}) {
  return run(process.execPath, [BIN, ...args], options)
}

/** @param {number | undefined} pid */
export function killGroup (pid, signal = /** @type {NodeJS.Signals} */ ('SIGKILL')) {
  if (pid === undefined) return
  try { process.kill(-pid, signal) } catch {}
}

/**
 * The last part of a long output, for assertion messages.
 * @param {string} text
 */
export function tail (text, length = 6000) {
  return text.length <= length ? text : `...${text.slice(-length)}`
}

/**
 * Every file and directory below `root` with a content hash: equal snapshots mean nothing was
 * written, created or removed. A missing root snapshots as null.
 * @param {string} root
 * @returns {Record<string, string> | null}
 */
export function snapshot (root) {
  if (!existsSync(root)) return null
  /** @type {Record<string, string>} */
  const entries = {}
  /** @param {string} path */
  const visit = (path) => {
    const stats = statSync(path)
    const key = relative(root, path) || '.'
    if (stats.isDirectory()) {
      entries[key] = `dir ${stats.mode & 0o777}`
      for (const entry of readdirSync(path)) visit(join(path, entry))
    } else {
      entries[key] = createHash('sha256').update(readFileSync(path)).digest('hex')
    }
  }
  visit(root)
  return entries
}

/**
 * Files (relative paths) below `root` whose path or text still holds a form of the template's
 * name, with the forms found; node_modules and the top-level entries in `skipped` are skipped
 * (an installed and built app's dist/ bundles the core, whose default name is ProjectTemplate).
 * @param {string} root
 * @param {readonly string[]} [skipped]
 * @returns {Array<{ path: string, forms: string[] }>}
 */
export function templateNameLeftovers (root, skipped = []) {
  /** @type {Array<{ path: string, forms: string[] }>} */
  const found = []
  /** @param {string} path */
  const visit = (path) => {
    for (const entry of readdirSync(path)) {
      if (entry === 'node_modules') continue
      const absolute = join(path, entry)
      const rel = relative(root, absolute)
      if (skipped.includes(rel)) continue
      if (statSync(absolute).isDirectory()) {
        visit(absolute)
        continue
      }
      const data = readFileSync(absolute)
      const forms = [...findTemplateName(rel), ...findTemplateName(data.toString(isText(data) ? 'utf8' : 'latin1'))]
      if (forms.length > 0) found.push({ path: rel, forms: [...new Set(forms)] })
    }
  }
  visit(root)
  return found
}
