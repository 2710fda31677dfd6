// @ts-check
/**
 * The deployment files of a generated project and the generator's command-line ergonomics around
 * them: the Dockerfile passes a real linter (dockerfile-utils, from the npm registry) and keeps
 * the image's promises (multi-stage, non-root, HOST=0.0.0.0 only inside, a /health/live
 * healthcheck, node as PID 1, nothing secret copied); .dockerignore keeps secrets out of the build
 * context; compose.yaml runs two instances, Redis and a proxy with no secret written in it;
 * `npm run new` never puts the project inside the checkout; a mistyped option gets a suggestion.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { closestOption } from '../lib/cli.mjs'
import { BIN, PACKAGE_DIR, childEnv, generate, run, tempDir } from './helpers.mjs'

const require = createRequire(import.meta.url)
const LINTER = join(dirname(require.resolve('dockerfile-utils/package.json')), 'bin', 'dockerfile-utils')

const sandbox = tempDir('cpt-deploy-')
const project = join(sandbox, 'shop-front')
const read = (/** @type {string} */ path) => readFileSync(join(project, path), 'utf8')

before(async () => {
  const result = await generate(['shop-front', '--skip-install'], { cwd: sandbox })
  assert.equal(result.status, 0, result.stderr)
})
after(() => rmSync(sandbox, { recursive: true, force: true }))

