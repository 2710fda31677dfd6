// @ts-check
/**
 * Names: what --name accepts, the name derived from a directory, and the rename of every form of
 * `ProjectTemplate` (configuration key, environment prefix in any case, package name, cookie
 * names, purpose strings) while the generator's own name stays.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { checkName, deriveName, findTemplateName, kebabName, renameText } from '../lib/naming.mjs'

describe('checkName', () => {
  for (const name of ['MyApp', 'A', 'Orders2', 'HTTPServer', 'ProjectTemplate']) {
    test(`accepts ${name}`, () => assert.equal(checkName(name), undefined))
  }
  for (const [name, reason] of [
    ['myApp', 'lower-case first letter'],
    ['My-App', 'separator'],
    ['My_App', 'underscore (would break the __ environment separator)'],
    ['My App', 'space'],
    ['9Lives', 'digit first'],
    ['Café', 'non-ASCII letter'],
    ['My.App', 'dot'],
    ['A'.repeat(51), 'too long']
  ]) {
    test(`rejects ${JSON.stringify(name.slice(0, 12))} (${reason})`, () => {
      assert.match(checkName(name) ?? '', /not valid|longer than 50/)
    })
  }
  test('rejects the empty name', () => assert.match(checkName('') ?? '', /empty/))
})

describe('deriveName and kebabName', () => {
  for (const [directory, name, kebab] of [
    ['my-app', 'MyApp', 'my-app'],
    ['orders_api', 'OrdersApi', 'orders-api'],
    ['billingService', 'BillingService', 'billing-service'],
    ['MY_APP', 'MyApp', 'my-app'],
    ['acme.portal v2', 'AcmePortalV2', 'acme-portal-v2'],
    ['app', 'App', 'app']
  ]) {
    test(`${directory} -> ${name} -> ${kebab}`, () => {
      assert.equal(deriveName(directory), name)
      assert.equal(kebabName(name), kebab)
    })
  }
  test('a directory name that cannot make a valid name is not silently mangled', () => {
    assert.notEqual(checkName(deriveName('9lives')), undefined)
    assert.notEqual(checkName(deriveName('café')), undefined)
  })
  test('acronyms and digits split into words', () => {
    assert.equal(kebabName('HTTPServer'), 'http-server')
    assert.equal(kebabName('App2Go'), 'app2-go')
  })
})

describe('renameText', () => {
  const cases = [
    ['"ProjectTemplate": {', '"OrdersApi": {'],
    ['ProjectTemplate__Authentication__Enabled=false', 'OrdersApi__Authentication__Enabled=false'],
    ['PROJECTTEMPLATE__AUTHENTICATION__ENABLED', 'ORDERSAPI__AUTHENTICATION__ENABLED'],
    ['projecttemplate__authentication__enabled', 'ordersapi__authentication__enabled'],
    ['__Host-ProjectTemplate.Web.Authentication', '__Host-OrdersApi.Web.Authentication'],
    ['.ProjectTemplate.Antiforgery', '.OrdersApi.Antiforgery'],
    ["'ProjectTemplate.Web.Authentication.SessionTicket.v1'", "'OrdersApi.Web.Authentication.SessionTicket.v1'"],
    ['"name": "project-template"', '"name": "orders-api"'],
    ['~/.config/project-template/usersecrets', '~/.config/orders-api/usersecrets'],
    ['const projectTemplate = 1', 'const ordersApi = 1'],
    ['PROJECT_TEMPLATE_HOME', 'ORDERS_API_HOME'],
    ['# Project Template', '# Orders Api'],
    ['npx create-project-template my-app', 'npx create-project-template my-app'],
    ['use a project template', 'use a project template'],
    ['APP_ERR_CONFIG_INVALID', 'APP_ERR_CONFIG_INVALID']
  ]
  for (const [input, expected] of cases) {
    test(`${input} -> ${expected}`, () => assert.equal(renameText(input, 'OrdersApi'), expected))
  }
  test('leaves no form of the template name behind', () => {
    const all = cases.map(([input]) => input).join('\n')
    assert.deepEqual(findTemplateName(all).length > 0, true)
    assert.deepEqual(findTemplateName(renameText(all, 'OrdersApi')), [])
  })
})
