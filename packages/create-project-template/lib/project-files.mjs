// @ts-check
/**
 * The files a generated project has that the template does not: its own package.json, .gitignore,
 * README.md and a GitHub Actions workflow. Pure functions of the options; nothing here writes.
 */
import { randomUUID } from 'node:crypto'
import { CORE_PACKAGE, REGISTRY_SWITCH_COMMAND } from './core-package.mjs'
import { GENERATOR_NAME } from './naming.mjs'
import { POSTURE_SUMMARY } from './posture.mjs'

/** The license the core carries (its package.json `license`), as the README states it. */
export const CORE_LICENSE = 'MIT'

/** The command that tests a generated project, in its README and its CI workflow alike. */
export const TEST_COMMAND = 'npm test'
/**
 * The commands that start a generated project after `npm install`: `npm start` alone when the
 * manifest's start script builds first (a `prestart` script, or `build` inside `start`), else
 * `npm run build && npm start`, since start runs dist/server.js.
 * @param {{ scripts?: Record<string, string> }} manifest the generated package.json
 * @returns {string}
 */
export function startCommand (manifest) {
  const scripts = manifest.scripts ?? {}
  const builds = scripts.prestart !== undefined || /\bbuild\b|\btsx\b/.test(scripts.start ?? '')
  return builds ? 'npm start' : 'npm run build && npm start'
}

/**
 * The one command the README gives to run a fresh clone.
 * @param {{ scripts?: Record<string, string> }} manifest
 */
export const runCommand = (manifest) => `npm install && ${startCommand(manifest)}`

/** Dependency specifiers that only make sense inside the template's monorepo. */
const LOCAL_SPECIFIER = /^(workspace:|file:|link:|portal:|\.{0,2}\/)/

/**
 * @typedef {object} ProjectIdentity
 * @property {string} name PascalCase name (configuration root key)
 * @property {string} packageName kebab-case npm package name
 * @property {import('./posture.mjs').AuthProvider} authProvider
 * @property {{ version: string, path: string }} core the packed core's version and its path in the project (`vendor/...tgz`)
 */

/**
 * The generated package.json: the template's (already renamed) manifest with the package name,
 * a fresh `userSecretsId` and the template's dependency specifiers unchanged, except the core's:
 * `file:vendor/project-template-core-<version>.tgz`, the packed core shipped with the project
 * (it must satisfy the template's semver range). Any other local or workspace specifier cannot
 * work outside the monorepo, so it stops generation.
 * @param {string} renamedText the template's package.json after the rename
 * @param {ProjectIdentity} identity
 * @returns {string}
 */
export function packageJsonFor (renamedText, identity) {
  const manifest = JSON.parse(renamedText)
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    for (const [dependency, specifier] of Object.entries(manifest[field] ?? {})) {
      if (typeof specifier === 'string' && LOCAL_SPECIFIER.test(specifier)) {
        throw new Error(`The template's package.json ${field} entry ${dependency} uses a local specifier that a standalone project cannot install.`)
      }
    }
  }
  const range = manifest.dependencies?.[CORE_PACKAGE]
  if (typeof range !== 'string' || !satisfiesCaret(identity.core.version, range)) {
    throw new Error(`The packed ${CORE_PACKAGE} ${identity.core.version} does not satisfy the template's dependency ${CORE_PACKAGE}@${range}.`)
  }
  manifest.dependencies[CORE_PACKAGE] = `file:${identity.core.path}`
  delete manifest.workspaces
  manifest.name = identity.packageName
  manifest.version = '0.1.0'
  // A new project gets its own user-secrets directory (docs/configuration.md, "User secrets").
  manifest.userSecretsId = `${identity.packageName}-${randomUUID()}`
  return JSON.stringify(manifest, null, 2) + '\n'
}

/**
 * True when `version` satisfies a caret range (`^1.0.0`: same major, not lower), the only kind of
 * range the template gives the core.
 * @param {string} version
 * @param {string} range
 */