describe('Dockerfile', () => {
  test('passes dockerfile-utils lint, and the linter does fail on a broken Dockerfile', async () => {
    const clean = await run(process.execPath, [LINTER, 'lint', join(project, 'Dockerfile')])
    assert.equal(clean.status, 0, `${clean.stdout}${clean.stderr}`)
    const broken = join(sandbox, 'Broken.Dockerfile')
    await import('node:fs').then(({ writeFileSync }) => { writeFileSync(broken, `${read('Dockerfile')}\nEXPOSE not-a-port\n`) })
    const failed = await run(process.execPath, [LINTER, 'lint', broken])
    assert.equal(failed.status, 1)
    assert.match(failed.stdout, /Invalid containerPort: not-a-port/)
  })

  test('two stages on a maintained Node line; the runtime runs as node, listens on 0.0.0.0 inside only, checks /health/live, runs node as PID 1', () => {
    const text = read('Dockerfile')
    assert.deepEqual([...text.matchAll(/^FROM (\S+) AS (\w+)$/gm)].map((match) => [match[1], match[2]]), [['node:22-bookworm-slim', 'build'], ['node:22-bookworm-slim', 'runtime']])
    const runtime = text.slice(text.indexOf('AS runtime'))
    assert.match(runtime, /^USER node$/m)
    assert.match(runtime, /HOST=0\.0\.0\.0/)
    assert.doesNotMatch(text.slice(0, text.indexOf('AS runtime')), /HOST=/, 'HOST is set for the runtime stage only')
    assert.match(runtime, /^HEALTHCHECK .*\n\s+CMD \["node", "-e", ".*\/health\/live/m)
    assert.match(runtime, /^CMD \["node", "--enable-source-maps", "dist\/server\.js"\]$/m)
    assert.doesNotMatch(runtime, /node_modules|npm (start|ci|install)/, 'the runtime needs no install: dist/ is self-contained')
    for (const copied of runtime.matchAll(/^COPY (?:--from=\w+ )?(\S+)/gm)) {
      assert.doesNotMatch(copied[1] ?? '', /\.keys|\.env|secret|\.pem|\.key$/i, copied[0])
    }
  })

  test('the build stage copies vendor/ (the packed core) before installing, and .dockerignore lets it in', () => {
    const build = read('Dockerfile').slice(0, read('Dockerfile').indexOf('AS runtime'))
    const install = build.search(/^RUN .*npm ci/m)
    assert.ok(install > 0, 'the build stage installs')
    assert.ok(build.indexOf('COPY package*.json ./\n') < install)
    assert.match(build.slice(0, install), /^COPY vendor \.\/vendor$/m)
    assert.ok(!read('.dockerignore').split('\n').some((entry) => /^\/?vendor/.test(entry)))
  })

  test('.dockerignore keeps keys, .env, secrets, node_modules and the Development settings out of the build context', () => {
    const ignored = read('.dockerignore').split('\n')
    for (const entry of ['.keys', '.env', '.env.*', 'secrets.json', '*.secrets.json', '*.pem', '*.key', 'node_modules', 'dist', 'appsettings.Development.json', 'deploy/certs', '.git']) {
      assert.ok(ignored.includes(entry), entry)
    }
  })
})

describe('compose.yaml and the proxy', () => {
  test('two app instances from the Dockerfile, Redis as the shared state store, nginx in front; no secret value written', () => {
    const text = read('compose.yaml')
    assert.match(text, /^ {2}app1: \*app$/m)
    assert.match(text, /^ {2}app2: \*app$/m)
    assert.match(text, /^ {4}ShopFront__State__Provider: Redis$/m)
    assert.match(text, /^ {4}ShopFront__State__Redis__ConnectionString: redis:\/\/:\$\{REDIS_PASSWORD:\?[^}]+\}@redis:6379$/m)
    assert.match(text, /^ {4}ShopFront__DataProtection__Keys__0: \$\{DATA_PROTECTION_KEY:\?/m)
    assert.match(text, /^ {4}ShopFront__ForwardedHeaders__KnownProxies__0: 172\.30\.0\.10$/m)
    assert.match(text, /^ {2}redis:\n {4}image: redis:/m)
    assert.match(text, /^ {2}proxy:\n {4}image: nginx:/m)
    assert.match(text, /ipv4_address: 172\.30\.0\.10/)
  })

  test('production-shaped: the public https origin, Redis with a password from a compose secret and AOF persistence, a drain-sized grace period', () => {
    const text = read('compose.yaml')
    assert.match(text, /^ {4}ShopFront__Hosting__PublicOrigin: \$\{PUBLIC_ORIGIN:\?[^}]*https[^}]*\}$/m)
    assert.match(text, /^ {2}stop_grace_period: 30s$/m)
    // requirepass read from the secret at start, never written in the file or in the process arguments.
    assert.match(text, /printf 'requirepass %s\\n' "\$\$\(cat \/run\/secrets\/redis_password\)" > \/tmp\/redis-secret\.conf/)
    assert.match(text, /exec docker-entrypoint\.sh redis-server \/tmp\/redis-secret\.conf --appendonly yes --appendfsync everysec/)
    assert.match(text, /^ {4}secrets: \[redis_password\]$/m)
    assert.match(text, /^secrets:\n {2}redis_password:\n {4}environment: REDIS_PASSWORD$/m)
    assert.match(text, /^ {6}- redis-data:\/data$/m)
    assert.match(text, /REDISCLI_AUTH=\$\$\(cat \/run\/secrets\/redis_password\) redis-cli ping/)
    assert.doesNotMatch(text, /--requirepass|--appendonly no/)
    // Every value that is a secret is a variable reference, nothing literal.
    for (const line of text.split('\n').filter((entry) => !entry.trim().startsWith('#') && /Keys__0|ConnectionString|requirepass/.test(entry))) {
      assert.match(line, /\$\{?\$?\(?[A-Z_]|\/run\/secrets\//, line)
    }
  })

  test('nginx terminates TLS, balances both instances, sets the forwarded headers and keeps the probes internal', () => {
    const text = read('deploy/nginx.conf')
    assert.match(text, /server app1:8080 max_fails=0;/)
    assert.match(text, /server app2:8080 max_fails=0;/)
    assert.match(text, /listen 443 ssl http2;/)
    assert.match(text, /proxy_set_header X-Forwarded-Proto https;/)
    assert.match(text, /location \/health \{\n\s+return 404;/)
    // Rolling restarts: idempotent requests retried on the next instance, never a POST once sent.
    assert.match(text, /^ {8}proxy_next_upstream error timeout http_502 http_503;$/m)
    assert.doesNotMatch(text, /^ +proxy_next_upstream .*non_idempotent|^ +server .*max_fails=[1-9]/m)
    // The app's largest response headers (about 2.3 KB) fit with room: never left at one memory page.
    assert.match(text, /^ {8}proxy_buffer_size 8k;\n {8}proxy_buffers 8 8k;$/m)
    // packages/core/test/deploy/rolling-restart.test.ts runs this file in Debian's nginx.
    assert.ok(existsSync(join(project, 'docs', 'deployment.md')))
    assert.match(read('.gitignore'), /^deploy\/certs\/$/m)
  })
})

describe('command line', () => {
  test('a mistyped option names the closest valid one', async () => {
    assert.equal(closestOption('--authprovider'), '--authProvider')
    assert.equal(closestOption('--auth-provider'), '--authProvider')
    assert.equal(closestOption('--skipinstall'), '--skip-install')
    assert.equal(closestOption('--froce'), '--force')
    assert.equal(closestOption('--colour'), undefined)
    const result = await generate(['x-app', '--auth-provider', 'none'], { cwd: sandbox })
    assert.equal(result.status, 2)
    assert.match(result.stderr, /Unknown option --auth-provider\. Did you mean --authProvider\?/)
  })

  test('npm run new -- <dir> from the checkout creates the project beside the checkout, and says so', async () => {
    const checkout = join(PACKAGE_DIR, '..', '..')
    const name = `cpt-beside-${process.pid}`
    const beside = join(dirname(checkout), name)
    try {
      const result = await run(process.execPath, [BIN, name, '--skip-install'], {
        cwd: checkout,
        env: childEnv({ npm_lifecycle_event: 'new', INIT_CWD: checkout })
      })
      assert.equal(result.status, 0, result.stderr)
      assert.ok(existsSync(join(beside, 'package.json')), 'not created beside the checkout')
      assert.ok(!existsSync(join(checkout, name)), 'created inside the checkout')
      assert.match(result.stdout, new RegExp(`is inside the template's checkout .*; creating the project beside it instead: ${beside.replaceAll('/', '\\/')}`))
      assert.equal(basename(beside), name)
    } finally {
      rmSync(beside, { recursive: true, force: true })
    }
  })
})
