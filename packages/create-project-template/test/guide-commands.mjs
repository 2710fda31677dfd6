// @ts-check
/**
 * The task guides' shell commands, run for real (issue 34, item 8). The core's
 * test/docs/guides.test.ts loads the guides' configuration blocks and typechecks their
 * TypeScript; this module runs their ```sh blocks in a generated app, against real pieces on
 * loopback only, and asserts the exit codes and the output each guide claims.
 *
 * Where it runs: end-to-end.test.mjs calls {@link describeGuideCommands} last, on the project it
 * generated, installed, tested and built (no second install). That file runs once in CI, on the
 * machine's Node (`.ci/run` runs the generator's end-to-end test only there, not on Node 22 and
 * 24); the runs here add 25-50 s to it (measured on the 2-core machine, quiet and loaded).
 * {@link unclaimedBlocks}, the convention check, costs milliseconds and runs in
 * test/guide-blocks.test.mjs with the unit tests, so a guide's author meets it without the install.
 *
 * The convention (packages/core/docs/guides/README.md): every fenced block whose language is sh,
 * bash, shell, console or zsh is one of
 * - ```sh env (optionally `Development`): environment variables; the core's guides test loads them
 *   through the configuration loader, and a run here uses them (as `.env` or as the environment);
 * - ```sh no-test <reason>: not run, with a reason of at least three words;
 * - ```sh: a command a run below claims ({@link CLAIMS}) and executes verbatim, after the
 *   substitutions. A new unmarked block that no run claims fails the check, and so does a claim
 *   that matches no block (a command changed under a run).
 * The blocks of one run execute in one `sh -ec`, as one terminal session would.
 *
 * What a reader fills in, the test fills in from this table ({@link substitutions}):
 *
 * | In a guide | In the test |
 * |---|---|
 * | `ProjectTemplate` (root key, `ProjectTemplate__` prefix) | the generated app's name (`Contoso`) |
 * | `https://app.example.com` | `https://localhost:<port>`: a TLS front on loopback forwarding to the app on 127.0.0.1 |
 * | `https://login.example.com` | `https://localhost:<port>`: oidc-provider over TLS on loopback (realm path and Keycloak's token path as written) |
 * | `http://127.0.0.1:5000` | the app on a free port (`PORT` is set) |
 * | `http://localhost:8080/realms/dev` (Keycloak on your machine) | oidc-provider over http on loopback (`startOidcProvider` of the core's testing export) |
 * | `/run/secrets/oidc-client-secret` | a file in a temporary directory |
 * | `<a key from npm run --silent generate-key>` | the key the several-instances guide's command printed |
 *
 * and in every run's environment: `SECRET` (the `orders-cli` client's secret), `HOST=127.0.0.1`
 * and `PORT`, `NODE_EXTRA_CA_CERTS` and `CURL_CA_BUNDLE` (the test's self-signed certificate for
 * localhost, made with openssl; a reader's hosts have public certificates), user secrets pointed
 * nowhere. Client ids and secrets the guides write out (`project-template-web`,
 * `local-client-secret`, `orders-cli`) are registered at the local IdPs as written; the TLS IdP's
 * client-credentials tokens carry the guide's audience, `orders-api`. Planted
 * secrets (client secrets, the access token) must never appear in the app's output.
 *
 * Every process started is stopped (its process group), every wait is bounded.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { createRequire } from 'node:module'
import { connect, createServer as createNetServer } from 'node:net'
import { join } from 'node:path'
import { createServer as createTlsServer } from 'node:tls'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { CORE_DIR, killGroup, run, tail, tempDir } from './helpers.mjs'

export const GUIDES_DIR = join(CORE_DIR, 'docs', 'guides')
const SHELLS = ['sh', 'bash', 'shell', 'console', 'zsh']

/**
 * @typedef {object} ShellBlock
 * @property {string} guide file name
 * @property {number} line of the opening fence
 * @property {string} info the whole info string
 * @property {'command' | 'env' | 'no-test'} kind
 * @property {string} reason for `no-test`
 * @property {string} text the block's lines, without the fence's indentation
 */

