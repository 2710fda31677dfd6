// @ts-check
/**
 * The proof the issue asks for: generate both variants into temporary directories, let the
 * generator install their dependencies (from the local npm cache where possible), run each
 * project's own `npm test`, then start each with its README's run command and check /health,
 * the posture of / and the one-time authentication-disabled warning.
 *
 * Slow (each generated suite is the template's whole suite). CREATE_PROJECT_TEMPLATE_E2E=0 skips
 * this file for quick local iterations; CI always runs it.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { childEnv, generate, killGroup, run, tail, tempDir, templateNameLeftovers } from './helpers.mjs'

// TODO(issue 19, generator stage): the thin template depends on @project-template/core, which is
// not on the registry yet; the generated app cannot install it until the generator ships the packed
// core as a vendor/ tarball. Skipped until that stage lands.
const SKIP = 'TODO issue 19 generator stage: the generated app cannot install @project-template/core until the generator vendors the packed core'
const MINUTE = 60_000

/** npm settings for every child: the local cache first, no network extras. */
const NPM_ENV = childEnv({
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false'
})

const sandbox = SKIP ? '' : tempDir('cpt-e2e-')
after(() => { if (sandbox !== '') rmSync(sandbox, { recursive: true, force: true }) })

/** @returns {Promise<number>} a port that was free a moment ago on 127.0.0.1 */
function freePort () {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/**
 * One GET without following redirects.
 * @param {string} url
 * @returns {Promise<{ status: number, location: string | undefined }>}
 */
function get (url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/html' }, timeout: 5000 }, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0, location: response.headers.location }))
    })
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)))
    req.on('error', reject)
    req.end()
  })
}

/**
 * The failing tests of a TAP report, each with the start of its diagnostics, so that a failure
 * in a long suite is readable without the whole output.
 * @param {string} output
 */
function failures (output) {
  const lines = output.split('\n')
  const found = []
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*not ok \d+ - /.test(lines[i] ?? '') && !/failureType: 'subtestsFailed'/.test(lines.slice(i, i + 6).join('\n'))) {
      found.push(lines.slice(i, i + 14).join('\n'))
    }
  }
  return found.length === 0 ? '' : `Failing tests:\n${found.join('\n')}\n`
}

/** @param {string} output */
function jsonLines (output) {
  /** @type {Array<Record<string, unknown>>} */
  const records = []
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue
    try { records.push(JSON.parse(line)) } catch {}
  }
  return records
}

/** The name of the shipped-posture test each variant must run (test/posture.test.ts). */
const POSTURE_TEST = {
  cookie: 'appsettings.json enables authentication, the cookie session and the authenticated fallback',
  none: 'appsettings.json turns authentication, the cookie session and the authenticated fallback off'
}

const VARIANTS = [
  { directory: 'acme-portal', args: [], name: 'AcmePortal', authProvider: /** @type {const} */ ('cookie') },
  { directory: 'open-demo', args: ['--name', 'OpenDemo', '--authProvider', 'none'], name: 'OpenDemo', authProvider: /** @type {const} */ ('none') }
]

for (const variant of VARIANTS) {
  describe(`--authProvider ${variant.authProvider}: generated, installed, tested and started`, { skip: SKIP, concurrency: 1 }, () => {
    const project = join(sandbox, variant.directory)

    test('the generator writes the project and installs its dependencies', { timeout: 10 * MINUTE }, async () => {
      const result = await generate([variant.directory, ...variant.args], { cwd: sandbox, env: NPM_ENV, timeoutMs: 9 * MINUTE })
      assert.equal(result.status, 0, tail(result.stdout + result.stderr))
      assert.ok(existsSync(join(project, 'node_modules', 'fastify', 'package.json')), 'fastify is installed')
      assert.ok(existsSync(join(project, 'package-lock.json')), 'npm wrote a lockfile')
      assert.equal(existsSync(join(project, 'node_modules', 'create-project-template')), false)
      assert.match(result.stdout, /\nNext steps:\n {2}cd open-demo\n|\nNext steps:\n {2}cd acme-portal\n/)
    })

    test('its own npm test passes', { timeout: 25 * MINUTE }, async () => {
      const result = await run('npm', ['test'], { cwd: project, env: NPM_ENV, timeoutMs: 24 * MINUTE })
      assert.equal(result.status, 0, `npm test in the generated ${variant.authProvider} project failed:\n${failures(result.stdout)}\n${tail(result.stdout + result.stderr)}`)
      // The suite really ran, including the posture test of this variant.
      assert.match(result.stdout, /(# |ℹ )fail 0\n/)
      const passed = Number(/(?:# |ℹ )pass (\d+)\n/.exec(result.stdout)?.[1] ?? 0)
      assert.ok(passed >= 50, `only ${passed} tests passed`)
      assert.ok(result.stdout.includes(POSTURE_TEST[variant.authProvider]), tail(result.stdout))
    })

    test(`started with the README's run command: /health is 200, / is ${variant.authProvider === 'cookie' ? '302 to the login page' : '200'}, the authentication-disabled warning is logged ${variant.authProvider === 'cookie' ? 'never' : 'once'}`, { timeout: 5 * MINUTE }, async () => {
      const readme = readFileSync(join(project, 'README.md'), 'utf8')
      const command = /## Run it\n\n```sh\n(.+)\n```/.exec(readme)?.[1]
      assert.ok(command !== undefined, 'the README has a run command')
      const port = await freePort()
      const child = spawn('sh', ['-c', command], {
        cwd: project,
        env: { ...NPM_ENV, HOST: '127.0.0.1', PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true
      })
      let output = ''
      child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk })
      child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk })
      const exited = new Promise((resolve) => child.on('close', resolve))
      try {
        const base = `http://127.0.0.1:${port}`
        const deadline = Date.now() + 3 * MINUTE
        let health = 0
        while (Date.now() < deadline && child.exitCode === null) {
          health = await get(`${base}/health`).then((response) => response.status, () => 0)
          if (health === 200) break
          await sleep(250)
        }
        assert.equal(health, 200, `GET /health never answered 200:\n${tail(output)}`)

        const home = await get(`${base}/`)
        if (variant.authProvider === 'cookie') {
          assert.equal(home.status, 302)
          assert.match(home.location ?? '', /^\/Account\/Login(\?|$)/)
        } else {
          assert.equal(home.status, 200)
        }

        killGroup(child.pid, 'SIGTERM')
        const stopped = await Promise.race([exited.then(() => true), sleep(20_000).then(() => false)])
        assert.ok(stopped, `the server did not stop within 20 s of SIGTERM:\n${tail(output)}`)
        const records = jsonLines(output)
        assert.ok(records.some((record) => record.event === 'configuration.loaded'), `the app logged its startup:\n${tail(output)}`)
        const warnings = records.filter((record) => record.event === 'authentication.disabled')
        assert.equal(warnings.length, variant.authProvider === 'none' ? 1 : 0, tail(output))
        if (variant.authProvider === 'none') {
          assert.equal(warnings[0]?.key, `${variant.name}:Authentication:Enabled`)
          assert.equal(warnings[0]?.level, 40)
        }
      } finally {
        killGroup(child.pid, 'SIGKILL')
      }
    })

    test('no ProjectTemplate text remains after install, test and build (node_modules aside)', () => {
      assert.deepEqual(templateNameLeftovers(project), [])
    })
  })
}
