// @ts-check
/**
 * Everything a generated app shows is true inside that app (issue 26, item 8): its README and
 * every docs/*.md it ships are read, and every relative link and every path they name (src/,
 * test/, docs/, public/, deploy/, vendor/, .github/, and node_modules/@project-template/core/...)
 * resolves in the generated project, the core's paths inside the packed core it carries in
 * vendor/ (what `npm install` puts under node_modules). No document names a path of the monorepo
 * (packages/..., template/...). The hints the app prints (check-config's "Providers" line, the
 * startup log's `authentication.no_provider`) are checked the same way.
 *
 * The core's documents are checked as they land in the app, read from the packed core at
 * node_modules/@project-template/core/ (docs/*.md, README.md, CHANGELOG.md, SECURITY.md): every
 * relative link, every path with a top-level prefix and every backticked file path (`x/y.ts`,
 * `dir/`) resolves in the app or in the packed core, which ships dist/, docs/ and its top-level
 * files but not src/ (issue 33, item 10). The core's tests are not shipped either: a `test/...`
 * path the app does not have must be a test of the core's repository, and the document must say
 * where they are (a link to the repository's packages/core/test).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CORE_PACKAGE } from '../lib/core-package.mjs'
import { REPOSITORY_ADDRESS } from '../lib/naming.mjs'
import { PACKAGE_DIR, checkoutCore, generate, tempDir } from './helpers.mjs'

const CORE_DIR = join(PACKAGE_DIR, '..', 'core')
const CORE_PREFIX = `node_modules/${CORE_PACKAGE}/`

/** Paths a document names that exist only once the app is built, run or deployed (and why). */
const CREATED_LATER = new Map([
  ['deploy/certs', 'the operator puts the local TLS certificate there (docs/deployment.md)'],
  ['test/output', 'written by test runs'],
  ['dist/THIRD-PARTY-NOTICES.txt', 'written by npm run bundle'],
  ['src/routes/orders.ts', 'the core README\'s worked example has the reader write it']
])

/** A path that starts at a top-level entry of the app: `src/app.ts`, `docs/`, `node_modules/@project-template/core/docs/x.md`. */
const PATH = /(?<![\w/.@<>-])((?:src|test|docs|public|deploy|vendor|node_modules|\.github)\/[\w@.*/-]*)/g
/** A Markdown link's target. */
const LINK = /\]\(([^)\s]+)\)/g
/** A backticked file path in a core document: a name with a `/` and an extension, or a directory (`dist/`). */
const BACKTICKED_FILE = /`((?:\.\.?\/)*[\w@-][\w@.-]*\/(?:[\w@.*-]+\/)*(?:[\w@*-][\w@.*-]*\.[a-z]{1,5}|))`/g
/** Top-level prefixes of the packed core that core documents name (besides the app's). */
const CORE_PATH = /(?<![\w/.@<>-])((?:dist|etc)\/[\w@.*/-]*)/g
/** A path of the monorepo, which no generated document may name. */
const MONOREPO_PATH = /(?<![\w@/.-])(packages\/(core|create-project-template)|template\/|\.\.\/\.\.\/)/

