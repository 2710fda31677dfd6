#!/usr/bin/env node
/**
 * create-project-template <directory> [--name <Name>] [--authProvider cookie|none]
 *   [--skip-install] [--force] — see docs/generator.md.
 */
import { main } from '../lib/cli.mjs'

// `npm run new -- <dir>` runs in the checkout's root; resolve <dir> where the user typed it.
const cwd = process.env.npm_lifecycle_event === 'new' && process.env.INIT_CWD ? process.env.INIT_CWD : process.cwd()

process.exitCode = await main({
  argv: process.argv.slice(2),
  cwd,
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  interactive: process.stdin.isTTY === true && process.stdout.isTTY === true
})
