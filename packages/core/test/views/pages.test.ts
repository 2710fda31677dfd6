/**
 * The login page is remembered per model: a page for one model is never served for another
 * (providers, availability, return URL, failure message), and an app's own layout is rendered on
 * every request.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createPages, type LoginPageModel } from '../../src/views/pages.js'

const provider = (available: boolean) => ({ scheme: 'OpenIdConnect', displayName: 'Company account', available })

describe('login page', () => {
  test('each model gets its own page, and the same model the same page', () => {
    const pages = createPages()
    const models: ReadonlyArray<[LoginPageModel, RegExp]> = [
      [{ providers: [] }, /id="no-provider"/],
      [{ providers: [provider(true)] }, /href="\/External\/Challenge\?provider=OpenIdConnect">Company account<\/a>/],
      [{ providers: [provider(false)] }, /Company account \(unavailable\)/],
      [{ providers: [provider(true)], returnUrl: '/orders' }, /provider=OpenIdConnect&amp;returnUrl=%2Forders"/],
      [{ providers: [provider(true)], returnUrl: '' }, /provider=OpenIdConnect&amp;returnUrl="/],
      [{ providers: [provider(true)], failureMessage: 'Sign-in was cancelled.' }, /role="alert">Sign-in was cancelled.<\/p>/]
    ]
    const first = models.map(([model]) => pages.loginPage(model))
    assert.equal(new Set(first).size, models.length, 'six models, six different pages')
    models.forEach(([model, expected], index) => {
      assert.match(first[index] ?? '', expected)
      assert.equal(pages.loginPage(model), first[index])
    })
  })

  test('a long return URL is rendered too, not remembered wrongly', () => {
    const pages = createPages()
    const long = `/${'a'.repeat(2000)}`
    assert.match(pages.loginPage({ providers: [provider(true)], returnUrl: long }), new RegExp(`returnUrl=%2F${'a'.repeat(2000)}"`))
    assert.doesNotMatch(pages.loginPage({ providers: [provider(true)], returnUrl: `${long}b` }), new RegExp(`returnUrl=%2F${'a'.repeat(2000)}"`))
  })

  test('more models than the cache holds still each get their own page', () => {
    const pages = createPages()
    for (let round = 0; round < 2; round++) {
      for (let index = 0; index < 150; index++) assert.match(pages.loginPage({ providers: [provider(true)], returnUrl: `/page-${index}` }), new RegExp(`returnUrl=%2Fpage-${index}"`))
    }
  })

  test('an app layout is rendered on every request', () => {
    let renders = 0
    const pages = createPages({ layout: (options, body) => `<title>${options.title}</title>${++renders}${body.value}` })
    pages.loginPage({ providers: [] })
    pages.loginPage({ providers: [] })
    assert.equal(renders, 2)
  })
})