/** An http URL of the app itself on loopback (one of its routes), with its port. */
const APP_URL = /http:\/\/(?:localhost|127\.0\.0\.1|\[::1\]):(\d+)\/(?:api\/|\.well-known\/|health|Account\/|signin-oidc|Saml2\/|External\/)/gi
/** A setting that points the app at an identity provider over http (accepted on loopback, in Development only). */
const LOOPBACK_HTTP_IDP = /(?:"(?:Authority|MetadataUrl|Issuer|JwksUri)"\s*:\s*"|__(?:Authority|MetadataUrl|Issuer|JwksUri)=)http:\/\//

const sandbox = tempDir('cpt-docs-')
const project = join(sandbox, 'acme-portal')
/** @type {Set<string>} */
let packedCore = new Set()

before(async () => {
  const result = await generate(['acme-portal', '--skip-install'], { cwd: sandbox })
  assert.equal(result.status, 0, result.stderr)
  const tarball = join(project, 'vendor', checkoutCore().fileName)
  packedCore = new Set(execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter((line) => line !== '').map((line) => line.replace(/^package\//, '')))
  // What `npm install` puts under node_modules: the packed core's files, read as the app has them.
  const installed = join(project, CORE_PREFIX)
  mkdirSync(installed, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
})
after(() => rmSync(sandbox, { recursive: true, force: true }))

/** The core's documents as the app has them, relative to the project (read from the packed core). */
function coreDocuments () {
  return [...packedCore].filter((entry) => /^docs\/(?:guides\/|providers\/|security\/)?[\w-]+\.md$/.test(entry) || /^[A-Z]+\.md$/.test(entry)).sort().map((entry) => `${CORE_PREFIX}${entry}`)
}

/** The documents the app ships: README.md and docs/*.md, relative to the project. */
function documents () {
  return ['README.md', ...readdirSync(join(project, 'docs')).filter((file) => file.endsWith('.md')).map((file) => `docs/${file}`)]
}

/**
 * True when `path` (relative to the project, `/`-separated) exists in the generated project, or,
 * under node_modules/@project-template/core/, in the packed core (a file, or a directory prefix).
 * A `*` matches any characters within one name (`appsettings*.json`).
 * @param {string} path
 */
function resolves (path) {
  const clean = path.replace(/[.,;:]+$/, '')
  if (clean.startsWith(CORE_PREFIX)) {
    const inside = clean.slice(CORE_PREFIX.length).replace(/\/$/, '')
    return inside === '' || packedCore.has(inside) || [...packedCore].some((entry) => entry.startsWith(`${inside}/`))
  }
  if (clean === 'node_modules/' || clean === `${CORE_PREFIX.slice(0, -1)}`) return true
  if (clean.includes('*')) {
    const directory = dirname(clean)
    const pattern = new RegExp(`^${clean.slice(directory === '.' ? 0 : directory.length + 1).replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`)
    return existsSync(join(project, directory)) && readdirSync(join(project, directory)).some((name) => pattern.test(name))
  }
  return existsSync(join(project, clean))
}

/** The core's tests in the repository (not shipped), relative to the core: `test/security/csrf.test.ts`. */
const CORE_REPOSITORY_TESTS = `${REPOSITORY_ADDRESS}/tree/main/packages/core/test`
/** A link into them: the folder, or one test file. */
const CORE_REPOSITORY_TEST_LINK = new RegExp(`\\]\\(${REPOSITORY_ADDRESS.replace(/[.]/g, '\\.')}/(tree|blob)/main/packages/core/test[/)]`)

/**
 * What is wrong with a path a core document (`file`, under node_modules/@project-template/core/)
 * names, or undefined when it resolves: in the app (`src/app.ts`, `docs/configuration.md`), in
 * the packed core (`docs/security.md`, `dist/index.js`), or, for a test of the core, in the
 * core's repository when the document links there.
 * @param {string} file
 * @param {string} text
 * @param {string} path
 */
function coreReferenceProblem (file, text, path) {
  if (resolves(path) || resolves(`${CORE_PREFIX}${path}`)) return undefined
  const clean = path.replace(/[.,;:]+$/, '').replace(/\*.*$/, '')
  if (clean.startsWith('test/') && existsSync(join(CORE_DIR, clean))) {
    return CORE_REPOSITORY_TEST_LINK.test(text) ? undefined : `a test of the core's repository, and ${file} does not link ${CORE_REPOSITORY_TESTS}`
  }
  return 'not in the app nor in the packed core'
}

/**
 * Every path and relative link `text` (the document at `file`) names, each as a path relative to the project.
 * @param {string} file
 * @param {string} text
 */
function referencesOf (file, text) {
  /** @type {Array<{ named: string, path: string }>} */
  const found = []
  for (const match of text.matchAll(PATH)) {
    const named = match[1]
    if (named === undefined) continue
    // A path with a placeholder (`vendor/project-template-core-<version>.tgz`): its directory part only.
    const placeholder = text[(match.index ?? 0) + match[0].length] === '<'
    const path = placeholder ? named.slice(0, named.lastIndexOf('/') + 1) : named
    found.push({ named, path })
  }
  for (const [, target] of text.matchAll(LINK)) {
    if (target === undefined || /^(https?:|mailto:|#)/.test(target)) continue
    const withoutAnchor = target.replace(/#.*$/, '')
    found.push({ named: target, path: relative(project, normalize(join(project, dirname(file), withoutAnchor))).split('\\').join('/') })
  }
  return found
}

describe('the generated app\'s documents name only what the app has', () => {
  test('README.md and docs/*.md are all read (a check that read nothing would pass)', () => {
    assert.deepEqual(documents(), ['README.md', 'docs/authorization.md', 'docs/configuration.md', 'docs/deployment.md', 'docs/testing.md', 'docs/upgrading.md'])
  })

  test('every relative link and every path they name resolves in the app or in the packed core', () => {
    /** @type {string[]} */
    const broken = []
    let checked = 0
    for (const file of documents()) {
      const text = readFileSync(join(project, file), 'utf8')
      for (const { named, path } of referencesOf(file, text)) {
        if ([...CREATED_LATER.keys()].some((prefix) => path.startsWith(prefix))) continue
        checked++
        if (!resolves(path)) broken.push(`${file}: ${named}`)
      }
    }
    assert.deepEqual(broken, [])
    assert.ok(checked >= 30, `only ${checked} references were checked`)
  })

  test('no document names a path of the monorepo (packages/..., template/...)', () => {
    for (const file of documents()) {
      const lines = readFileSync(join(project, file), 'utf8').split('\n')
      assert.deepEqual(lines.filter((line) => MONOREPO_PATH.test(line)), [], file)
    }
  })

  test('the allowlist of public routes is the app\'s own test, and code examples import the core by its package name', () => {
    const authorization = readFileSync(join(project, 'docs', 'authorization.md'), 'utf8')
    assert.match(authorization, /`ANONYMOUS_ROUTES` in\n`test\/authorization\.test\.ts`/)
    assert.match(readFileSync(join(project, 'test', 'authorization.test.ts'), 'utf8'), /const ANONYMOUS_ROUTES = \[/)
    // The core by its package name; the app's own modules (the sign-in hook's data access) relative.
    const imports = [...authorization.matchAll(/^import .* from '([^']+)'/gm)].map((match) => match[1])
    assert.ok(imports.includes(CORE_PACKAGE), 'an example imports the core')
    assert.deepEqual(imports.filter((specifier) => specifier !== CORE_PACKAGE && !specifier?.startsWith('./')), [])
  })

  test('links to the repository (its documents, the core\'s tests) keep the repository\'s address (not renamed) and name a file it has', async () => {
    const documentation = await import(pathToFileURL(join(CORE_DIR, 'dist', 'documentation.js')).href)
    assert.equal(documentation.REPOSITORY_DOCS_URL, `${REPOSITORY_ADDRESS}/blob/main/docs`)
    assert.equal(JSON.parse(readFileSync(join(CORE_DIR, 'package.json'), 'utf8')).repository.url, `git+${REPOSITORY_ADDRESS}.git`)
    // A document the core ships is named where the app has it, one it does not by its address.
    assert.equal(documentation.asApplicationReferences('docs/scale-out.md'), `${CORE_PREFIX}docs/scale-out.md`)
    assert.equal(documentation.asApplicationReferences('docs/providers/jwt-bearer.md.'), `${CORE_PREFIX}docs/providers/jwt-bearer.md.`)
    assert.equal(documentation.asApplicationReferences('docs/security/federation.md,'), `${CORE_PREFIX}docs/security/federation.md,`)
    assert.equal(documentation.asApplicationReferences('docs/performance.md'), `${documentation.REPOSITORY_DOCS_URL}/performance.md`)
    /** @type {string[]} */
    const found = []
    for (const file of [...documents(), ...coreDocuments()]) {
      for (const [url] of readFileSync(join(project, file), 'utf8').matchAll(/https:\/\/github\.com\/[^\s)`|>]+?\/(?:blob|tree)\/[^\s)`|>]+/g)) found.push(url)
    }
    assert.ok(found.length >= 5, `repository links: ${found.join(', ')}`)
    for (const url of found) {
      assert.ok(url.startsWith(`${REPOSITORY_ADDRESS}/`), url)
      const inside = /^\/(?:blob|tree)\/main\/(.+?)(?:#.*)?$/.exec(url.slice(REPOSITORY_ADDRESS.length))?.[1]
      assert.ok(inside !== undefined && existsSync(join(CORE_DIR, '..', '..', inside)), `${url} names no file of the repository`)
    }
  })

  test('the core\'s documents are all read as the app has them (a check that read nothing would pass)', () => {
    assert.deepEqual(coreDocuments().map((file) => file.slice(CORE_PREFIX.length)), [
      'CHANGELOG.md', 'README.md', 'SECURITY.md',
      'docs/audit-events.md', 'docs/errors.md', 'docs/events.md',
      'docs/guides/README.md', 'docs/guides/add-an-identity-provider.md', 'docs/guides/api-keys.md', 'docs/guides/call-another-api.md', 'docs/guides/customers-idps-at-runtime.md', 'docs/guides/enterprise.md',
      'docs/guides/get-started.md', 'docs/guides/observe.md', 'docs/guides/production-checklist.md', 'docs/guides/protect-an-api.md', 'docs/guides/protect-an-mcp-server.md', 'docs/guides/provision-users.md',
      'docs/guides/several-instances.md', 'docs/guides/several-providers.md',
      'docs/pages.md', 'docs/providers.md',
      'docs/providers/adfs.md', 'docs/providers/entra-id.md', 'docs/providers/github.md', 'docs/providers/google.md', 'docs/providers/jwt-bearer.md', 'docs/providers/keycloak.md',
      'docs/providers/oauth.md', 'docs/providers/okta.md', 'docs/providers/openid-connect.md', 'docs/providers/runtime-providers.md', 'docs/providers/saml2.md', 'docs/providers/several-providers.md',
      'docs/provisioning.md', 'docs/scale-out.md', 'docs/security.md',
      'docs/security/api-credentials.md', 'docs/security/federation.md', 'docs/security/keys-and-storage.md', 'docs/security/provisioning.md', 'docs/security/verification.md',
      'docs/telemetry.md'
    ])
    assert.ok(!packedCore.has('src/index.ts') && [...packedCore].every((entry) => !entry.startsWith('src/')), 'the core ships no src/')
  })

  test('in the core\'s documents, every relative link, path and backticked file path resolves in the app or the packed core', () => {
    /** @type {string[]} */
    const broken = []
    let checked = 0
    for (const file of coreDocuments()) {
      const text = readFileSync(join(project, file), 'utf8')
      // Links come relative to the project; a named path is tried in the app, then in the core.
      const found = referencesOf(file, text)
      for (const [, named] of text.matchAll(CORE_PATH)) if (named !== undefined) found.push({ named, path: named })
      for (const [, named] of text.matchAll(BACKTICKED_FILE)) if (named !== undefined) found.push({ named, path: named })
      for (const { named, path } of new Map(found.map((reference) => [reference.path, reference])).values()) {
        if ([...CREATED_LATER.keys()].some((prefix) => path.startsWith(prefix))) continue
        checked++
        const problem = coreReferenceProblem(file, text, path)
        if (problem !== undefined) broken.push(`${file.slice(CORE_PREFIX.length)}: ${named} (${problem})`)
      }
    }
    assert.deepEqual(broken, [])
    assert.ok(checked >= 150, `only ${checked} references were checked`)
  })

  test('every `npm run` command names a script of the app (in a core document: or of the core, run in its repository)', () => {
    const appScripts = Object.keys(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).scripts)
    const coreScripts = Object.keys(JSON.parse(readFileSync(join(CORE_DIR, 'package.json'), 'utf8')).scripts)
    /** @type {string[]} */
    const unknown = []
    let checked = 0
    for (const file of [...documents(), ...coreDocuments()]) {
      const text = readFileSync(join(project, file), 'utf8')
      const known = file.startsWith(CORE_PREFIX) && CORE_REPOSITORY_TEST_LINK.test(text) ? [...appScripts, ...coreScripts] : appScripts
      for (const [, script] of text.matchAll(/npm run (?:--silent )?([\w:-]+)/g)) {
        checked++
        if (script === undefined || !known.includes(script)) unknown.push(`${file}: npm run ${script}`)
      }
    }
    assert.deepEqual(unknown, [])
    assert.ok(checked >= 30, `only ${checked} commands were checked`)
  })

  test('every URL of the app on loopback has the port the app listens on, as its README states it (issue 40, item 13)', () => {
    const port = /starts the server on\nhttp:\/\/127\.0\.0\.1:(\d+) /.exec(readFileSync(join(project, 'README.md'), 'utf8'))?.[1]
    assert.equal(port, '5000')
    /** @type {string[]} */
    const wrong = []
    let checked = 0
    for (const file of [...documents(), ...coreDocuments()]) {
      const text = readFileSync(join(project, file), 'utf8')
      for (const [url, found] of text.matchAll(APP_URL)) {
        checked++
        if (found !== port) wrong.push(`${file}: ${url}`)
      }
    }
    assert.deepEqual(wrong, [])
    assert.ok(checked >= 5, `only ${checked} URLs were checked`)
  })

  test('a section that points the app at an IdP over http says it runs in Development (NODE_ENV=development or npm run dev) (issue 40, item 13)', () => {
    /** @type {string[]} */
    const unsaid = []
    let checked = 0
    for (const file of [...documents(), ...coreDocuments()]) {
      const text = readFileSync(join(project, file), 'utf8')
      for (const section of text.split(/\n(?=#{2,3} )/)) {
        if (!LOOPBACK_HTTP_IDP.test(section)) continue
        checked++
        if (!/NODE_ENV=development|npm run dev/.test(section)) unsaid.push(`${file}: ${section.split('\n')[0]}`)
      }
    }
    assert.deepEqual(unsaid, [])
    assert.ok(checked >= 3, `only ${checked} sections were checked`)
  })

  test('the admin endpoint example checks the anti-forgery token it claims, and shows where the token comes from', () => {
    const configuration = readFileSync(join(project, 'docs', 'configuration.md'), 'utf8')
    const example = configuration.slice(configuration.indexOf('An admin endpoint adds a customer'), configuration.indexOf('Removing a customer is'))
    assert.match(example, /anti-forgery check/)
    assert.match(example, /app\.post\('\/admin\/customers', \{ \.\.\.administrators, preHandler: app\.csrfProtection \}/)
    assert.match(example, /reply\.generateCsrf\(\{ userInfo: request\.user!\.ticket\.sessionId \}\)/)
    assert.match(example, /name="\$\{CSRF_FORM_FIELD\}" value="\$\{token\}"/)
    assert.match(example, /import \{ [^}]*CSRF_FORM_FIELD[^}]* \} from '@project-template\/core'/)
  })

  test('the runtime providers\' routes are pinned where an app pins its public routes', () => {
    const providers = readFileSync(join(project, CORE_PREFIX, 'docs', 'providers', 'runtime-providers.md'), 'utf8')
    assert.match(providers, /`GET\|POST \/Saml2\/:scheme\/Logout` \(all anonymous: an app with a\n {2}source adds them to its reviewed list, `ANONYMOUS_ROUTES` in `test\/authorization\.test\.ts`\)/)
    assert.doesNotMatch(providers, /anonymous-routes\.test\.ts/)
  })

  test('the core\'s documents the app cites are in the packed core', () => {
    for (const document of ['docs/providers.md', 'docs/providers/runtime-providers.md', 'docs/providers/jwt-bearer.md', 'docs/security.md', 'docs/security/keys-and-storage.md', 'docs/errors.md', 'docs/scale-out.md', 'etc/core.api.md', 'LICENSE', 'README.md']) {
      assert.ok(packedCore.has(document), document)
    }
  })
})

describe('the hints the app prints', () => {
  test('check-config\'s "Providers" line and the startup log name a document that resolves in the app', async () => {
    const documentation = await import(pathToFileURL(join(CORE_DIR, 'dist', 'documentation.js')).href)
    const summary = await import(pathToFileURL(join(CORE_DIR, 'dist', 'configuration-summary.js')).href)
    const printed = summary.formatSummary({
      valid: true,
      environment: 'Production',
      environmentFrom: 'NODE_ENV',
      sources: ['appsettings.json', 'environment'],
      authentication: { enabled: true, requireAuthenticatedUserByDefault: true },
      providers: [],
      apiSchemes: [],
      bearerPathPrefixes: ['/api/'],
      downstreamApis: [],
      secrets: [],
      dataProtection: { keys: 1 },
      warnings: [],
      errors: []
    }, 'AcmePortal')
    const line = printed.split('\n').find((/** @type {string} */ text) => text.startsWith('Providers:'))
    assert.equal(line, `Providers:     none enabled (nobody can sign in yet; see ${CORE_PREFIX}docs/providers.md)`)
    assert.equal(documentation.PROVIDERS_DOCUMENT, `${CORE_PREFIX}docs/providers.md`)
    assert.ok(resolves(documentation.PROVIDERS_DOCUMENT))
    const runServer = readFileSync(join(CORE_DIR, 'dist', 'run-server.js'), 'utf8')
    assert.match(runServer, /event: 'authentication\.no_provider', docs: PROVIDERS_DOCUMENT \}/, 'the startup hint uses the same constant')
  })
})
