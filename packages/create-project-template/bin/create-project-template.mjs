#!/usr/bin/env node
// @ts-check
/**
 * create-project-template (package @project-template/create) <directory> [--name <Name>] [--authProvider cookie|none]
 *   [--skip-install] [--force] — see docs/generator.md.
 */
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { main } from '../lib/cli.mjs'

// `npm run new -- <dir>` runs in the checkout's root; resolve <dir> where the user typed it, and
// never inside the checkout (cli.mjs puts such a project beside the checkout and says so).
const initCwd = process.env.INIT_CWD
const viaNpmRunNew = process.env.npm_lifecycle_event === 'new' && initCwd !== undefined && initCwd !== ''
const cwd = viaNpmRunNew ? initCwd : process.cwd()
const checkoutRoot = viaNpmRunNew ? resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..') : undefined

process.exitCode = await main({
  argv: process.argv.slice(2),
  cwd,
  checkoutRoot,
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  interactive: process.stdin.isTTY === true && process.stdout.isTTY === true
})