/**
 * Every shell block of every guide.
 * @returns {ShellBlock[]}
 */
export function shellBlocks () {
  /** @type {ShellBlock[]} */
  const found = []
  for (const guide of readdirSync(GUIDES_DIR).filter((file) => file.endsWith('.md')).sort()) {
    const markdown = readFileSync(join(GUIDES_DIR, guide), 'utf8')
    for (const match of markdown.matchAll(/^( *)```([^\n]*)\n([\s\S]*?)^\1```$/gm)) {
      const indent = match[1] ?? ''
      const info = (match[2] ?? '').trim()
      const [language = '', marker = '', ...rest] = info.split(/\s+/)
      if (!SHELLS.includes(language)) continue
      const line = markdown.slice(0, match.index).split('\n').length
      const text = (match[3] ?? '').split('\n').map((row) => row.startsWith(indent) ? row.slice(indent.length) : row).join('\n').trimEnd()
      const kind = marker === '' ? 'command' : marker === 'env' ? 'env' : marker === 'no-test' ? 'no-test' : undefined
      assert.ok(kind !== undefined, `${guide}:${line}: \`\`\`${info}: a shell block is \`\`\`sh, \`\`\`sh env or \`\`\`sh no-test <reason> (test/guide-commands.mjs)`)
      assert.ok(kind !== 'env' || rest.length === 0 || (rest.length === 1 && rest[0] === 'Development'), `${guide}:${line}: \`\`\`${info}`)
      found.push({ guide, line, info, kind, reason: kind === 'no-test' ? rest.join(' ') : '', text })
    }
  }
  return found
}

/**
 * The blocks the runs below execute or use, by guide and a pattern its text matches: each claim
 * must match exactly one block of its guide.
 */
