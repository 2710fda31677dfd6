/**
 * Static files from public/: served before routing without authorization, no directory listing,
 * no dotfiles, no path traversal out of the web root.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../helpers/app.js'
import { createLogger } from '../../src/logger.js'
import { buildForSuite, LogCapture, loadTestConfiguration, testKeyRing, type TestApp } from '../helpers/app.js'

describe('static files', () => {
  const t = buildForSuite()

  const files: Array<[string, string]> = [
    ['/css/site.css', 'text/css; charset=utf-8'],
    ['/favicon.ico', 'image/vnd.microsoft.icon']
  ]
  for (const [url, type] of files) {
    test(`${url} is served to an anonymous caller`, async () => {
      const response = await t.app.inject({ url })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['content-type'], type)
      assert.equal(response.headers.location, undefined)
      assert.equal(response.headers['x-content-type-options'], 'nosniff', 'security headers apply to static files too')
    })
  }

  const refused = ['/css/', '/css', '/.gitignore', '/css/.hidden', '/.keys/session-keys.json', '/../appsettings.json', '/%2e%2e/appsettings.json', '/css/..%2f..%2fappsettings.json', '/appsettings.json', '/package.json']
  for (const url of refused) {
    test(`${url} serves no file content and no listing`, async () => {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.notEqual(response.statusCode, 200)
      assert.ok(response.statusCode < 500, `${url} answered ${response.statusCode}`)
      assert.doesNotMatch(response.body, /ProjectTemplate"\s*:|site\.css<\/a>|"keys"/)
    })
  }
})

describe('static files from a web root that holds dotfiles and folders', () => {
  const root = mkdtempSync(join(tmpdir(), 'pt-public-'))
  let app: TestApp['app']
  before(async () => {
    mkdirSync(join(root, 'public', 'docs'), { recursive: true })
    mkdirSync(join(root, 'public', '.well-hidden'), { recursive: true })
    writeFileSync(join(root, 'public', '.env'), 'PLANTED-DOTFILE-SECRET')
    writeFileSync(join(root, 'public', '.well-hidden', 'file.txt'), 'PLANTED-DOTDIR-SECRET')
    writeFileSync(join(root, 'public', 'docs', 'guide.txt'), 'public guide')
    const loaded = loadTestConfiguration()
    app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: root, logger: createLogger('silent', new LogCapture()), keyRing: testKeyRing() })
    await app.ready()
  })
  after(async () => {
    await app.close()
    rmSync(root, { recursive: true, force: true })
  })

  test('a regular file in a folder is served', async () => {
    const response = await app.inject({ url: '/docs/guide.txt' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.body, 'public guide')
  })

  for (const url of ['/.env', '/.well-hidden/file.txt', '/%2eenv', '/docs/../.env']) {
    test(`the dotfile path ${url} is not served`, async () => {
      const response = await app.inject({ url })
      assert.notEqual(response.statusCode, 200)
      assert.ok(!response.body.includes('PLANTED-DOT'))
    })
  }

  for (const url of ['/docs/', '/docs']) {
    test(`the folder ${url} is not listed`, async () => {
      const response = await app.inject({ url, headers: { accept: 'text/html' } })
      assert.notEqual(response.statusCode, 200)
      assert.ok(!response.body.includes('guide.txt'))
    })
  }
})
