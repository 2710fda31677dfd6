/**
 * `@project-template/core/testing` (src/testing/index.ts), as an app's tests meet it: the starter
 * app built for `inject` from its own root with configuration overrides and a fresh key ring, a
 * signed-in session for given claims that a named policy admits or refuses, a configuration
 * error that names the key. And the boundary: the package's main entry never reaches it (so no
 * production bundle carries the test sign-in route or oidc-provider), `./testing` is its own
 * export, oidc-provider only an optional peer, and the packed manifest has no install script.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { copyFileSync, existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { loadConfiguration } from '../../src/configuration.js'
import { build, buildTestApp, claim, loadTestConfiguration, signIn, TEST_SIGN_IN_PATH } from '../../src/testing/index.js'
import { buildApp } from '../../../../template/src/app.js'
import { APP_ROOT, CORE_ROOT } from '../helpers/app.js'
import { createContentRoot, settingsFile } from '../helpers/content-root.js'

const ADMINISTRATION = '/api/application-information/administration'
const reader = [claim('application:subject', 'user-7'), claim('application:name', 'Grace'), claim('application:role', 'Reader')]
const administrator = [...reader, claim('application:role', 'Administrator')]

describe('building an app with @project-template/core/testing', () => {
  test('a signed-in session for given claims: the administrator role policy admits an administrator (200) and refuses a reader (403)', async (context) => {
    const { app } = await build(context, { buildApp, contentRoot: APP_ROOT })
    const admin = await app.inject({ url: ADMINISTRATION, headers: { cookie: await signIn(app, administrator), accept: 'application/json' } })
    assert.equal(admin.statusCode, 200)
    assert.deepEqual(admin.json(), { subject: 'user-7', name: 'Grace' })
    const refused = await app.inject({ url: ADMINISTRATION, headers: { cookie: await signIn(app, reader), accept: 'application/json' } })
    assert.equal(refused.statusCode, 403)
    assert.equal((refused.json() as { code?: string }).code, 'APP_ERR_AUTH_FORBIDDEN')
    const anonymous = await app.inject({ url: ADMINISTRATION, headers: { accept: 'application/json' } })
    assert.equal(anonymous.statusCode, 401)
  })

  test('configuration overrides are applied over the closed posture; the state store is in memory', async (context) => {
    const { loaded } = await build(context, { buildApp, contentRoot: APP_ROOT, settings: { Authentication: { Cookie: { ExpireMinutes: 7 } } } })
    assert.equal(loaded.config.Authentication.Cookie.ExpireMinutes, 7)
    assert.equal(loaded.config.Authorization.RequireAuthenticatedUserByDefault, true)
    assert.equal(loaded.config.State.Embedded.Persist, false)
  })

  test('each app gets its own test key ring: a session cookie of one app is anonymous in another', async (context) => {
    const first = await build(context, { buildApp, contentRoot: APP_ROOT })
    const second = await build(context, { buildApp, contentRoot: APP_ROOT })
    const cookie = await signIn(first.app, administrator)
    assert.equal((await first.app.inject({ url: ADMINISTRATION, headers: { cookie, accept: 'application/json' } })).statusCode, 200)
    assert.equal((await second.app.inject({ url: ADMINISTRATION, headers: { cookie, accept: 'application/json' } })).statusCode, 401)
  })

  test('testSignIn: false registers no test sign-in route (the route falls under the fallback policy: 401)', async (context) => {
    const { app } = await build(context, { buildApp, contentRoot: APP_ROOT, testSignIn: false })
    const response = await app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, headers: { accept: 'application/json' }, payload: { claims: reader } })
    assert.equal(response.statusCode, 401)
  })

  test('a developer\'s appsettings.Development.json, appsettings.Production.json and user secrets never reach a test: the test\'s own settings load alone (issue 40, item 8)', () => {
    const content = createContentRoot()
    try {
      copyFileSync(join(APP_ROOT, 'appsettings.json'), join(content.root, 'appsettings.json'))
      // What the app's docs have a developer write for a local Keycloak: a scheme named as a test names its own.
      const local = settingsFile({ Authentication: { Schemes: { Api: { Type: 'JwtBearer', Authority: 'http://localhost:8080/realms/dev', Audiences: ['project-template-api'] } } } })
      content.writeJson('appsettings.Development.json', local)
      content.writeJson('appsettings.Production.json', local)
      content.writeUserSecrets(settingsFile({ Logging: { Level: 'trace' } }))
      const env = { XDG_CONFIG_HOME: content.configHome }
      // Startup reads them (they are real settings) ...
      const api = (loaded: { config: { Authentication: { Schemes: Record<string, unknown> } } }): Record<string, unknown> | undefined => loaded.config.Authentication.Schemes.Api as Record<string, unknown> | undefined
      assert.equal(api(loadConfiguration({ contentRoot: content.root, env: { ...env, NODE_ENV: 'development' } }))?.Authority, 'http://localhost:8080/realms/dev')
      // ... a test, in either environment, does not: its own scheme of the same name loads without a conflict.
      const own = { Hosting: { PublicOrigin: 'https://app.test.example' }, Authentication: { Schemes: { Api: { Type: 'JwtBearer', Issuer: 'https://login.test.example', JwksUri: 'https://login.test.example/jwks', Audiences: ['test-api'] } } } }
      for (const nodeEnv of ['development', undefined]) {
        const loaded = loadTestConfiguration({ contentRoot: content.root, settings: own, ...(nodeEnv === undefined ? {} : { nodeEnv }) })
        assert.deepEqual(loaded.errors, [], String(nodeEnv))
        assert.deepEqual(loaded.sources, ['appsettings.json', 'environment'])
        assert.equal(api(loaded)?.Authority, '')
        assert.deepEqual(api(loaded)?.Audiences, ['test-api'])
        assert.equal(loaded.config.Logging.Level, 'info')
      }
    } finally {
      content.remove()
    }
  })

  test('an invalid override throws before building, naming the key under the root key', async () => {
    await assert.rejects(buildTestApp({ buildApp, contentRoot: APP_ROOT, settings: { Authentication: { Cookie: { ExpireMinutes: 'soon' } } } }),
      (error: Error) => error.message.startsWith('test configuration invalid: ') && error.message.includes('ProjectTemplate:Authentication:Cookie:ExpireMinutes'))
  })
})

/** Relative imports of a TypeScript source, resolved to .ts files. */
function importsOf (file: string): string[] {
  const source = readFileSync(file, 'utf8')
  const found: string[] = []
  for (const match of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)|(?:^|\n)import\s+'([^']+)'/g)) {
    const specifier = match[1] ?? match[2] ?? match[3] ?? ''
    found.push(specifier)
  }
  return found
}

