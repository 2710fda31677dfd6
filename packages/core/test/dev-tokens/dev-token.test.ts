/**
 * Development tokens (issue 40, item 13; `dotnet user-jwts`): `runDevToken` (the template's
 * `npm run dev-token`) mints a token with the app's own key, created under
 * `.state/dev-tokens/signing-key.json` (0600) on first use; a Development app whose JwtBearer
 * scheme sets `DevelopmentTokens: true` accepts it with the scheme's usual checks, the same app
 * without the key refuses it (`issuer`, no outbound call), an app with the key refuses to start
 * outside Development (the problem names the key), and the command refuses to run outside
 * Development without creating a key.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { DEVELOPMENT_SIGNING_KEY_FILE } from '../../src/dev-tokens/signing-key.js'
import { pathToFileURL } from 'node:url'
import { CORE_ROOT, loadTestConfiguration } from '../helpers/app.js'
import { cleanEnv, runProcess } from '../helpers/process.js'
import type { TestSettings } from '../../src/testing/app.js'
import { buildBearerApp } from '../helpers/bearer-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const AUDIENCE = 'api://orders'

const DEV_TOKEN = pathToFileURL(resolve(CORE_ROOT, 'src', 'dev-token.ts')).href

/** Runs the command as a child process (the template's `npm run dev-token` runs it so), with `contentRoot` as its app root. */
async function devToken (contentRoot: string, args: string[], nodeEnv: string): Promise<{ code: number | string, stdout: string, stderr: string }> {
  const script = `const { runDevToken } = await import(${JSON.stringify(DEV_TOKEN)}); await runDevToken({ contentRoot: process.argv[1], args: process.argv.slice(2) })`
  const run = runProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, contentRoot, ...args], { cwd: CORE_ROOT, env: cleanEnv({ NODE_ENV: nodeEnv }) })
  const code = await run.exited(60_000)
  return { code, stdout: run.stdout(), stderr: run.stderr() }
}

describe('development tokens', () => {
  let idp: TokenIdp
  let root: string
  const scheme = (developmentTokens: boolean): Record<string, TestSettings> => ({ Orders: { Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [AUDIENCE], DevelopmentTokens: developmentTokens } })

  before(async () => {
    idp = await startTokenIdp('unused')
    root = mkdtempSync(join(tmpdir(), 'dev-tokens-'))
    writeFileSync(join(root, 'appsettings.json'), JSON.stringify({ ProjectTemplate: { Authentication: { Schemes: { Orders: { Type: 'JwtBearer', ...(scheme(true).Orders as object) } } } } }))
  })
  after(async () => {
    await idp?.close()
    rmSync(root, { recursive: true, force: true })
  })

  test('the command refuses to run outside Development and creates no key', async () => {
    for (const nodeEnv of ['production', '', 'staging']) {
      const run = await devToken(root, ['--scope', 'orders.read'], nodeEnv)
      assert.equal(run.code, 1, nodeEnv)
      assert.equal(run.stdout, '')
      assert.match(run.stderr, /refused: development tokens exist only in Development/)
    }
    assert.equal(existsSync(join(root, DEVELOPMENT_SIGNING_KEY_FILE)), false)
  })

  test('a minted token is accepted by a Development app whose scheme sets DevelopmentTokens, refused without it', async () => {
    const run = await devToken(root, ['--scope', 'orders.read', '--sub', 'ada', '--claim', 'roles=Administrator'], 'development')
    assert.equal(run.code, 0, run.stderr)
    const token = run.stdout.trim()
    const header = decodeProtectedHeader(token)
    const claims = decodeJwt(token)
    assert.equal(header.alg, 'ES256')
    assert.equal(header.typ, 'at+jwt')
    assert.equal(claims.iss, 'dev-tokens:Orders')
    assert.equal(claims.aud, AUDIENCE)
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 3600)
    assert.equal(statSync(join(root, DEVELOPMENT_SIGNING_KEY_FILE)).mode & 0o777, 0o600)

    const trusting = await buildBearerApp({ contentRoot: root, schemes: scheme(true), refusalsPerWindow: 1000 })
    try {
      const answer = await trusting.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })
      assert.equal(answer.statusCode, 200, answer.body)
      assert.deepEqual(JSON.parse(answer.body), { subject: 'ada', scheme: 'Orders', machine: false, clientId: 'dev-token', scopes: ['orders.read'] })
      // The key is created once: a second token signs with it too.
      const other = (await devToken(root, ['--sub', 'ada'], 'development')).stdout.trim()
      assert.equal((await trusting.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${other}` } })).statusCode, 200, 'a second token with the same key')
    } finally {
      await trusting.app.close()
    }

    const closed = await buildBearerApp({ contentRoot: root, schemes: scheme(false), refusalsPerWindow: 1000 })
    try {
      const refused = await closed.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })
      assert.equal(refused.statusCode, 401)
      assert.deepEqual(closed.logs.events('bearer.refused').map((line) => line.failure), ['issuer'])
    } finally {
      await closed.app.close()
    }
  })

  test('an app whose scheme sets DevelopmentTokens does not start outside Development: the problem names the key', () => {
    const settings = (developmentTokens: boolean): Record<string, unknown> => ({ Authentication: { Schemes: { Orders: { Type: 'JwtBearer', ...(scheme(developmentTokens).Orders as object) } } } })
    const key = 'ProjectTemplate:Authentication:Schemes:Orders:DevelopmentTokens'
    const production = loadTestConfiguration({ nodeEnv: 'Production', settings: settings(true) as never })
    assert.ok(production.errors.some((problem) => problem.key === key), JSON.stringify(production.errors.map((problem) => problem.key)))
    const without = loadTestConfiguration({ nodeEnv: 'Production', settings: settings(false) as never })
    assert.ok(!without.errors.some((problem) => problem.key === key))
    const development = loadTestConfiguration({ nodeEnv: 'Development', settings: settings(true) as never })
    assert.ok(!development.errors.some((problem) => problem.key === key))
  })
})
