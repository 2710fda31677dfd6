/**
 * /External/Challenge rejects a missing or unknown provider, the Cookies scheme and a non-local
 * returnUrl with a 400 safe page: no redirect, no challenge, no correlation cookie.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildForSuite, buildTestApp, type TestApp } from '../helpers/app.js'

describe('/External/Challenge without providers', () => {
  const t = buildForSuite()

  const rejected: Array<[string, string, string]> = [
    ['a missing provider', '/External/Challenge', 'Unknown sign-in provider'],
    ['an empty provider', '/External/Challenge?provider=', 'Unknown sign-in provider'],
    ['an unknown provider', '/External/Challenge?provider=Evil', 'Unknown sign-in provider'],
    ['a disabled provider slot', '/External/Challenge?provider=OpenIdConnect&returnUrl=%2F', 'Unknown sign-in provider'],
    ['the Cookies scheme', '/External/Challenge?provider=Cookies&returnUrl=%2F', 'Unknown sign-in provider'],
    ['a repeated provider', '/External/Challenge?provider=Cookies&provider=Evil', 'Unknown sign-in provider'],
    ['a prototype key as provider', '/External/Challenge?provider=__proto__', 'Unknown sign-in provider']
  ]
  for (const [name, url, title] of rejected) {
    test(`${name} is 400 with a safe page, no redirect and no cookie`, async () => {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, 400)
      assert.equal(response.headers.location, undefined)
      assert.equal(response.headers['set-cookie'], undefined)
      assert.ok(response.body.includes(`<h1>400 ${title}</h1>`), response.body)
      assert.ok(!response.body.includes('Evil'))
    })
  }

  test('a JSON caller gets 400 problem+json with the code', async () => {
    const response = await t.app.inject({ url: '/External/Challenge?provider=Evil', headers: { accept: 'application/json' } })
    assert.equal(response.statusCode, 400)
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.equal((response.json() as Record<string, unknown>).code, 'APP_ERR_PROVIDER_UNKNOWN')
  })

  test('the rejection is logged with its reason class, not the value', async () => {
    await t.app.inject({ url: '/External/Challenge?provider=PLANTED-PROVIDER-3e1' })
    const events = t.logs.events('challenge.rejected')
    assert.ok(events.some((event) => event.reason === 'unknown_provider'))
    assert.ok(!t.logs.text().includes('PLANTED-PROVIDER-3e1'))
  })
})

describe('/External/Challenge with a registered provider', () => {
  let t: TestApp
  let challenged: string[]
  before(async () => {
    challenged = []
    t = await buildTestApp({
      configure: (app) => {
        app.authentication.registerProvider({
          scheme: 'Probe',
          displayName: 'Probe IdP',
          paths: [],
          status: () => ({ available: true }),
          challenge: (_request, reply, returnUrl) => { challenged.push(returnUrl); return reply.redirect('https://idp.example.test/authorize', 302) }
        })
      }
    })
  })
  after(async () => { await t.app.close() })

  const hostile = ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)', '/%2F%2Fevil.example', ' /x']
  for (const value of hostile) {
    test(`returnUrl ${JSON.stringify(value)} is 400 and starts no challenge`, async () => {
      const before = challenged.length
      const response = await t.app.inject({ url: `/External/Challenge?provider=Probe&returnUrl=${encodeURIComponent(value)}`, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, 400)
      assert.equal(response.headers.location, undefined)
      assert.match(response.body, /<h1>400 Return URL is not local<\/h1>/)
      assert.equal(challenged.length, before)
    })
  }

  test('a known provider with a local returnUrl starts the challenge with that URL', async () => {
    const response = await t.app.inject({ url: '/External/Challenge?provider=Probe&returnUrl=%2Forders%3Fid%3D1' })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, 'https://idp.example.test/authorize')
    assert.equal(challenged.at(-1), '/orders?id=1')
  })

  test('without a returnUrl the challenge returns to /', async () => {
    await t.app.inject({ url: '/External/Challenge?provider=Probe' })
    assert.equal(challenged.at(-1), '/')
  })

  test('the login page lists the provider with a challenge link carrying the return URL', async () => {
    const response = await t.app.inject({ url: '/Account/Login?ReturnUrl=%2Forders' })
    assert.ok(response.body.includes('<a class="provider" data-provider="Probe" href="/External/Challenge?provider=Probe&amp;returnUrl=%2Forders">Probe IdP</a>'), response.body)
    assert.ok(!response.body.includes('No sign-in provider is configured'))
  })
})

describe('/External/Challenge?email= for a domain no provider serves', () => {
  const t = buildForSuite({
    configure: (app) => {
      app.authentication.registerProvider({
        scheme: 'Staff',
        displayName: 'Staff account',
        domains: ['example.test'],
        paths: [],
        status: () => ({ available: true }),
        challenge: (_request, reply) => reply.redirect('https://idp.invalid/authorize', 302)
      })
    }
  })

  test('the login page keeps the address in the e-mail field, escaped, and is not stored by a cache', async () => {
    const address = "o'brien&co@unknown.test"
    const response = await t.app.inject({ url: `/External/Challenge?email=${encodeURIComponent(address)}&returnUrl=%2Forders`, headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['cache-control'], 'no-store')
    assert.ok(response.body.includes('<input id="email" type="email" name="email" autocomplete="email" required maxlength="254" value="o&#39;brien&amp;co@unknown.test">'), response.body)
    assert.ok(response.body.includes('<input type="hidden" name="returnUrl" value="/orders">'))
    assert.match(response.body, /<p class="alert" role="alert">No sign-in is set up for that e-mail address\./)
  })

  test('the login page itself shows an empty field, and the typed address is not served to the next visitor', async () => {
    await t.app.inject({ url: '/External/Challenge?email=ada%40unknown.test', headers: { accept: 'text/html' } })
    const login = await t.app.inject({ url: '/Account/Login' })
    assert.match(login.body, /<input id="email" type="email" name="email" autocomplete="email" required maxlength="254">/)
    assert.ok(!login.body.includes('ada@unknown.test'))
    assert.equal(login.headers['cache-control'], undefined)
  })
})
