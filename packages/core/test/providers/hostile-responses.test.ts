/**
 * A hostile identity provider cannot take the process down through the size of what it answers
 * (issue 33, item 1): every outbound response kind (discovery, signing keys, token, user
 * information, SAML metadata) is read through the bounded reader after decompression, against
 * a provider on loopback that answers with a gzip bomb (300 MB inflated, the attack run's
 * document) or an endless chunked body. For each: the process stays up, `/health/live` answers
 * while the attempt runs, the resident memory grows by far less than the document, that provider
 * fails cleanly (the login page with the provider-unavailable message, or the sign-in failure
 * page) and its log line names the kind and the cap, never the body.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { callBackWithCode } from '../helpers/providers/oidc-pair.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import type { HostileBody } from '../helpers/hostile-bodies.js'
import { OUTBOUND_RESPONSE_LIMITS, type OutboundResponseKind } from '../../src/http/bounded-fetch.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'

const CLIENT_ID = 'hostile-client'
const CLIENT_SECRET = 'hostile-client-secret-PLANTED-9031'
/** Far below the 300 MB the bomb inflates to; far above what a bounded read costs. */
const RSS_GROWTH_LIMIT = 96 * 1024 * 1024
const HOSTILE_BODIES: readonly HostileBody[] = ['gzip-bomb', 'oversized']

interface Attempt<T> {
  readonly result: T
  /** The slowest /health/live answer while the attempt ran (milliseconds). */
  readonly slowestLiveMs: number
  readonly rssGrowth: number
}