export const CLAIMS = /** @type {const} */ ({
  install: { guide: 'get-started.md', kind: 'command', match: /npm run dev/ },
  localEnv: { guide: 'get-started.md', kind: 'env', match: /Providers__OpenIdConnect__Authority=http:\/\/localhost/ },
  checkDevelopment: { guide: 'get-started.md', kind: 'command', match: /NODE_ENV=development npm run check-config/ },
  secret: { guide: 'add-an-identity-provider.md', kind: 'command', match: /\$\(cat / },
  checkAndStart: { guide: 'add-an-identity-provider.md', kind: 'command', match: /npm run check-config && npm start/ },
  readiness: { guide: 'observe.md', kind: 'command', match: /\/health\/ready/ },
  productionEnv: { guide: 'production-checklist.md', kind: 'env', match: /DataProtection__Keys__0=/ },
  checkAndBuild: { guide: 'production-checklist.md', kind: 'command', match: /npm run check-config && npm run build/ },
  callApi: { guide: 'protect-an-api.md', kind: 'command', match: /grant_type=client_credentials/ },
  generateKey: { guide: 'several-instances.md', kind: 'command', match: /npm run --silent generate-key/ }
})

/**
 * The block a claim names.
 * @param {ShellBlock[]} blocks
 * @param {keyof typeof CLAIMS} name
 */
export function claimed (blocks, name) {
  const claim = CLAIMS[name]
  const matching = blocks.filter((block) => block.guide === claim.guide && block.kind === claim.kind && claim.match.test(block.text))
  assert.equal(matching.length, 1, `CLAIMS.${name}: ${matching.length} blocks of ${claim.guide} match ${claim.match} (a guide's command changed: update the run in test/guide-commands.mjs)`)
  return /** @type {ShellBlock} */ (matching[0])
}

/**
 * The blocks neither claimed by a run nor marked `no-test` with a reason; fails on a claim that
 * matches no block.
 * @param {ShellBlock[]} [blocks]
 */
export function unclaimedBlocks (blocks = shellBlocks()) {
  const used = new Set(/** @type {Array<keyof typeof CLAIMS>} */ (Object.keys(CLAIMS)).map((name) => claimed(blocks, name)))
  return blocks
    .filter((block) => !used.has(block) && !(block.kind === 'no-test' && block.reason.split(/\s+/).length >= 3))
    .map((block) => `${block.guide}:${block.line}: \`\`\`${block.info}`)
}

/**
 * @typedef {object} Loopback
 * @property {string} name the app's name (root key)
 * @property {number} appPort
 * @property {number} frontPort the TLS front of the app
 * @property {number} idpPort the TLS IdP
 * @property {string} devIssuer the http IdP of get-started
 * @property {string} secretFile
 * @property {string} dataProtectionKey
 */

/**
 * The table of the header: what a reader fills in, as the test fills it in.
 * @param {Loopback} loopback
 * @returns {Array<[string, string]>}
 */
export function substitutions (loopback) {
  return [
    ['ProjectTemplate', loopback.name],
    ['https://app.example.com', `https://localhost:${loopback.frontPort}`],
    ['https://login.example.com', `https://localhost:${loopback.idpPort}`],
    ['http://127.0.0.1:5000', `http://127.0.0.1:${loopback.appPort}`],
    ['http://localhost:8080/realms/dev', loopback.devIssuer],
    ['/run/secrets/oidc-client-secret', loopback.secretFile],
    ['<a key from npm run --silent generate-key>', loopback.dataProtectionKey]
  ]
}

/**
 * @param {string} text
 * @param {Loopback} loopback
 */
function substitute (text, loopback) {
  let result = text
  for (const [from, to] of substitutions(loopback)) result = result.replaceAll(from, to)
  return result
}

/**
 * The `KEY=value` lines of an env block as an environment.
 * @param {string} text
 * @returns {Record<string, string>}
 */
function environmentOf (text) {
  /** @type {Record<string, string>} */
  const env = {}
  for (const line of text.split('\n')) {
    const match = /^(?:export )?([A-Za-z]\w*)=(.*)$/.exec(line.trim())
    if (match !== null) env[match[1] ?? ''] = (match[2] ?? '').replace(/^"(.*)"$/, '$1')
  }
  return env
}

/** @returns {Promise<number>} a port that was free a moment ago on 127.0.0.1 */
function freePort () {
  return new Promise((resolve, reject) => {
    const server = createNetServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/**
 * One request to the app on 127.0.0.1 (no redirect followed), with `host` as the Host header.
 * @param {number} port
 * @param {string} path
 * @param {{ host?: string, accept?: string }} [options]
 * @returns {Promise<{ status: number, location: string, body: string }>}
 */
function get (port, path, options = {}) {
  return new Promise((resolve, reject) => {
    const headers = { accept: options.accept ?? 'text/html', ...(options.host === undefined ? {} : { host: options.host }) }
    const req = request({ host: '127.0.0.1', port, path, headers, timeout: 5000 }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, location: String(response.headers.location ?? ''), body }))
    })
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)))
    req.on('error', reject)
    req.end()
  })
}

/**
 * Polls `check` every 200 ms until it returns true; fails after `timeoutMs` with `label`.
 * @param {() => Promise<boolean>} check
 * @param {string} label
 * @param {number} timeoutMs
 * @param {() => string} [output]
 */
async function waitUntil (check, label, timeoutMs, output = () => '') {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await sleep(200)
  }
  assert.fail(`${label} within ${timeoutMs / 1000} s:\n${tail(output())}`)
}

/**
 * A long-running command (`sh -ec`, its own process group), output collected.
 * @param {string} command
 * @param {string} cwd
 * @param {NodeJS.ProcessEnv} env
 */
