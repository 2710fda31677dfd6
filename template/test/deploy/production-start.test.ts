/**
 * The production start contract, without containers: the recipe of docs/deployment.md ("Build
 * once, start without building") run as written. Its first line (`npm ci && npm run build`) is
 * stood in for by the bundle (`npm run bundle`, the step of `npm run build` after the type check)
 * written into a copy of the project, with no node_modules anywhere above it; the recipe's
 * other lines (assemble `release/`, `cd release && npm start`) run in bash exactly as the page
 * prints them. The started server answers /health/live and the login page, and exits 0 on
 * SIGTERM. Nothing is installed in `release/`: it proves dist/ is self-contained.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { APPLICATION_NAME } from '../../src/application-name.js'
import { APP_ROOT } from '../helpers/app.js'
import { cleanEnv, jsonLines, runProcess, type Running } from '@project-template/core/testing'

const KEY = Buffer.alloc(32, 23).toString('base64')
const LISTENING = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/
const manifest = JSON.parse(readFileSync(join(APP_ROOT, 'package.json'), 'utf8')) as { name: string, scripts: Record<string, string> }
const BUILD_LINE = 'npm ci && npm run build'

/** The shell lines of the first `sh` block under "Build once, start without building" in docs/deployment.md. */
function deploymentRecipe (markdown: string): string[] {
  const section = markdown.split('\n## ').find((part) => part.startsWith('Build once, start without building')) ?? ''
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  return block.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
}
const recipe = deploymentRecipe(readFileSync(join(APP_ROOT, 'docs', 'deployment.md'), 'utf8'))

function nodeModulesAbove (directory: string): string[] {
  const found: string[] = []
  for (let current = directory; ; current = dirname(current)) {
    if (existsSync(join(current, 'node_modules'))) found.push(join(current, 'node_modules'))
    if (dirname(current) === current) return found
  }
}

describe('production start contract', () => {
  const root = mkdtempSync(join(tmpdir(), 'pt-production-'))
  let run: Running
  let origin = ''
  let serverPid = 0

  before(async () => {
    const project = join(root, 'project')
    const bundle = runProcess('npm', ['run', 'bundle', '--', `--outdir=${join(project, 'dist')}`], { cwd: APP_ROOT, env: process.env })
    assert.equal(await bundle.exited(120_000), 0, bundle.stderr())
    cpSync(join(APP_ROOT, 'package.json'), join(project, 'package.json'))
    cpSync(join(APP_ROOT, 'public'), join(project, 'public'), { recursive: true })
    for (const file of readdirSync(APP_ROOT).filter((name) => /^appsettings.*\.json$/.test(name))) {
      cpSync(join(APP_ROOT, file), join(project, file))
    }
    assert.equal(recipe.length, 3, `docs/deployment.md recipe: ${JSON.stringify(recipe)}`)
    assert.equal(recipe[0], BUILD_LINE)
    const assemble = runProcess('bash', ['-euc', recipe[1] ?? ''], { cwd: project, env: process.env })
    assert.equal(await assemble.exited(20_000), 0, assemble.stderr())
    run = runProcess('bash', ['-euc', recipe[2] ?? ''], {
      cwd: project,
      // The page's `npm start`, without npm's "> start" banner in the JSON log.
      env: cleanEnv({ npm_config_loglevel: 'silent', NODE_ENV: 'production', HOST: '127.0.0.1', PORT: '0', ProjectTemplate__DataProtection__Keys__0: KEY }, APPLICATION_NAME),
      detached: true
    })
    const line = await run.waitForLine((record) => typeof record.msg === 'string' && LISTENING.test(record.msg), 30_000)
    origin = LISTENING.exec(String(line.msg))?.[1] ?? ''
    serverPid = Number(line.pid)
  })
  after(() => {
    run?.kill()
    rmSync(root, { recursive: true, force: true })
  })

  test('the bundle holds nothing of @project-template/core/testing (test sign-in route, local OpenID provider)', () => {
    const bundled = readdirSync(join(root, 'project', 'release', 'dist')).filter((name) => name.endsWith('.js')).map((name) => readFileSync(join(root, 'project', 'release', 'dist', name), 'utf8')).join('\n')
    assert.ok(bundled.includes('createApp') || bundled.length > 100_000, 'the bundle was read')
    for (const marker of ['/test-only/sign-in', 'startOidcProvider', 'throughIdpLogin']) assert.equal(bundled.includes(marker), false, marker)
  })

  test('start runs the built server and never builds, and there is no prestart', () => {
    assert.equal(manifest.scripts.prestart, undefined)
    assert.match(manifest.scripts.start ?? '', /^node (--enable-source-maps )?dist\/server\.js$/)
    assert.match(manifest.scripts.build ?? '', /npm run bundle$/)
  })

  test('the built output runs with no node_modules in its directory or any directory above it, and no lock file', () => {
    const release = join(root, 'project', 'release')
    assert.deepEqual(nodeModulesAbove(release), [])
    assert.deepEqual(readdirSync(release).sort(), ['appsettings.json', 'dist', 'package.json', 'public'])
    assert.ok(existsSync(join(release, 'dist', 'server.js')))
    assert.ok(existsSync(join(release, 'dist', 'check-config.js')), 'check-config is bundled for production images')
  })

  test('dist/ carries the notices of the packages the bundle inlines (their MIT, ISC and BSD licenses ask for it)', () => {
    const notices = readFileSync(join(root, 'project', 'release', 'dist', 'THIRD-PARTY-NOTICES.txt'), 'utf8')
    const headings = notices.split('\n').filter((line) => /^\S+ \d+\.\d+\.\d+\S* \(.+\)$/.test(line))
    for (const heading of ['fastify ', 'openid-client ', 'pino ', '@project-template/core ', 'fast-uri ']) {
      assert.ok(headings.some((line) => line.startsWith(heading)), `${heading.trim()} is listed`)
    }
    assert.ok(!headings.some((line) => line.startsWith(`${manifest.name} `)), 'the app itself is not a third party')
    assert.ok(!headings.some((line) => line.startsWith('pino-pretty ')), 'pino-pretty is not in the bundle')
    assert.match(notices, /fastify \d+\.\d+\.\d+ \(MIT\)\n\nMIT License\n\nCopyright \(c\) 2016-present The Fastify team/)
  })

  test('/health/live, the login page and a static file answer', async () => {
    const live = await fetch(`${origin}/health/live`, { signal: AbortSignal.timeout(5000) })
    assert.equal(live.status, 200)
    const login = await fetch(`${origin}/Account/Login`, { signal: AbortSignal.timeout(5000) })
    assert.equal(login.status, 200)
    assert.match(await login.text(), /No sign-in provider is configured/)
    const css = await fetch(`${origin}/css/site.css`, { signal: AbortSignal.timeout(5000) })
    assert.equal(css.status, 200)
  })

  test('the server logs JSON in Production; SIGTERM to it (as an orchestrator sends) closes it and npm start exits 0', async () => {
    assert.ok(serverPid > 0 && serverPid !== run.child.pid, 'the listening line carries the node process id')
    process.kill(serverPid, 'SIGTERM')
    assert.equal(await run.exited(20_000), 0, run.stderr())
    const records = jsonLines(run.stdout())
    assert.ok(records.some((record) => record.event === 'configuration.loaded' && record.environment === 'Production'))
    assert.ok(records.some((record) => record.event === 'server.closed'))
  })
})