export function satisfiesCaret (version, range) {
  const parse = (/** @type {string} */ text) => /^(\d+)\.(\d+)\.(\d+)$/.exec(text)?.slice(1).map(Number)
  const wanted = range.startsWith('^') ? parse(range.slice(1)) : undefined
  const actual = parse(version)
  if (wanted === undefined || actual === undefined) return false
  const [major, minor, patch] = /** @type {[number, number, number]} */ (actual)
  const [wantedMajor, wantedMinor, wantedPatch] = /** @type {[number, number, number]} */ (wanted)
  return major === wantedMajor && (minor > wantedMinor || (minor === wantedMinor && patch >= wantedPatch))
}

/** @returns {string} */
export function gitignore () {
  return `# Dependencies and build output
node_modules/
dist/
*.tsbuildinfo
coverage/

# Logs
logs/
*.log

# Local secrets and generated keys: never commit them.
.keys/
# The embedded state store's data (sessions, replay records): never commit it.
.state/
secrets.json
*.secrets.json
.env
.env.*
*.pem
*.key
*.pfx
!test/fixtures/**/*.pem
!test/fixtures/**/*.key

# Test output
test/output/

# TLS material for the local compose proxy (docs/deployment.md)
deploy/certs/
`
}

/**
 * GitHub Actions: the same \`npm test\` as the README, on the Node.js LTS lines. The app's tests
 * need nothing beyond \`npm ci\` (no browser, no Redis: those suites live with the core).
 * @returns {string}
 */
export function ciWorkflow () {
  return `name: CI

on:
  push:
  pull_request:

permissions:
  contents: read

jobs:
  test:
    runs-on: ubuntu-latest
    container: node:${'$'}{{ matrix.node }}-bookworm
    strategy:
      matrix:
        node: [22, 24]
    timeout-minutes: 15
    steps:
      - uses: actions/checkout@v4
      - name: Install dependencies
        run: if [ -f package-lock.json ]; then npm ci; else npm install; fi
      - name: Test
        run: ${TEST_COMMAND}
`
}

/**
 * @param {ProjectIdentity} identity
 * @param {{ scripts?: Record<string, string> }} manifest the generated package.json
 * @param {readonly string[]} docs the Markdown files copied into docs/, by file name
 * @returns {string}
 */
