/**
 * One real app process (src/server.ts, as `npm start` runs it) on the embedded store, persisted
 * (issue 20, item 7), restarted: a user signed in through a real SAML2 IdP stays signed in; a
 * session ended by logout stays ended (its stolen cookie is still refused); an OAuth callback
 * completed before the restart is refused when replayed after it (its `replay:sign-in-flow:`
 * record survived), without the code being redeemed again. Then SIGKILL: what was answered before
 * the kill (a sign-in, a logout) is what the restarted process knows (docs/scale-out.md: a killed
 * process loses only writes whose requests were not yet answered). Needs node:sqlite (Node.js
 * 22.13+); skipped, saying so, where it is missing (test/state/in-memory-fallback.test.ts covers it).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { settingsToEnv } from '../helpers/app.js'
import { antiforgeryTokenIn, Cookies } from '../helpers/cookies.js'
import { closedPort } from '../helpers/ports.js'
import { cleanEnv, runEntryPoint, type Running } from '../helpers/process.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { readAuthnRequest, TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { waitFor } from '../helpers/wait.js'
import { loadSqlite } from '../../src/state/sqlite-journal.js'

const skip = await loadSqlite() === undefined ? `node:sqlite is missing on Node.js ${process.versions.node} (it needs 22.13 or later); the store stays in memory there` : false

const API = '/api/application-information'
const SP_ENTITY_ID = 'https://app.example.test/saml2'
const VENDOR_SECRET = 'vendor-secret-embedded-restart-81c2'

interface Answer { readonly status: number, readonly location: string | undefined, readonly body: string }

describe('one app process on the persisted embedded store, restarted', { skip }, () => {
  const samlIdp = new TestIdentityProvider()
  let vendorIdp: VendorIdp
  let directory = ''
  let origin = ''
  let env: NodeJS.ProcessEnv = {}
  let run: Running | undefined

  async function send (path: string, cookies: Cookies, init: { method?: string, form?: Record<string, string>, accept?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = { accept: init.accept ?? 'text/html' }
    if (cookies.header !== '') headers.cookie = cookies.header
    let body: string | undefined
    if (init.form !== undefined) {
      body = new URLSearchParams(init.form).toString()
      headers['content-type'] = 'application/x-www-form-urlencoded'
    }
    const response = await fetch(new URL(path, origin), { method: init.method ?? 'GET', headers, body, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
    cookies.store(response)
    return { status: response.status, location: response.headers.get('location') ?? undefined, body: await response.text() }
  }

  const api = async (cookies: Cookies): Promise<number> => (await send(API, new Cookies(cookies.header), { accept: 'application/json' })).status

  async function start (): Promise<Running> {
    run = runEntryPoint('src/server.ts', env)
    await run.waitForLine((record) => record.event === 'state.embedded.persisted', 60_000)
    await run.waitForLine((record) => typeof record.msg === 'string' && record.msg.startsWith('Server listening at'), 60_000)
    // Ready once the SAML2 metadata is loaded as well.
    await waitFor(async () => (await send('/health/ready', new Cookies())).status === 200, 'the app to be ready', 30_000)
    return run
  }

  async function stop (signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const running = run
    if (running === undefined) return
    running.child.kill(signal)
    assert.equal(await running.exited(30_000), signal === 'SIGTERM' ? 0 : 'SIGKILL')
    run = undefined
  }

  async function saml2SignIn (nameId: string): Promise<Cookies> {
    const cookies = new Cookies()
    const challenge = await send('/External/Challenge?provider=Saml2&returnUrl=%2F', cookies)
    assert.equal(challenge.status, 302)
    const request = readAuthnRequest(challenge.location ?? '')
    const form = {
      SAMLResponse: samlIdp.buildResponse({ acsUrl: request.acsUrl, audience: SP_ENTITY_ID, user: { nameId, attributes: {} }, inResponseTo: request.id }),
      RelayState: request.relayState ?? ''
    }
    const answer = await send('/Saml2/Acs', cookies, { method: 'POST', form })
    assert.equal(answer.location, '/', `${nameId} signed in`)
    assert.ok(cookies.hasSession())
    return cookies
  }

  /** Logs out through the starter page's form; returns a copy of the cookies from before (a stolen cookie). */
  async function logout (cookies: Cookies): Promise<Cookies> {
    const stolen = new Cookies(cookies.header)
    const token = antiforgeryTokenIn((await send('/', cookies)).body)
    assert.ok(token !== undefined, 'the starter page carries an anti-forgery token')
    const answer = await send('/Account/Logout', cookies, { method: 'POST', form: { __RequestVerificationToken: token } })
    assert.equal(answer.status, 302)
    assert.equal(cookies.hasSession(), false)
    return stolen
  }

  /** An OAuth sign-in up to its callback: the cookies before the callback, and the callback's path. */
  async function vendorCallback (): Promise<{ before: string, path: string }> {
    const cookies = new Cookies()
    const challenge = await send('/External/Challenge?provider=VendorB&returnUrl=%2F', cookies)
    assert.equal(challenge.status, 302)
    const authorize = await fetch(challenge.location ?? '', { redirect: 'manual', signal: AbortSignal.timeout(10_000) })
    await authorize.arrayBuffer()
    const callback = new URL(authorize.headers.get('location') ?? '')
    return { before: cookies.header, path: callback.pathname + callback.search }
  }

  before(async () => {
    await samlIdp.start()
    vendorIdp = await startVendorIdp({ sub: 'vendor-user-9', name: 'Vic Vendor', email: 'vic@example.test' })
    directory = mkdtempSync(join(tmpdir(), 'embedded-restart-'))
    const port = await closedPort()
    origin = `http://127.0.0.1:${port}`
    const settings = {
      DataProtection: { Keys: [randomBytes(32).toString('base64')] },
      Hosting: { PublicOrigin: origin, ShutdownDelaySeconds: 0 },
      State: { Provider: 'Embedded', Embedded: { Persist: true, DataDirectory: join(directory, 'state') } },
      Authentication: {
        Providers: {
          Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: samlIdp.metadataUrl },
          VendorB: vendorIdp.settings('client-b', VENDOR_SECRET)
        }
      }
    }
    env = cleanEnv({ ...settingsToEnv(settings), NODE_ENV: 'development', HOST: '127.0.0.1', PORT: String(port), NO_COLOR: '1' })
    await start()
  })

  after(async () => {
    run?.kill()
    await run?.exited(10_000).catch(() => undefined)
    await vendorIdp?.close()
    await samlIdp.stop()
    rmSync(directory, { recursive: true, force: true })
  })

  test('restart (SIGTERM): a signed-in user stays signed in, a logged-out session stays revoked, a used callback stays used', async () => {
    const signedIn = await saml2SignIn('stays@example.test')
    const stolen = await logout(await saml2SignIn('leaves@example.test'))
    assert.equal(await api(stolen), 401, 'the logged-out session is refused before the restart')
    const { before: beforeCallback, path } = await vendorCallback()
    const accepted = await send(path, new Cookies(beforeCallback))
    assert.equal(accepted.location, '/', 'the OAuth sign-in completes')
    const tokenCalls = vendorIdp.tokenRequests.length

    await stop('SIGTERM')
    const restarted = await start()

    assert.equal(await api(signedIn), 200, 'the signed-in user is still signed in')
    assert.equal(await api(stolen), 401, 'the logged-out session is still revoked')
    const replay = new Cookies(beforeCallback)
    const replayed = await send(path, replay)
    assert.equal(replayed.location, '/Account/Login?failure=correlation')
    assert.equal(replay.hasSession(), false)
    assert.equal(vendorIdp.tokenRequests.length, tokenCalls, 'the code was not redeemed again')
    await restarted.waitForLine((record) => record.event === 'external.sign_in.failed' && record.failure === 'replay' && record.provider === 'VendorB', 5000)
  })

  test('SIGKILL: a sign-in and a logout answered before the kill are what the restarted process knows', async () => {
    const signedIn = await saml2SignIn('killed-in@example.test')
    const stolen = await logout(await saml2SignIn('killed-out@example.test'))
    const { before: beforeCallback, path } = await vendorCallback()
    assert.equal((await send(path, new Cookies(beforeCallback))).location, '/')

    await stop('SIGKILL')
    await start()

    assert.equal(await api(signedIn), 200, 'the sign-in answered before the kill survived it')
    assert.equal(await api(stolen), 401, 'the logout answered before the kill survived it')
    assert.equal((await send(path, new Cookies(beforeCallback))).location, '/Account/Login?failure=correlation', 'the callback used before the kill stays used')
  })
})