function startCommand (command, cwd, env) {
  const child = spawn('sh', ['-ec', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk })
  const exited = new Promise((resolve) => child.on('close', resolve))
  return {
    output: () => output,
    /** Whether the command has ended. */
    ended: () => child.exitCode !== null || child.signalCode !== null,
    /** SIGINT to the group (the server stops without the SIGTERM drain), SIGKILL after 10 s. */
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        killGroup(child.pid, 'SIGINT')
        const stopped = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)])
        if (!stopped) killGroup(child.pid, 'SIGKILL')
      }
      // A server child the shell left behind.
      killGroup(child.pid, 'SIGKILL')
    }
  }
}

/**
 * A self-signed certificate for localhost (and 127.0.0.1), made with openssl.
 * @param {string} directory
 */
function localhostCertificate (directory) {
  const key = join(directory, 'localhost-key.pem')
  const cert = join(directory, 'localhost-cert.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert], { cwd: directory, stdio: 'pipe', timeout: 30_000 })
  return { keyFile: key, certFile: cert, key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') }
}

/**
 * @typedef {object} GuideCommandsOptions
 * @property {() => string} project the generated, installed and built app
 * @property {string} name its name (root key)
 * @property {NodeJS.ProcessEnv} env the npm environment of the generator's end-to-end test
 * @property {string | boolean} skip
 */

/**
 * The runs, in the order a team meets the guides.
 * @param {GuideCommandsOptions} options
 */
export function describeGuideCommands (options) {
  describe('the guides\' shell commands run in the generated app, against loopback IdPs', { skip: options.skip, concurrency: 1 }, () => {
    const blocks = options.skip === false ? shellBlocks() : []
    const block = (/** @type {keyof typeof CLAIMS} */ name) => claimed(blocks, name)
    /** @type {Array<() => Promise<void> | void>} */
    const cleanups = []
    const secrets = { web: `web-${randomBytes(16).toString('hex')}`, ordersCli: `cli-${randomBytes(16).toString('hex')}` }
    /** @type {Loopback} */
    const loopback = { name: options.name, appPort: 0, frontPort: 0, idpPort: 0, devIssuer: '', secretFile: '', dataProtectionKey: '' }
    /** @type {NodeJS.ProcessEnv} */
    let baseEnv = {}
    /** @type {any} */
    let testing
    /** @type {string[]} */
    const issuedTokens = []
    let project = ''

    before(async () => {
      project = options.project()
      for (const tool of ['curl', 'jq', 'openssl']) {
        assert.doesNotThrow(() => execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'pipe', timeout: 10_000 }), `${tool} is needed (scripts/install-test-dependencies.sh installs it)`)
      }
      const directory = tempDir('cpt-guides-')
      cleanups.push(() => rmSync(directory, { recursive: true, force: true }))
      const tls = localhostCertificate(directory)
      loopback.secretFile = join(directory, 'oidc-client-secret')
      writeFileSync(loopback.secretFile, `${secrets.web}\n`)
      loopback.appPort = await freePort()

      // The app's public origin: TLS on loopback, forwarded as plain TCP to the app.
      /** @type {Set<import('node:net').Socket>} */
      const open = new Set()
      const front = createTlsServer({ key: tls.key, cert: tls.cert }, (socket) => {
        const upstream = connect(loopback.appPort, '127.0.0.1')
        for (const end of [socket, upstream]) { open.add(end); end.on('close', () => open.delete(end)) }
        socket.on('error', () => upstream.destroy())
        upstream.on('error', () => socket.destroy())
        socket.pipe(upstream).pipe(socket)
      })
      await new Promise((resolve) => front.listen(0, '127.0.0.1', () => resolve(undefined)))
      loopback.frontPort = /** @type {import('node:net').AddressInfo} */ (front.address()).port
      cleanups.push(() => new Promise((resolve) => { front.close(() => resolve()); for (const socket of open) socket.destroy() }))

      // The guides' identity provider: oidc-provider over TLS, mounted at /realms/main with
      // Keycloak's token path, a confidential web client and a machine client whose JWT access
      // tokens are for the API (RFC 8707 resource indicators, RFC 9068 tokens).
      const require = createRequire(join(project, 'package.json'))
      const Provider = (await import(pathToFileURL(require.resolve('oidc-provider')).href)).default
      testing = await import(pathToFileURL(require.resolve('@project-template/core/testing')).href)
      const realm = '/realms/main'
      /** @type {(request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => void} */
      let handler = (_request, response) => { response.writeHead(503).end() }
      const idpServer = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
        if (req.url?.startsWith(realm) !== true) { res.writeHead(404).end(); return }
        // Mounted as express would: oidc-provider reads the mount path from originalUrl.
        Object.assign(req, { originalUrl: req.url })
        req.url = req.url.slice(realm.length) || '/'
        handler(req, res)
      })
      await new Promise((resolve) => idpServer.listen(0, '127.0.0.1', () => resolve(undefined)))
      loopback.idpPort = /** @type {import('node:net').AddressInfo} */ (idpServer.address()).port
      cleanups.push(() => new Promise((resolve) => { idpServer.closeAllConnections(); idpServer.close(() => resolve()) }))
      const provider = new Provider(`https://localhost:${loopback.idpPort}${realm}`, {
        clients: [
          { client_id: 'project-template-web', client_secret: secrets.web, redirect_uris: [`https://localhost:${loopback.frontPort}/signin-oidc`], grant_types: ['authorization_code'], response_types: ['code'] },
          { client_id: 'orders-cli', client_secret: secrets.ordersCli, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_post' }
        ],
        routes: { token: '/protocol/openid-connect/token' },
        scopes: ['openid', 'orders.read', 'orders.write'],
        cookies: { keys: [randomBytes(16).toString('hex')] },
        features: {
          clientCredentials: { enabled: true },
          resourceIndicators: {
            enabled: true,
            // A resource indicator is an absolute URI; the audience the API's tokens carry is the
            // guide's `orders-api` (Keycloak's audience mapper does the same).
            defaultResource: () => 'urn:example:orders-api',
            useGrantedResource: () => true,
            getResourceServerInfo: (/** @type {unknown} */ _ctx, /** @type {string} */ resource) => {
              if (resource !== 'urn:example:orders-api') throw new Error('unknown resource')
              return { scope: 'orders.read orders.write', audience: 'orders-api', accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } }
            }
          }
        }
      })
      provider.on('grant.success', (/** @type {{ body?: { access_token?: unknown } }} */ ctx) => {
        if (typeof ctx.body?.access_token === 'string') issuedTokens.push(ctx.body.access_token)
      })
      handler = provider.callback()

      // get-started's local provider: the core's test IdP over http, with the guide's client.
      const local = await testing.startOidcProvider({ clientId: 'project-template-web', clientSecret: 'local-client-secret', accounts: { alice: { name: 'Alice Local', email: 'alice@example.test' } } })
      cleanups.push(() => local.close())
      loopback.devIssuer = local.issuer
      await local.configure(`http://127.0.0.1:${loopback.appPort}/signin-oidc`)

      baseEnv = {
        ...options.env,
        HOST: '127.0.0.1',
        PORT: String(loopback.appPort),
        XDG_CONFIG_HOME: join(directory, 'no-user-secrets'),
        NODE_EXTRA_CA_CERTS: tls.certFile,
        CURL_CA_BUNDLE: tls.certFile,
        SECRET: secrets.ordersCli
      }
    }, { timeout: 60_000 })

    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
      for (const file of ['.env', 'appsettings.Production.json']) rmSync(join(project, file), { force: true })
    }, { timeout: 30_000 })

    /**
     * Asserts that no planted secret is in `output`.
     * @param {string} output
     */
    const noSecretIn = (output) => {
      for (const planted of [secrets.web, secrets.ordersCli, ...issuedTokens]) assert.ok(!output.includes(planted), 'a planted secret is in the output')
    }

    test('get-started: `npm install` and `npm run dev` serve the closed app; `.env` with the local provider restarts it; `check-config` in Development names the provider; a user signs in', { timeout: 3 * 60_000 }, async () => {
      const dev = startCommand(substitute(block('install').text, loopback), project, baseEnv)
      try {
        await waitUntil(async () => (await get(loopback.appPort, '/health')).status === 200, 'npm run dev did not answer /health', 90_000, dev.output)
        const home = await get(loopback.appPort, '/')
        assert.equal(home.status, 302)
        assert.match(home.location, /^\/Account\/Login(\?|$)/)
        assert.match((await get(loopback.appPort, '/Account/Login')).body, /No sign-in provider is configured/)
        // The log is written in batches (a timer flushes them): wait for the line rather than read once.
        await waitUntil(async () => /"event":"authentication\.no_provider"/.test(dev.output()), 'npm run dev did not log authentication.no_provider', 10_000, dev.output)

        // Step 3: the variables go into .env; the running `npm run dev` starts again with them.
        writeFileSync(join(project, '.env'), `${substitute(block('localEnv').text, loopback)}\n`)
        await waitUntil(async () => (await get(loopback.appPort, '/')).location.startsWith(loopback.devIssuer), 'after .env, / did not challenge with the local provider', 60_000, dev.output)

        // Step 4.
        const check = await run('sh', ['-ec', substitute(block('checkDevelopment').text, loopback)], { cwd: project, env: baseEnv, timeoutMs: 60_000 })
        assert.equal(check.status, 0, check.stdout + check.stderr)
        assert.match(check.stdout, /Configuration: valid/)
        assert.match(check.stdout, /Environment: +Development/)
        assert.match(check.stdout, /Providers: +OpenID Connect \(OpenIdConnect\)/)
        assert.match(check.stdout, /:OpenIdConnect:ClientSecret +from \.env/)
        assert.ok(!check.stdout.includes('local-client-secret'), 'check-config printed the client secret')

        // The user signs in at the local provider and lands on the app signed in.
        const browser = new testing.HttpSession()
        const origin = `http://127.0.0.1:${loopback.appPort}`
        const start = await browser.request(`${origin}/`)
        const callback = await testing.throughIdpLogin(browser, start.location, origin, 'alice')
        const completed = await browser.request(callback)
        assert.equal(completed.response.status, 302, tail(dev.output()))
        const signedIn = await browser.request(`${origin}/`)
        assert.equal(signedIn.response.status, 200)
        assert.match(signedIn.body, /Alice Local/)
        assert.ok(!dev.output().includes('local-client-secret'), 'the app logged the client secret')
      } finally {
        await dev.stop()
        rmSync(join(project, '.env'), { force: true })
      }
    })

    test('several-instances: `npm run --silent generate-key` prints one key, base64 of 32 bytes', { timeout: 60_000 }, async () => {
      const result = await run('sh', ['-ec', substitute(block('generateKey').text, loopback)], { cwd: project, env: baseEnv, timeoutMs: 30_000 })
      assert.equal(result.status, 0, result.stderr)
      assert.match(result.stdout, /^[A-Za-z0-9+/]{43}=\n$/)
      assert.equal(Buffer.from(result.stdout.trim(), 'base64').length, 32)
      loopback.dataProtectionKey = result.stdout.trim()
    })

    test('production-checklist: with the environment of one instance, `npm run check-config && npm run build` passes the Production rules and builds', { timeout: 4 * 60_000 }, async () => {
      assert.notEqual(loopback.dataProtectionKey, '', 'the generate-key run gave a key')
      const env = { ...baseEnv, ...environmentOf(substitute(block('productionEnv').text, loopback)) }
      const result = await run('sh', ['-ec', substitute(block('checkAndBuild').text, loopback)], { cwd: project, env, timeoutMs: 3 * 60_000 })
      assert.equal(result.status, 0, tail(result.stdout + result.stderr))
      assert.match(result.stdout, /Configuration: valid/)
      assert.match(result.stdout, /Environment: +Production/)
      assert.ok(!result.stdout.includes(loopback.dataProtectionKey), 'check-config printed the key')
      assert.ok(existsSync(join(project, 'dist', 'server.js')), 'npm run build wrote dist/server.js')
    })

    test('add-an-identity-provider and observe: the secret from a file, `npm run check-config && npm start` in Production; discovery loads over TLS, /health/ready becomes 200 and names no provider', { timeout: 3 * 60_000 }, async () => {
      const settings = readGuideJson('add-an-identity-provider.md', /"DisplayName": "Example ID"/)
      writeFileSync(join(project, 'appsettings.Production.json'), substitute(settings, loopback))
      const app = startCommand(`${substitute(block('secret').text, loopback)}\n${substitute(block('checkAndStart').text, loopback)}`, project, baseEnv)
      const host = `localhost:${loopback.frontPort}`
      try {
        await waitUntil(async () => (await get(loopback.appPort, '/health/live', { host })).status === 200, 'npm start did not answer /health/live', 60_000, app.output)
        assert.match(app.output(), /Configuration: valid/)
        assert.match(app.output(), /Environment: +Production/)
        assert.match(app.output(), /:OpenIdConnect:ClientSecret +from environment/)
        await waitUntil(async () => (await get(loopback.appPort, '/health/ready', { host })).status === 200, '/health/ready did not become 200 (discovery over TLS)', 30_000, app.output)
        assert.match((await get(loopback.appPort, '/Account/Login', { host })).body, /Example ID/)
        const challenge = await get(loopback.appPort, '/', { host })
        assert.equal(challenge.status, 302)
        const authorize = new URL(challenge.location)
        assert.equal(authorize.origin, `https://localhost:${loopback.idpPort}`)
        assert.equal(authorize.searchParams.get('redirect_uri'), `https://${host}/signin-oidc`)

        // observe.md, step 3, through the app's TLS origin with curl.
        const probe = await run('sh', ['-ec', substitute(block('readiness').text, loopback)], { cwd: project, env: baseEnv, timeoutMs: 30_000 })
        assert.equal(probe.status, 0, probe.stderr)
        const readiness = JSON.parse(probe.stdout)
        assert.equal(readiness.checks?.providers?.status, 'Healthy', probe.stdout)
        assert.doesNotMatch(probe.stdout, /OpenIdConnect|Example ID/)
      } finally {
        await app.stop()
        rmSync(join(project, 'appsettings.Production.json'), { force: true })
      }
      noSecretIn(app.output())
    })

    test('protect-an-api: a client-credentials token from the IdP\'s token endpoint (curl, jq), then the API answers 200 with its JSON', { timeout: 3 * 60_000 }, async () => {
      const settings = readGuideJson('protect-an-api.md', /"Type": "JwtBearer"(?![\s\S]*"Introspection")/)
      writeFileSync(join(project, 'appsettings.Production.json'), substitute(settings, loopback))
      const app = startCommand('npm start', project, baseEnv)
      const host = `localhost:${loopback.frontPort}`
      try {
        await waitUntil(async () => (await get(loopback.appPort, '/health/ready', { host })).status === 200, 'the app with the JwtBearer scheme did not become ready', 60_000, app.output)
        const call = await run('sh', ['-ec', substitute(block('callApi').text, loopback)], { cwd: project, env: baseEnv, timeoutMs: 60_000 })
        assert.equal(call.status, 0, call.stdout + call.stderr)
        assert.equal(issuedTokens.length, 1, `the IdP issued one access token:\n${call.stdout}${call.stderr}`)
        assert.match(call.stdout, /^HTTP\/[\d.]+ 200/)
        assert.match(call.stdout, /\ncontent-type: application\/json/i)
        assert.deepEqual(JSON.parse(call.stdout.slice(call.stdout.indexOf('\r\n\r\n') + 4)), { applicationName: options.name, apiVersion: '1.0' })
      } finally {
        await app.stop()
        rmSync(join(project, 'appsettings.Production.json'), { force: true })
      }
      noSecretIn(app.output())
    })
  })
}

