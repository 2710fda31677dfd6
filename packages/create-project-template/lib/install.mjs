// @ts-check
/**
 * `npm install` in the generated project, with the same npm that runs this command when there is
 * one (npm exec, npm run), and without settings that would point npm elsewhere.
 */
import { spawn } from 'node:child_process'

/**
 * npm settings inherited from a calling npm (`npm --prefix x run new`, `npm test --workspaces`)
 * that would make the install act on another directory or on workspaces.
 */
const FOREIGN_SETTINGS = ['npm_config_prefix', 'npm_config_workspace', 'npm_config_workspaces', 'npm_config_include_workspace_root', 'npm_config_global', 'npm_config_location']

/**
 * The environment for an npm child in `directory`'s project.
 * @param {NodeJS.ProcessEnv} env
 * @returns {NodeJS.ProcessEnv}
 */
export function npmEnvironment (env) {
  const clean = { ...env }
  for (const key of Object.keys(clean)) {
    if (FOREIGN_SETTINGS.includes(key.toLowerCase())) delete clean[key]
  }
  return clean
}

/**
 * How to start npm: the calling npm's CLI script when known, else `npm` on the PATH.
 * @param {NodeJS.ProcessEnv} env
 * @returns {{ command: string, prefix: string[], shell: boolean }}
 */
export function npmCommand (env) {
  const execpath = env.npm_execpath
  if (execpath !== undefined && /npm-cli\.c?js$/.test(execpath)) return { command: process.execPath, prefix: [execpath], shell: false }
  return { command: 'npm', prefix: [], shell: process.platform === 'win32' }
}

/**
 * Runs `npm install` in `directory`, output shown to the user; resolves with its exit status.
 * @param {string} directory
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<number>}
 */
export function installDependencies (directory, env) {
  const { command, prefix, shell } = npmCommand(env)
  return new Promise((resolve) => {
    const child = spawn(command, [...prefix, 'install'], { cwd: directory, env: npmEnvironment(env), stdio: ['ignore', 'inherit', 'inherit'], shell })
    child.on('error', () => resolve(127))
    child.on('close', (code) => resolve(code ?? 1))
  })
}
