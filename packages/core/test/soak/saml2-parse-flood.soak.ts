/**
 * Issue 26, item 1, under load (npm run test:security): clients flood POST /Saml2/Logout with the
 * 64 KB LogoutRequest of 16,000 empty siblings, and the ACS (after correlation, which anyone gets
 * by starting a challenge) with signed responses padded to the edge of RESPONSE_SHAPE, while a
 * user loads the login page. Before the shape bounds one such client held /Account/Login at a
 * median of 5.8 s; now the page must stay fast. Bounded: autocannon runs of at most 3,000 requests
 * and 15 s each, and 150 page loads.
 */
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { buildSaml2App, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { RESPONSE_SHAPE } from '../../src/saml2/message-shape.js'

interface FloodResult { requests: { total: number }, errors: number, timeouts: number, '3xx': number }
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<FloodResult>

const PER_RUN = 3_000
const SECONDS = 15
const PAGE_LOADS = 150

const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

test('a flood of oversized SAML messages does not slow an unrelated page', { timeout: 120_000 }, async () => {
  const idp = new TestIdentityProvider()
  await idp.start()
  const spKey = createSigningKey('sp-signing')
  // Every flooded message must reach the parser: without rate limits (they would answer 429 early).
  const subject = await buildSaml2App(idp, { SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true }, { rateLimits: false })
  try {
    await waitForSaml2(subject.app)
    await subject.app.listen({ host: '127.0.0.1', port: 0 })
    const origin = `http://127.0.0.1:${(subject.app.server.address() as AddressInfo).port}`

    const logoutFlood = new URLSearchParams({
      SAMLRequest: Buffer.from(`<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_1">${'<a/>'.repeat(16_000)}</samlp:LogoutRequest>`, 'utf8').toString('base64')
    }).toString()
    // The widest response the ACS still hands to node-saml, signed by a key the app does not trust:
    // refused by the signature check, so the flow stays open and every post is fully checked.
    const flow = await startSaml2SignIn(subject.app)
    const padding = `<b>${'<a/>'.repeat(RESPONSE_SHAPE.maxChildren - 1)}</b>`
    const acsFlood = new URLSearchParams({
      SAMLResponse: idp.buildResponse({
        acsUrl: `${origin}/Saml2/Acs`,
        audience: SP_ENTITY_ID,
        inResponseTo: flow.request.id,
        user: { nameId: 'mallory@example.test', attributes: {} },
        signingKey: createSigningKey('not-the-idp'),
        afterSigning: (xml) => xml.replace('</samlp:Response>', `${padding}</samlp:Response>`)
      }),
      RelayState: flow.relayState
    }).toString()
    const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } }
    const floods = Promise.all([
      // maxOverallRequests with duration: whichever comes first (autocannon ignores duration when `amount` is set).
      autocannon({ url: `${origin}/Saml2/Logout`, connections: 1, maxOverallRequests: PER_RUN, duration: SECONDS, body: logoutFlood, ...form }),
      autocannon({ url: `${origin}/Saml2/Acs`, connections: 1, maxOverallRequests: PER_RUN, duration: SECONDS, body: acsFlood, ...form, headers: { ...form.headers, cookie: flow.cookie } })
    ])

    await new Promise((resolve) => setTimeout(resolve, 500))
    const latencies: number[] = []
    for (let index = 0; index < PAGE_LOADS; index++) {
      const started = performance.now()
      const page = await fetch(`${origin}/Account/Login`)
      await page.arrayBuffer()
      latencies.push(performance.now() - started)
      assert.equal(page.status, 200)
    }
    const results = await floods
    latencies.sort((a, b) => a - b)
    const summary = { requests: results.map((result) => result.requests.total), p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), max: quantile(latencies, 1) }
    process.stdout.write(`# saml2 parse flood summary ${JSON.stringify(summary)}\n`)
    for (const result of results) {
      assert.equal(result.errors + result.timeouts, 0)
      assert.equal(result['3xx'], result.requests.total, 'every flooded message refused with a redirect')
    }
    // Normally 1-6 ms; with the stall a median of 5.8 s and a maximum of 34 s.
    assert.ok(summary.p50 < 100, `login page median ${summary.p50.toFixed(1)} ms under the flood`)
    assert.ok(summary.p95 < 250, `login page p95 ${summary.p95.toFixed(1)} ms under the flood`)
  } finally {
    await subject.app.close()
    await idp.stop()
  }
})