export function readme (identity, manifest, docs) {
  const { name, authProvider, core } = identity
  const docList = docs.length === 0
    ? ''
    : `\nMore in \`docs/\`: ${docs.map((file) => `[${file}](docs/${file})`).join(', ')}.\n`
  return `# ${name}

A web application on Fastify 5, generated by ${GENERATOR_NAME} with \`--authProvider ${authProvider}\`:
${POSTURE_SUMMARY[authProvider]}.
${authProvider === 'none' ? NONE_WARNING(name) : COOKIE_POSTURE(name)}
## Run it

\`\`\`sh
${runCommand(manifest)}
\`\`\`

This compiles the TypeScript sources into \`dist/\` and starts the server on
http://127.0.0.1:5000 (set \`HOST\` and \`PORT\` to change it). \`npm run dev\` runs the sources in Development with reload.

Production: build once, then start the bundle with nothing installed beside it: \`dist/\` is
self-contained, so the production directory holds \`dist/\`, \`public/\`, \`appsettings.json\` and
\`package.json\`, and \`npm start\` there only runs \`node dist/server.js\` (no \`npm ci\`, no
\`node_modules\`). [docs/deployment.md](docs/deployment.md) ("Build once, start without building")
gives the three lines; with \`Dockerfile\` and \`compose.yaml\` (two instances, Redis, nginx) it
covers containers, TLS, forwarded headers and keys.

## Test it

\`\`\`sh
${TEST_COMMAND}
\`\`\`

\`${TEST_COMMAND}\` runs ESLint, the TypeScript type check and this app's own tests (node:test through
tsx): every route under the fallback policy, the anonymous inventory, the policies, the pages, and
one OpenID Connect sign-in against a provider the test starts itself. It needs nothing beyond
\`npm install\` (no browser, no Redis); the CI workflow in \`.github/workflows/ci.yml\` runs the
same command.

## The security core

Everything security-critical (configuration schema and validation, sessions, the key ring, the
state store, OpenID Connect, SAML2 and OAuth sign-in, CSRF, host trust, error pages, the
\`/Account\`, \`/External\`, \`/Home/Error\` and \`/health\` endpoints) is the versioned package
\`${CORE_PACKAGE}\`, not code in this project. This project owns \`src/\` (its composition in
\`src/app.ts\`, its routes and views), \`test/\`, \`appsettings*.json\`, \`public/\`, \`docs/\` and the
deployment files. The core's README, API and documents are in
\`node_modules/${CORE_PACKAGE}/\` after \`npm install\`.

The package is not on the public npm registry yet, so it ships with the project:
\`${core.path}\` (version ${core.version}), which \`package.json\` names
(\`"${CORE_PACKAGE}": "file:${core.path}"\`); \`npm install\` installs it from there,
without the network. Keep \`vendor/\` in source control.

**Upgrading the core.** Security fixes are patch releases (1.0.x); nothing in this project changes
when you take one. Put the new tarball (for example \`project-template-core-1.0.1.tgz\`) into
\`vendor/\` and install it:

\`\`\`sh
npm install ./vendor/project-template-core-1.0.1.tgz
\`\`\`

That rewrites the \`${CORE_PACKAGE}\` line of \`package.json\` and \`package-lock.json\`; delete the
old tarball from \`vendor/\` afterwards. Once the package is published, switch to the registry
with one command (from then on \`npm update ${CORE_PACKAGE}\` brings fixes, and \`vendor/\` can go):

\`\`\`sh
${REGISTRY_SWITCH_COMMAND}
\`\`\`

## Configuration

Settings live under the \`${name}\` root key of \`appsettings.json\`, then
\`appsettings.<Environment>.json\`, user secrets (Development), a key-per-file directory and
environment variables, which use the \`${name}__\` prefix and \`__\` between keys, for example
\`${name}__Logging__Level=debug\`. \`npm run check-config\` validates the configuration without
starting the server. Secrets (client secrets, keys, certificates) never go into these files or
into source control.
${docList}
## License

This project is yours: the generator sets no license for it (\`package.json\` says
\`"private": true\`, so it is never published by mistake); choose one if you publish it. Its
security core, \`${CORE_PACKAGE}\`, is under the ${CORE_LICENSE} license
(\`node_modules/${CORE_PACKAGE}/LICENSE\` after \`npm install\`). \`npm run build\` writes
\`dist/THIRD-PARTY-NOTICES.txt\`, the notices of every package the bundle inlines, as their
licenses ask; it ships with \`dist/\`.
`
}

/** @param {string} name */
const COOKIE_POSTURE = (name) => `
## Security posture

Closed by default: \`${name}:Authentication:Enabled\` and
\`${name}:Authorization:RequireAuthenticatedUserByDefault\` are true, so every route without
explicit authorization metadata requires a signed-in user, and anonymous browsers are sent to
\`/Account/Login\`. No external provider is enabled, so nobody can sign in until you enable one
(OpenID Connect, SAML2 or an OAuth vendor) or add your own identity flow.
`

/** @param {string} name */
const NONE_WARNING = (name) => `
## Authentication is off: not a production identity configuration

This project was generated with \`--authProvider none\`. In \`appsettings.json\`,
\`${name}:Authentication:Enabled\`, \`${name}:Authentication:Cookie:Enabled\` and
\`${name}:Authorization:RequireAuthenticatedUserByDefault\` are false: **every route without
explicit authorization metadata is public**, and the application logs a warning (event
\`authentication.disabled\`) once at every startup. This is not a production identity
configuration; use it for prototypes, internal tools behind another gate, or while you add your
own mechanism.

To return to the closed-by-default posture:

1. In \`appsettings.json\`, under \`${name}\`: set \`Authentication:Enabled\` to true, set
   \`Authentication:Cookie:Enabled\` to true (or remove it) and set
   \`Authorization:RequireAuthenticatedUserByDefault\` to true.
2. Enable an external provider (or add your own identity flow) so that users can sign in.

\`test/posture.test.ts\` reads the posture \`appsettings.json\` ships with and checks the
application behaves accordingly; it follows the change by itself, and fails on a mix of the two
postures.
`
