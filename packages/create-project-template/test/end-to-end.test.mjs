// @ts-check
/**
 * The proof the issue asks for: generate both variants into temporary directories, let the
 * generator install their dependencies (the core from the project's vendor/ tarball, with the
 * registry unreachable for the @project-template scope; everything else from the local npm cache
 * where possible), run each project's own `npm test`, then start each with its README's run
 * command and check /health, the posture of / and the one-time authentication-disabled warning;
 * check that `--name` reaches the running app (configuration keys, cookie names, page title);
 * and prove the update path from the previous release recorded in packages/core/releases.json
 * (rebuilt from the commit that recorded it) to the core the checkout vendors, installed with the
 * README's one command: it changes no file the team owns, passes the app's tests and is in
 * effect. While no release precedes the vendored core, the update goes to a patch release made
 * from a copy of it (one more response header). Last, the core's task guides' shell commands run in
 * that project against loopback IdPs, and their TypeScript blocks compile in it against the
 * installed core's published types (test/guide-commands.mjs: here because this file runs once in
 * CI, on the machine's Node, and already has an installed, built app).
 *
 * Minutes, not seconds (two installs, two runs of the app's own suite, builds and starts).
 * CREATE_PROJECT_TEMPLATE_E2E=0 skips this file for quick local iterations; CI always runs it.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { CORE_PACKAGE, coreTarballName } from '../lib/core-package.mjs'
import { previousRelease, readReleases } from '../../core/scripts/release-record.mjs'
import { describeGuideCommands, describeGuideTypeScript } from './guide-commands.mjs'
import { CORE_DIR, checkoutCore, childEnv, rebuildRelease, generate, killGroup, run, tail, tempDir, templateNameLeftovers } from './helpers.mjs'

const SKIP = process.env.CREATE_PROJECT_TEMPLATE_E2E === '0' ? 'CREATE_PROJECT_TEMPLATE_E2E=0' : false
const MINUTE = 60_000
/** The version the generator vendors from this checkout: a release, or the `-dev.` prerelease of unreleased changes. */
const CORE_VERSION = SKIP ? '' : checkoutCore().version

/**
 * npm settings for every child: the local cache first, no network extras, HTTP requests logged
 * (so that a request for the core would show), and the @project-template scope's registry
 * unreachable: the core can only come from the vendor/ tarball (a registry request for it fails
 * the install with ECONNREFUSED).
 */
const NPM_ENV = childEnv({
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  npm_config_loglevel: 'http',
  'npm_config_@project-template:registry': 'http://127.0.0.1:9/'
})

/** An npm log line of a registry request for anything in the @project-template scope. */
const SCOPE_REQUEST = /^npm http fetch .*(@project-template|project-template%2f|127\.0\.0\.1:9)/im
/**
 * npm's log line for the core read from a vendor/ tarball (`npm http cache
 * @project-template/core@file:/.../vendor/project-template-core-1.0.0.tgz`).
 * @param {string} version
 */
const fromVendor = (version) => new RegExp(`^npm http cache @project-template/core@file:\\S+/vendor/project-template-core-${version.replaceAll('.', '\\.')}\\.tgz `, 'm')

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
 * @param {Record<string, string>} [headers]
 * @returns {Promise<{ status: number, location: string | undefined, headers: import('node:http').IncomingHttpHeaders, body: string }>}
 */