/**
 * The ```ts typecheck blocks of the guides in `guidesDir`, each as a module (the core's
 * test/docs/guides.test.ts reads them the same way: a fence indented under a step loses that
 * indentation).
 * @param {string} guidesDir
 * @returns {Array<{ guide: string, line: number, text: string }>}
 */
export function typeScriptBlocks (guidesDir) {
  /** @type {Array<{ guide: string, line: number, text: string }>} */
  const found = []
  for (const guide of readdirSync(guidesDir).filter((file) => file.endsWith('.md')).sort()) {
    const markdown = readFileSync(join(guidesDir, guide), 'utf8')
    for (const match of markdown.matchAll(/^( *)```ts typecheck\n([\s\S]*?)^\1```$/gm)) {
      const indent = match[1] ?? ''
      const text = (match[2] ?? '').split('\n').map((row) => row.startsWith(indent) ? row.slice(indent.length) : row).join('\n')
      found.push({ guide, line: markdown.slice(0, match.index).split('\n').length, text })
    }
  }
  return found
}

/**
 * The guides' TypeScript, compiled where a team puts it (issue 40, item 9): every ```ts typecheck
 * block of the guides the installed core carries, as a file of the generated app beside its own
 * src/, typechecked with the app's tsconfig.json against the packed core's published types (the
 * core's own test compiles them against its sources, where every module is in the program). One
 * tsc run, in the app of the end-to-end test.
 * @param {Pick<GuideCommandsOptions, 'project' | 'env' | 'skip'>} options
 */