describe('the testing entry point is apart from the production import graph', () => {
  test('nothing reachable from src/index.ts is under src/testing/, imports oidc-provider or node:test', () => {
    const seen = new Set<string>()
    const external = new Set<string>()
    const pending = [join(CORE_ROOT, 'src', 'index.ts')]
    for (let steps = 0; pending.length > 0 && steps < 2_000; steps++) {
      const file = pending.pop()!
      if (seen.has(file)) continue
      seen.add(file)
      for (const specifier of importsOf(file)) {
        if (!specifier.startsWith('.')) { external.add(specifier); continue }
        const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))
        if (existsSync(target)) pending.push(target)
      }
    }
    assert.ok(seen.size > 50, `the walk reached the core (${seen.size} files)`)
    assert.deepEqual([...seen].map((file) => relative(CORE_ROOT, file)).filter((file) => file.startsWith('src/testing/')), [])
    assert.equal(external.has('oidc-provider'), false)
    assert.equal(external.has('node:test'), false)
    assert.equal(external.has('node:assert/strict'), false)
  })

  test('package.json: ./testing is its own export, oidc-provider an optional peer, and no script runs when the packed core is installed', () => {
    const manifest = JSON.parse(readFileSync(join(CORE_ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, { types?: string, default?: string }>
      scripts: Record<string, string>
      dependencies: Record<string, string>
      peerDependencies?: Record<string, string>
      peerDependenciesMeta?: Record<string, { optional?: boolean }>
      files: string[]
    }
    assert.deepEqual(manifest.exports['./testing'], { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' })
    assert.equal(manifest.dependencies['oidc-provider'], undefined)
    assert.equal(typeof manifest.peerDependencies?.['oidc-provider'], 'string')
    assert.equal(manifest.peerDependenciesMeta?.['oidc-provider']?.optional, true)
    // npm runs these when a package is installed (prepare too, for a directory or git dependency).
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal(manifest.scripts[script], undefined, script)
    assert.ok(manifest.files.includes('dist'), 'the built dist is shipped')
  })
})