function get (url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/html', ...headers }, timeout: 5000 }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, location: response.headers.location, headers: response.headers, body }))
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

/**
 * Starts `command` (sh) in `project` on a free port and waits for /health to answer 200 (asked
 * with `host` as the Host header when given), or for the process to exit.
 * @param {string} project
 * @param {string} command
 * @param {Record<string, string>} [env]
 * @param {string} [host]
 */
async function startServer (project, command, env = {}, host = undefined) {
  const port = await freePort()
  const child = spawn('sh', ['-c', command], {
    cwd: project,
    env: { ...NPM_ENV, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  const server = { base: `http://127.0.0.1:${port}`, output: '', child, exited: new Promise((resolve) => child.on('close', resolve)) }
  child.stdout.setEncoding('utf8').on('data', (chunk) => { server.output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { server.output += chunk })
  const deadline = Date.now() + 3 * MINUTE
  let health = 0
  while (Date.now() < deadline && child.exitCode === null) {
    health = await get(`${server.base}/health`, host === undefined ? {} : { host }).then((response) => response.status, () => 0)
    if (health === 200) break
    await sleep(250)
  }
  return { ...server, health }
}

/**
 * A hash of every file below `root` except node_modules/, vendor/ and package*.json: the files a
 * team owns (its sources, tests, settings, docs, deploy files) and what it built.
 * @param {string} root
 */
function ownedFiles (root) {
  /** @type {Record<string, string>} */
  const hashes = {}
  /** @param {string} directory */
  const visit = (directory) => {
    for (const entry of readdirSync(directory)) {
      const path = join(directory, entry)
      const rel = relative(root, path)
      if (['node_modules', 'vendor', 'package.json', 'package-lock.json'].includes(rel)) continue
      if (statSync(path).isDirectory()) visit(path)
      else hashes[rel] = createHash('sha256').update(readFileSync(path)).digest('hex')
    }
  }
  visit(root)
  return hashes
}

/**
 * The installed core as the lock file records it.
 * @param {string} project
 */
function lockedCore (project) {
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'))
  return lock.packages[`node_modules/${CORE_PACKAGE}`]
}

/** The name of the shipped-posture test each variant must run (test/posture.test.ts). */
const POSTURE_TEST = {
  cookie: 'appsettings.json enables authentication, the cookie session and the authenticated fallback',
  none: 'appsettings.json turns authentication, the cookie session and the authenticated fallback off'
}

const VARIANTS = [
  { directory: 'acme-portal', args: ['--name', 'Contoso'], name: 'Contoso', authProvider: /** @type {const} */ ('cookie') },
  { directory: 'open-demo', args: ['--name', 'OpenDemo', '--authProvider', 'none'], name: 'OpenDemo', authProvider: /** @type {const} */ ('none') }
]

for (const variant of VARIANTS) {
  describe(`--authProvider ${variant.authProvider}: generated, installed, tested and started`, { skip: SKIP, concurrency: 1 }, () => {
    const project = join(sandbox, variant.directory)

    test('the generator writes the project and installs its dependencies, the core from vendor/ without a registry request', { timeout: 10 * MINUTE }, async () => {
      const result = await generate([variant.directory, ...variant.args], { cwd: sandbox, env: NPM_ENV, timeoutMs: 9 * MINUTE })
      assert.equal(result.status, 0, tail(result.stdout + result.stderr))
      assert.ok(existsSync(join(project, 'node_modules', 'fastify', 'package.json')), 'fastify is installed')
      assert.ok(existsSync(join(project, 'package-lock.json')), 'npm wrote a lockfile')
      assert.equal(existsSync(join(project, 'node_modules', 'create-project-template')), false)
      assert.match(result.stdout, /\nNext steps:\n {2}cd open-demo\n|\nNext steps:\n {2}cd acme-portal\n/)
      // The core: from the tarball the project carries, installed as a copy (not a link into a checkout).
      const tarball = `vendor/${coreTarballName(CORE_VERSION)}`
      assert.equal(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies[CORE_PACKAGE], `file:${tarball}`)
      assert.equal(lockedCore(project)?.resolved, `file:${tarball}`)
      assert.equal(lockedCore(project)?.version, CORE_VERSION)
      const installed = join(project, 'node_modules', '@project-template', 'core')
      assert.equal(lstatSync(installed).isSymbolicLink(), false)
      assert.equal(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version, CORE_VERSION)
      assert.ok(existsSync(join(installed, 'dist', 'index.js')), 'the packed core carries its build')
      // npm logged its HTTP requests (cache hits included); none was for the core's scope.
      assert.match(result.stdout + result.stderr, /^npm http fetch /m, 'npm logged its requests')
      assert.doesNotMatch(result.stdout + result.stderr, SCOPE_REQUEST)
      assert.match(result.stdout + result.stderr, fromVendor(CORE_VERSION))
    })

    test('its own npm test passes, with a developer\'s local settings in appsettings.Development.json and appsettings.Production.json', { timeout: 25 * MINUTE }, async (context) => {
      // What docs/authorization.md has a developer configure for a local Keycloak (a scheme named as
      // the app's own bearer test names its scheme), kept where a developer may keep it: the tests read neither file.
      const shipped = readFileSync(join(project, 'appsettings.Development.json'), 'utf8')
      const local = developerSettings(project, variant.name)
      writeFileSync(join(project, 'appsettings.Development.json'), local)
      writeFileSync(join(project, 'appsettings.Production.json'), local)
      const started = Date.now()
      const result = await run('npm', ['test'], { cwd: project, env: NPM_ENV, timeoutMs: 24 * MINUTE }).finally(() => {
        writeFileSync(join(project, 'appsettings.Development.json'), shipped)
        rmSync(join(project, 'appsettings.Production.json'), { force: true })
      })
      context.diagnostic(`npm test of the generated ${variant.authProvider} project: ${((Date.now() - started) / 1000).toFixed(1)} s (node:test duration ${((Number(/(?:# |ℹ )duration_ms ([\d.]+)\n/.exec(result.stdout)?.[1] ?? 0)) / 1000).toFixed(1)} s)`)
      assert.equal(result.status, 0, `npm test in the generated ${variant.authProvider} project failed:\n${failures(result.stdout)}\n${tail(result.stdout + result.stderr)}`)
      // The suite really ran, including the posture test of this variant.
      assert.match(result.stdout, /(# |ℹ )fail 0\n/)
      const passed = Number(/(?:# |ℹ )pass (\d+)\n/.exec(result.stdout)?.[1] ?? 0)
      assert.ok(passed >= 50, `only ${passed} tests passed`)
      assert.ok(result.stdout.includes(POSTURE_TEST[variant.authProvider]), tail(result.stdout))
      // The sign-in end to end ran, on @project-template/core/testing: the project holds no copy of its helpers.
      assert.match(result.stdout, /\nok \d+ - a user signs in through OpenID Connect/)
      for (const copied of ['http-session.ts', 'oidc-idp.ts', 'oidc-interaction.ts', 'process.ts', 'wait.ts']) assert.equal(existsSync(join(project, 'test', 'helpers', copied)), false, copied)
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

    if (variant.authProvider === 'cookie') {
      test(`--name ${variant.name} reaches the running app: ${variant.name}__ variables, ${variant.name}: keys in messages, __Host-${variant.name}.* cookies, the page title`, { timeout: 3 * MINUTE }, async () => {
        const vendorA = {
          [`${variant.name}__Authentication__Providers__VendorA__Enabled`]: 'true',
          [`${variant.name}__Authentication__Providers__VendorA__ClientId`]: 'e2e-client',
          [`${variant.name}__Authentication__Providers__VendorA__ClientSecret`]: 'e2e-client-secret',
          [`${variant.name}__Authentication__Providers__VendorA__AuthorizationEndpoint`]: 'https://idp.example/authorize',
          [`${variant.name}__Authentication__Providers__VendorA__TokenEndpoint`]: 'https://idp.example/token',
          [`${variant.name}__Authentication__Providers__VendorA__UserInformationEndpoint`]: 'https://idp.example/user'
        }
        // Without a public origin the configuration is invalid; the message names the app's key.
        const refused = await startServer(project, 'node dist/server.js', vendorA)
        await Promise.race([refused.exited, sleep(30_000)])
        killGroup(refused.child.pid, 'SIGKILL')
        const invalid = jsonLines(refused.output).find((record) => record.event === 'configuration.invalid')
        assert.deepEqual(invalid?.errors, [`${variant.name}:Hosting:PublicOrigin is required outside Development when an external provider is enabled; every redirect_uri and SAML endpoint URL is built from it.`], tail(refused.output))
        assert.equal(invalid?.code, 'APP_ERR_CONFIG_INVALID')

        const server = await startServer(project, 'node dist/server.js', { ...vendorA, [`${variant.name}__Hosting__PublicOrigin`]: 'https://app.example' }, 'app.example')
        try {
          assert.equal(server.health, 200, tail(server.output))
          const challenge = await get(`${server.base}/External/Challenge?provider=VendorA`, { host: 'app.example' })
          assert.equal(challenge.status, 302)
          assert.match(challenge.location ?? '', /^https:\/\/idp\.example\/authorize\?/)
          const cookies = [challenge.headers['set-cookie'] ?? []].flat().map((line) => line.split('=')[0])
          assert.equal(cookies.length, 1)
          assert.match(cookies[0] ?? '', new RegExp(`^__Host-${variant.name}\\.Correlation\\.[0-3]$`))
          const login = await get(`${server.base}/Account/Login`, { host: 'app.example' })
          assert.match(login.body, new RegExp(`<title>Sign in - ${variant.name}</title>`))
          assert.match(login.body, /VendorA/)
        } finally {
          killGroup(server.child.pid, 'SIGKILL')
        }
      })
    }

    test('no ProjectTemplate text remains after install, test and build (node_modules, vendor/ and dist/, which hold the core, aside)', () => {
      assert.deepEqual(templateNameLeftovers(project, ['vendor', 'dist']), [])
    })
  })
}

/**
 * The release the update path starts from: the latest release recorded in releases.json before
 * the version the checkout vendors, rebuilt from the commit that recorded it (git archive of
 * packages/core, built with this checkout's installed packages, packed); its content digest must
 * be the recorded one. Undefined while no release precedes it (then a patch release is made
 * from a copy of the checkout's core, below).
 */
const PREVIOUS = SKIP ? undefined : previousRelease(readReleases(CORE_DIR), CORE_VERSION)

describe('the update path: from the previous release to the current core, with the README\'s one command', { skip: SKIP, concurrency: 1 }, () => {
  // The closed-posture project of the first variant, generated, installed, tested and built above.
  const project = join(sandbox, 'acme-portal')
  /**
   * Where the update goes: the core this checkout vendors (from the previous release), or, while
   * no release precedes it, a patch release of it whose responses carry one more header.
   */
  const target = PREVIOUS === undefined
    ? { version: nextPatch(CORE_VERSION), header: 'x-core-patch-release' }
    : { version: CORE_VERSION, header: undefined }
  /** @type {Record<string, string>} */
  let before = {}

  test(`before: the app runs ${PREVIOUS ?? `the vendored core ${CORE_VERSION}`}, installed from vendor/`, { timeout: 10 * MINUTE }, async () => {
    assert.ok(existsSync(join(project, 'node_modules')), 'the project of the first variant is installed')
    if (PREVIOUS !== undefined) {
      const filename = await rebuildRelease(PREVIOUS, join(project, 'vendor'), sandbox, NPM_ENV)
      const installed = await run('npm', ['install', `./vendor/${filename}`], { cwd: project, env: NPM_ENV, timeoutMs: 4 * MINUTE })
      assert.equal(installed.status, 0, tail(installed.stdout + installed.stderr))
      assert.equal(JSON.parse(readFileSync(join(project, 'node_modules', '@project-template', 'core', 'package.json'), 'utf8')).version, PREVIOUS)
    }
    const server = await startServer(project, 'npm run build && npm start')
    try {
      assert.equal(server.health, 200, tail(server.output))
      assert.equal((await get(`${server.base}/health`)).headers['x-core-patch-release'], undefined)
    } finally {
      killGroup(server.child.pid, 'SIGKILL')
    }
    before = ownedFiles(project)
    assert.ok(Object.keys(before).some((path) => path.startsWith('src/')) && Object.keys(before).some((path) => path.startsWith('dist/')))
  })

  test(`the core ${target.version} in vendor/`, { timeout: 2 * MINUTE }, async () => {
    if (PREVIOUS !== undefined) {
      // The generator vendored it: the checkout's core, as packing names it.
      assert.ok(existsSync(join(project, 'vendor', coreTarballName(target.version))))
      return
    }
    // A copy of the core's package (what npm pack would publish, with its build); the real sources are not touched.
    const copy = join(sandbox, 'core-patch')
    mkdirSync(copy)
    const manifest = JSON.parse(readFileSync(join(CORE_DIR, 'package.json'), 'utf8'))
    for (const entry of readdirSync(CORE_DIR)) {
      if (['node_modules', 'src', 'test', 'etc', 'scripts'].includes(entry) || entry.startsWith('.')) continue
      cpSync(join(CORE_DIR, entry), join(copy, entry), { recursive: true })
    }
    writeFileSync(join(copy, 'package.json'), JSON.stringify({ ...manifest, version: target.version }, null, 2))
    const headers = join(copy, 'dist', 'plugins', 'security-headers.js')
    const compiled = readFileSync(headers, 'utf8')
    assert.equal(compiled.split('return Object.freeze(headers);').length, 2, 'the compiled security headers have one return to patch')
    writeFileSync(headers, compiled.replace('return Object.freeze(headers);', `headers['${target.header}'] = '${target.version}';\n    return Object.freeze(headers);`))
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', join(project, 'vendor')], { cwd: copy, env: NPM_ENV, timeoutMs: 90_000 })
    assert.equal(packed.status, 0, packed.stderr)
    assert.equal(JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))[0].filename, coreTarballName(target.version))
    assert.equal(readFileSync(join(CORE_DIR, 'package.json'), 'utf8').includes(`"version": "${manifest.version}"`), true, 'the real core is unchanged')
  })

  test('the README\'s upgrade command installs it from vendor/, and no file the team owns changes', { timeout: 5 * MINUTE }, async () => {
    const readme = readFileSync(join(project, 'README.md'), 'utf8')
    const example = /and install it:\n\n```sh\n(npm install \.\/vendor\/)project-template-core-\d+\.\d+\.\d+\.tgz\n```/.exec(readme)
    assert.ok(example !== null, 'the README gives the upgrade command')
    const command = `${example[1]}${coreTarballName(target.version)}`
    const result = await run('sh', ['-c', command], { cwd: project, env: NPM_ENV, timeoutMs: 4 * MINUTE })
    assert.equal(result.status, 0, tail(result.stdout + result.stderr))
    assert.doesNotMatch(result.stdout + result.stderr, SCOPE_REQUEST)
    assert.match(result.stdout + result.stderr, fromVendor(target.version))
    assert.deepEqual(ownedFiles(project), before)
    assert.equal(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies[CORE_PACKAGE], `file:vendor/${coreTarballName(target.version)}`)
    assert.equal(lockedCore(project)?.resolved, `file:vendor/${coreTarballName(target.version)}`)
    assert.equal(JSON.parse(readFileSync(join(project, 'node_modules', '@project-template', 'core', 'package.json'), 'utf8')).version, target.version)
  })

  test('the app\'s own tests pass on the new core, and still nothing the team owns changed', { timeout: 10 * MINUTE }, async () => {
    const result = await run('npm', ['test'], { cwd: project, env: NPM_ENV, timeoutMs: 9 * MINUTE })
    assert.equal(result.status, 0, `${failures(result.stdout)}\n${tail(result.stdout + result.stderr)}`)
    assert.match(result.stdout, /(# |ℹ )fail 0\n/)
    assert.deepEqual(ownedFiles(project), before)
  })

  test('rebuilt and started with the README\'s run command, the app runs the new core', { timeout: 5 * MINUTE }, async () => {
    const readme = readFileSync(join(project, 'README.md'), 'utf8')
    const command = /## Run it\n\n```sh\n(.+)\n```/.exec(readme)?.[1] ?? 'false'
    const server = await startServer(project, command)
    try {
      assert.equal(server.health, 200, tail(server.output))
      if (target.header !== undefined) {
        assert.equal((await get(`${server.base}/health`)).headers[target.header], target.version)
        assert.equal((await get(`${server.base}/Account/Login`)).headers[target.header], target.version)
      }
      assert.equal(JSON.parse(readFileSync(join(project, 'node_modules', '@project-template', 'core', 'package.json'), 'utf8')).version, target.version)
    } finally {
      killGroup(server.child.pid, 'SIGKILL')
    }
  })
})

// The guides' commands, in the closed-posture project (after the update path: it is built and runs the newest core).
describeGuideCommands({ project: () => join(sandbox, 'acme-portal'), name: VARIANTS[0]?.name ?? '', env: NPM_ENV, skip: SKIP })
// The guides' TypeScript, in the same project: one tsc run against the core it installed.
describeGuideTypeScript({ project: () => join(sandbox, 'acme-portal'), env: NPM_ENV, skip: SKIP })

/**
 * appsettings.Development.json as a developer following the app's docs writes it: the shipped file
 * plus the JwtBearer scheme of docs/authorization.md ("Calling the API with a bearer token").
 * @param {string} project
 * @param {string} name the root key
 */
function developerSettings (project, name) {
  const guide = readFileSync(join(project, 'docs', 'authorization.md'), 'utf8')
  const section = guide.slice(guide.indexOf('## Calling the API with a bearer token'))
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1]
  assert.ok(block !== undefined && block.includes('"JwtBearer"'), 'docs/authorization.md configures a JwtBearer scheme')
  const settings = JSON.parse(readFileSync(join(project, 'appsettings.Development.json'), 'utf8'))
  settings[name] = { ...settings[name], ...JSON.parse(`{${block}}`) }
  return `${JSON.stringify(settings, null, 2)}\n`
}

/**
 * The patch release after `version` (after its release part, for a `-dev.` prerelease).
 * @param {string} version
 */
function nextPatch (version) {
  const [major, minor, patch] = (version.split('-')[0] ?? '').split('.').map(Number)
  return `${major}.${minor}.${(patch ?? 0) + (version.includes('-') ? 0 : 1)}`
}