/** Runs `attempt` while asking /health/live every 20 ms; records the slowest answer and the RSS growth. */
async function whileLive<T> (origin: string, attempt: () => Promise<T>): Promise<Attempt<T>> {
  const rssBefore = process.memoryUsage().rss
  let slowest = 0
  const attempting = { running: true }
  let peakRss = rssBefore
  const probe = (async () => {
    for (let i = 0; attempting.running && i < 1_000; i++) {
      const started = performance.now()
      const response = await fetch(`${origin}/health/live`, { signal: AbortSignal.timeout(10_000) })
      await response.arrayBuffer()
      assert.equal(response.status, 200)
      slowest = Math.max(slowest, performance.now() - started)
      peakRss = Math.max(peakRss, process.memoryUsage().rss)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  try {
    const result = await attempt()
    return { result, slowestLiveMs: slowest, rssGrowth: Math.max(peakRss, process.memoryUsage().rss) - rssBefore }
  } finally {
    attempting.running = false
    await probe
  }
}

function assertBounded (attempt: Attempt<unknown>, label: string): void {
  assert.ok(attempt.slowestLiveMs < 2_000, `${label}: /health/live waited ${Math.round(attempt.slowestLiveMs)} ms`)
  assert.ok(attempt.rssGrowth < RSS_GROWTH_LIMIT, `${label}: RSS grew by ${Math.round(attempt.rssGrowth / 1048576)} MB`)
}

/** The one log line of `event` that names `kind` with its cap; no line holds the hostile body. */
function assertLogged (app: ListeningApp, event: string, kind: OutboundResponseKind, from: number): void {
  const lines = app.logs.lines.slice(from)
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.event === event)
  assert.ok(records.length >= 1, `a ${event} line`)
  assert.equal(records.at(-1)!.responseKind, kind)
  assert.equal(records.at(-1)!.responseLimitBytes, OUTBOUND_RESPONSE_LIMITS[kind])
  assert.equal(lines.find((line) => line.includes('aaaaaaaaaaaaaaaa')), undefined, 'no body in the log')
  assert.equal(lines.find((line) => line.includes(CLIENT_SECRET)), undefined, 'no secret in the log')
}

describe('a runtime provider whose discovery document or SAML metadata is hostile', () => {
  let idp: TokenIdp
  let app: ListeningApp
  let definitions: RuntimeProviderDefinition[] = []

  before(async () => {
    idp = await startTokenIdp(CLIENT_ID)
    app = await startProviderApp({}, undefined, { providerSource: async () => definitions })
    await waitUntilReady(app.origin)
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  /** Challenges `scheme` while /health/live is probed: bounded, and answered with the login page's unavailable message. */
  async function challengeUnavailableWhileLive (scheme: string, label: string): Promise<void> {
    const attempt = await whileLive(app.origin, async () => {
      const response = await fetch(`${app.origin}/External/Challenge?provider=${scheme}`, { redirect: 'manual' })
      await response.arrayBuffer()
      return response
    })
    assertBounded(attempt, label)
    assert.equal(attempt.result.status, 302)
    assert.equal(attempt.result.headers.get('location'), '/Account/Login?failure=unavailable')
  }

  for (const body of HOSTILE_BODIES) {
    test(`OpenID Connect discovery answering with ${body}: the challenge shows the login page with the provider unavailable, the process stays live and small`, async () => {
      const scheme = body === 'gzip-bomb' ? 'BombCorp' : 'EndlessCorp'
      idp.hostile = { '/.well-known/openid-configuration': body }
      definitions = [{ scheme, settings: { Type: 'OpenIdConnect', Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } }]
      assert.deepEqual((await app.app.authentication.reloadProviders()).added, [scheme])
      const from = app.logs.lines.length
      await challengeUnavailableWhileLive(scheme, `discovery ${body}`)
      const login = await (await fetch(`${app.origin}/Account/Login?failure=unavailable`)).text()
      assert.match(login, /The sign-in provider is unavailable right now/)
      assertLogged(app, 'external.metadata.failed', 'discovery', from)
      // One customer's IdP does not make the app unready; readiness counts it (Degraded) without naming it.
      assert.equal(app.app.authentication.providers.get(scheme)?.status().available, false)
      const readyResponse = await fetch(`${app.origin}/health/ready`)
      assert.equal(readyResponse.status, 200)
      const ready = await readyResponse.text()
      assert.ok(!ready.includes(scheme), ready)
      const providers = (JSON.parse(ready) as { checks: { providers: { status: string, unavailable: unknown } } }).checks.providers
      assert.equal(providers.status, 'Degraded')
      assert.deepEqual(providers.unavailable, { configured: 0, runtime: 1 })
    })
  }

  for (const body of HOSTILE_BODIES) {
    test(`SAML2 metadata answering with ${body}: the provider is unavailable, the process stays live and small`, async () => {
      const scheme = body === 'gzip-bomb' ? 'BombSaml' : 'EndlessSaml'
      idp.hostile = { '/saml-metadata': body }
      definitions = [{ scheme, settings: { Type: 'Saml2', EntityId: 'http://127.0.0.1/sp-hostile', MetadataUrl: `${idp.issuer}/saml-metadata` } }]
      assert.deepEqual((await app.app.authentication.reloadProviders()).added, [scheme])
      const from = app.logs.lines.length
      await challengeUnavailableWhileLive(scheme, `SAML metadata ${body}`)
      assertLogged(app, 'saml2.metadata.failed', 'saml_metadata', from)
    })
  }
})

describe('a configured OpenID Connect provider whose key set, token or user information answer is hostile', () => {
  let idp: TokenIdp
  let app: ListeningApp

  before(async () => {
    idp = await startTokenIdp(CLIENT_ID)
    app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } } } })
    await waitUntilReady(app.origin)
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })
  const cases: ReadonlyArray<{ path: string, kind: OutboundResponseKind, failure: string }> = [
    { path: '/jwks', kind: 'jwks', failure: 'unavailable' },
    { path: '/token', kind: 'token', failure: 'failed' },
    { path: '/userinfo', kind: 'userinfo', failure: 'failed' }
  ]
  for (const { path, kind, failure } of cases) {
    for (const body of HOSTILE_BODIES) {
      test(`${kind} answering with ${body}: the sign-in fails (${failure}), the process stays live and small`, async () => {
        idp.hostile = { [path]: body }
        const from = app.logs.lines.length
        const attempt = await whileLive(app.origin, async () => await callBackWithCode(app.origin, (nonce) => {
          idp.answer = async () => await idp.validAnswer(nonce)
        }))
        assertBounded(attempt, `${kind} ${body}`)
        assert.equal(attempt.result.response.status, 302)
        assert.equal(attempt.result.location?.pathname, '/Account/Login')
        assert.equal(attempt.result.location?.searchParams.get('failure'), failure)
        assertLogged(app, 'external.sign_in.failed', kind, from)
        // The provider itself stays usable: without the hostile answer the next sign-in succeeds
        // (for the key set only after its last case: a loaded key set is kept for 5 minutes).
        idp.hostile = {}
        if (kind === 'jwks' && body !== HOSTILE_BODIES.at(-1)) return
        const next = await callBackWithCode(app.origin, (nonce) => { idp.answer = async () => await idp.validAnswer(nonce) })
        assert.equal(next.response.status, 302)
        assert.equal(next.location?.pathname, '/')
      })
    }
  }
})
