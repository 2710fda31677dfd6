/**
 * One root for the names (src/application-name.ts): the configuration root key, the cookie names
 * the contract fixes and the key-ring purposes all derive from APPLICATION_NAME, and no two uses
 * share a purpose.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { APPLICATION_NAME, COOKIE_NAMES, cookieName, PURPOSES } from '../src/application-name.js'
import { environmentOf } from '../src/config/environment.js'
import { ROOT_KEY } from '../src/config/schema.js'
import { sessionCookieSettings } from '../src/plugins/session.js'
import { APPLICATION_TITLE } from '../src/views/pages.js'
import { loadTestConfiguration } from './helpers/app.js'

describe('names derived from the application name', () => {
  test('the configuration root, the title and the contract cookie names', () => {
    assert.equal(ROOT_KEY, APPLICATION_NAME)
    assert.equal(APPLICATION_TITLE, APPLICATION_NAME)
    assert.equal(cookieName(COOKIE_NAMES.session, true), `__Host-${APPLICATION_NAME}.Web.Authentication`)
    assert.equal(cookieName(COOKIE_NAMES.session, false), `.${APPLICATION_NAME}.Web.Authentication`)
    assert.equal(cookieName(COOKIE_NAMES.antiforgery, true), `__Host-${APPLICATION_NAME}.Antiforgery`)
    assert.equal(cookieName(COOKIE_NAMES.correlation, true), `__Host-${APPLICATION_NAME}.Correlation.`)
  })

  test('every purpose is distinct, versioned and carries the name', () => {
    const purposes = Object.values(PURPOSES)
    assert.equal(new Set(purposes).size, purposes.length)
    for (const purpose of purposes) assert.match(purpose, new RegExp(`^${APPLICATION_NAME}\\.[A-Za-z.]+\\.v\\d+$`))
  })
})

describe('environment facts', () => {
  test('the insecure-cookie override counts only in Development', () => {
    const settings = { Authentication: { Cookie: { AllowInsecureHttp: true } } }
    const development = environmentOf(loadTestConfiguration({ settings, nodeEnv: 'development' }).config, 'Development')
    assert.deepEqual({ ...development }, { name: 'Development', development: true, insecureCookies: true })
    assert.equal(sessionCookieSettings(development.insecureCookies, APPLICATION_NAME).name, `.${APPLICATION_NAME}.Web.Authentication`)
    const production = environmentOf(loadTestConfiguration().config, 'Production')
    assert.deepEqual({ ...production }, { name: 'Production', development: false, insecureCookies: false })
    assert.equal(sessionCookieSettings(production.insecureCookies, APPLICATION_NAME).name, `__Host-${APPLICATION_NAME}.Web.Authentication`)
  })
})