export function describeGuideTypeScript (options) {
  describe('the guides\' TypeScript compiles in the generated app, against the installed core\'s types', { skip: options.skip }, () => {
    test('tsc with the app\'s tsconfig.json reports nothing for its src/ and every ```ts typecheck block', { timeout: 3 * 60_000 }, async () => {
      const project = options.project()
      const output = join(project, 'test', 'output', 'guides-typecheck')
      rmSync(output, { recursive: true, force: true })
      mkdirSync(output, { recursive: true })
      try {
        const blocks = typeScriptBlocks(join(project, 'node_modules', '@project-template', 'core', 'docs', 'guides'))
        assert.ok(blocks.length >= 5, `only ${blocks.length} TypeScript blocks`)
        const files = blocks.map((block, index) => {
          const file = `${block.guide.replace(/\.md$/, '')}-${block.line}-${index}.ts`
          // Each block is a module of its own (an example may declare what another declares too).
          writeFileSync(join(output, file), `${block.text}\nexport {}\n`)
          return file
        })
        writeFileSync(join(output, 'tsconfig.json'), JSON.stringify({
          extends: '../../../tsconfig.json',
          compilerOptions: { noEmit: true, noUnusedLocals: false, noUnusedParameters: false, rootDir: '../../..' },
          include: ['../../../src/**/*.ts', ...files]
        }))
        const tsc = await run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', join(output, 'tsconfig.json')], { cwd: project, env: options.env, timeoutMs: 2 * 60_000 })
        assert.equal(tsc.stdout + tsc.stderr, '', `the guides' TypeScript does not compile in the generated app (files in ${output}):`)
        assert.equal(tsc.status, 0)
      } finally {
        rmSync(output, { recursive: true, force: true })
      }
    })
  })
}

/**
 * The one ```json appsettings block of `guide` whose text matches `match`.
 * @param {string} guide
 * @param {RegExp} match
 */
function readGuideJson (guide, match) {
  const markdown = readFileSync(join(GUIDES_DIR, guide), 'utf8')
  const found = [...markdown.matchAll(/^( *)```json appsettings[^\n]*\n([\s\S]*?)^\1```$/gm)].map((m) => m[2] ?? '').filter((text) => match.test(text))
  assert.equal(found.length, 1, `${guide}: ${found.length} configuration blocks match ${match}`)
  return found[0] ?? ''
}
