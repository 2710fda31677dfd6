/**
 * `npm run dev` (src/dev.ts) with a stand-in server that records what happens to it: a change of
 * `.env`, of an `appsettings*.json` or of a file under src/ starts the server again, stopping the
 * old one with SIGINT (answered without the shutdown delay; SIGTERM gets the production drain);
 * a server that refused to start is started again at the next change of any watched file.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { isWatchedRootFile, runDev, type DevRunner } from '../src/dev.js'

/** Logs `started|refused|SIGINT|SIGTERM <pid>` to events.log; refuses to start while `.env` holds REFUSE=1. */
const STAND_IN_SERVER = `
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
const log = (what) => appendFileSync('events.log', what + ' ' + process.pid + '\\n')
if (existsSync('.env') && readFileSync('.env', 'utf8').includes('REFUSE=1')) { log('refused'); process.exit(1) }
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { log(signal); process.exit(0) })
log('started')
setInterval(() => {}, 60_000)
`

const roots: string[] = []
const runners: DevRunner[] = []
after(async () => {
  for (const runner of runners) await runner.close()
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

/** A throw-away app root with src/ and the stand-in server; the runner started in it. */
function startIn (files: Record<string, string> = {}): { root: string, said: string[], events: () => string[] } {
  const root = mkdtempSync(join(tmpdir(), 'app-dev-'))
  roots.push(root)
  mkdirSync(join(root, 'src'))
  writeFileSync(join(root, 'server.mjs'), STAND_IN_SERVER)
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text)
  const said: string[] = []
  runners.push(runDev({ root, command: [process.execPath, 'server.mjs'], say: (line) => { said.push(line) } }))
  const events = (): string[] => existsSync(join(root, 'events.log')) ? readFileSync(join(root, 'events.log'), 'utf8').trim().split('\n').map((line) => line.split(' ')[0] ?? '') : []
  return { root, said, events }
}

async function until (condition: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; !condition(); await sleep(25)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
  }
}
const count = (events: string[], kind: string): number => events.filter((event) => event === kind).length

describe('npm run dev starts the server again', () => {
  for (const [name, change] of [
    ['.env changes', (root: string) => { writeFileSync(join(root, '.env'), 'ProjectTemplate__Logging__Level=debug\n') }],
    ['an appsettings*.json file is created', (root: string) => { writeFileSync(join(root, 'appsettings.Local.json'), '{}\n') }],
    ['a file under src/ changes', (root: string) => { mkdirSync(join(root, 'src', 'routes')); writeFileSync(join(root, 'src', 'routes', 'page.ts'), 'export {}\n') }]
  ] as const) {
    test(`when ${name}, stopping the old one with SIGINT (no drain)`, async () => {
      const app = startIn()
      await until(() => count(app.events(), 'started') === 1, 'the first start')
      change(app.root)
      await until(() => count(app.events(), 'started') === 2, 'the second start')
      assert.deepEqual(app.events(), ['started', 'SIGINT', 'started'])
      assert.equal(app.said.filter((line) => line.includes('exited')).length, 0, 'a server stopped on purpose is not reported as exited')
    })
  }

  test('after a refused start, at the next change of any watched file', async () => {
    const app = startIn({ '.env': 'REFUSE=1\n' })
    await until(() => count(app.events(), 'refused') === 1, 'the refused start')
    await until(() => app.said.some((line) => line.startsWith('the server exited (code 1)')), 'the runner to say so')
    writeFileSync(join(app.root, 'src', 'app.ts'), 'export {}\n')
    await until(() => count(app.events(), 'refused') === 2, 'a second attempt after a source change')
    writeFileSync(join(app.root, '.env'), 'REFUSE=0\n')
    await until(() => count(app.events(), 'started') === 1, 'a start once .env is fixed')
    assert.deepEqual(app.events(), ['refused', 'refused', 'started'])
  })
})

test('npm run dev is this runner, in Development', () => {
  const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  assert.equal(manifest.scripts.dev, 'NODE_ENV=development node --import tsx src/dev.ts')
})

test('only .env and appsettings*.json of the app root are watched there', () => {
  for (const name of ['.env', 'appsettings.json', 'appsettings.Development.json', 'appsettings.Local.json']) assert.equal(isWatchedRootFile(name), true, name)
  for (const name of ['.env.local', '.env.swp', 'package.json', 'events.log', 'appsettings.json~', 'README.md']) assert.equal(isWatchedRootFile(name), false, name)
})
