/**
 * Binding: `__` separators and array indexes in environment variables, case-insensitive keys,
 * booleans in any case, exact messages for values of the wrong type, and the unknown-key warning
 * (typo protection) naming the key.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { environmentNameFrom } from '../../src/config/load.js'
import { loadConfiguration } from '../../src/configuration.js'
import { APP_ROOT } from '../helpers/app.js'

const load = (env: Record<string, string>) => loadConfiguration({ contentRoot: APP_ROOT, env: { XDG_CONFIG_HOME: '/nonexistent-test-config', ...env } })

describe('NODE_ENV -> environment name', () => {
  const table: Array<[string | undefined, string]> = [
    ['development', 'Development'],
    ['Development', 'Development'],
    ['production', 'Production'],
    ['PRODUCTION', 'Production'],
    [undefined, 'Production'],
    ['', 'Production'],
    ['staging', 'Staging'],
    ['test', 'Test']
  ]
  for (const [nodeEnv, expected] of table) {
    test(`NODE_ENV=${String(nodeEnv)} is the ${expected} environment`, () => {
      assert.equal(environmentNameFrom(nodeEnv), expected)
      const loaded = loadConfiguration({ contentRoot: APP_ROOT, env: nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv } })
      assert.equal(loaded.environmentName, expected)
    })
  }
})

describe('environment variables', () => {
  test('__ separates path segments and reaches a nested provider key', () => {
    const loaded = load({ ProjectTemplate__Authentication__Providers__OpenIdConnect__ClientId: 'client-from-env' })
    assert.equal(loaded.config.Authentication.Providers.OpenIdConnect.ClientId, 'client-from-env')
  })

  test('array elements are indexed by position, in numeric order', () => {
    const loaded = load({
      ProjectTemplate__Authorization__AdministratorRoles__0: 'Admin',
      ProjectTemplate__Authorization__AdministratorRoles__1: 'Owner',
      ProjectTemplate__Authorization__AdministratorRoles__2: 'Root',
      ProjectTemplate__Authorization__AdministratorRoles__10: 'Tenth'
    })
    // appsettings.json holds ["Administrator"] at index 0; the environment overrides element by element.
    assert.deepEqual(loaded.config.Authorization.AdministratorRoles, ['Admin', 'Owner', 'Root', 'Tenth'])
  })

  test('a scalar value where an array is expected is an error naming the array key and its environment form', () => {
    const loaded = load({ ProjectTemplate__Authorization__ManageApplicationPermissions: 'application.manage' })
    assert.deepEqual(loaded.errors.map((e) => e.message), [
      'ProjectTemplate:Authorization:ManageApplicationPermissions must be an array (in environment variables: ProjectTemplate__Authorization__ManageApplicationPermissions__0, __1, ...).'
    ])
  })

  test('a non-numeric segment under an array is an error naming the key', () => {
    const loaded = load({ ProjectTemplate__Authorization__AdministratorRoles__first: 'Admin' })
    assert.deepEqual(loaded.errors.map((e) => e.message), [
      'ProjectTemplate:Authorization:AdministratorRoles:first is not an array index; ProjectTemplate:Authorization:AdministratorRoles is an array.'
    ])
  })

  test('keys match case-insensitively, in every segment including the root', () => {
    const loaded = load({
      PROJECTTEMPLATE__AUTHENTICATION__PROVIDERS__VENDORA__CLIENTID: 'upper',
      projecttemplate__authorization__roleclaimtype: 'lower:role',
      ProjectTemplate__authentication__cookie__ExpireMinutes: '15'
    })
    assert.deepEqual(loaded.errors, [])
    assert.deepEqual(loaded.warnings, [])
    assert.equal(loaded.config.Authentication.Providers.VendorA.ClientId, 'upper')
    assert.equal(loaded.config.Authorization.RoleClaimType, 'lower:role')
    assert.equal(loaded.config.Authentication.Cookie.ExpireMinutes, 15)
  })

  test('a later source wins even when it spells the key in another case', () => {
    const loaded = load({ projecttemplate__authentication__providers__saml2__displayname: 'Corporate SSO' })
    assert.equal(loaded.config.Authentication.Providers.Saml2.DisplayName, 'Corporate SSO')
  })

  test('variables outside the root key are ignored', () => {
    const loaded = load({ Other__Authentication__Enabled: 'nonsense', PATH: '/usr/bin' })
    assert.deepEqual(loaded.errors, [])
    assert.deepEqual(loaded.warnings, [])
  })
})

describe('booleans', () => {
  for (const [text, expected] of [['true', true], ['TRUE', true], ['True', true], ['tRuE', true], ['false', false], ['FALSE', false], ['False', false], [' false ', false]] as const) {
    test(`"${text}" binds as ${String(expected)}`, () => {
      const loaded = load({ ProjectTemplate__Authentication__Cookie__SlidingExpiration: text })
      assert.deepEqual(loaded.errors, [])
      assert.equal(loaded.config.Authentication.Cookie.SlidingExpiration, expected)
    })
  }

  for (const text of ['yes', '1', '0', 'on', 'truee', '']) {
    test(`"${text}" is rejected with a message naming the key`, () => {
      const loaded = load({ ProjectTemplate__Authentication__Cookie__SlidingExpiration: text })
      assert.deepEqual(loaded.errors.map((e) => e.message), ['ProjectTemplate:Authentication:Cookie:SlidingExpiration must be true or false.'])
    })
  }
})

describe('integers', () => {
  for (const text of ['abc', '1.5', '0', '43201', '-5', '1e3', '']) {
    test(`ExpireMinutes "${text}" is rejected with the allowed range`, () => {
      const loaded = load({ ProjectTemplate__Authentication__Cookie__ExpireMinutes: text })
      assert.deepEqual(loaded.errors.map((e) => e.message), ['ProjectTemplate:Authentication:Cookie:ExpireMinutes must be an integer from 1 to 43200.'])
    })
  }

  test('an integer with surrounding whitespace binds', () => {
    assert.equal(load({ ProjectTemplate__Authentication__Cookie__ExpireMinutes: ' 90 ' }).config.Authentication.Cookie.ExpireMinutes, 90)
  })

  test('a value outside an enumeration is rejected listing the allowed values', () => {
    const loaded = load({ ProjectTemplate__Logging__Level: 'verbose' })
    assert.deepEqual(loaded.errors.map((e) => e.message), ['ProjectTemplate:Logging:Level must be one of: fatal, error, warn, info, debug, trace, silent.'])
  })
})

describe('unknown keys', () => {
  // The variable, the key it names and the known key of its section it is suggested for (a slip of a letter or two), if any.
  const table: Array<[string, string, string | undefined]> = [
    ['ProjectTemplate__Authentication__Enabeld', 'ProjectTemplate:Authentication:Enabeld', 'ProjectTemplate:Authentication:Enabled'],
    ['ProjectTemplate__Authentication__Providers__OpenIdConnect__ClientSecert', 'ProjectTemplate:Authentication:Providers:OpenIdConnect:ClientSecert', 'ProjectTemplate:Authentication:Providers:OpenIdConnect:ClientSecret'],
    ['ProjectTemplate__Authentication__Providers__Okta__Enabled', 'ProjectTemplate:Authentication:Providers:Okta:Enabled', undefined],
    ['ProjectTemplate__Authorization__RequireAuthenticatedUser', 'ProjectTemplate:Authorization:RequireAuthenticatedUser', undefined],
    ['ProjectTemplate__Authorization__AdminRoles__0', 'ProjectTemplate:Authorization:AdminRoles:0', undefined]
  ]
  for (const [variable, key, suggestion] of table) {
    test(`${key} produces a warning naming the key${suggestion === undefined ? '' : ' and the key it was probably meant to be'}, and is not an error`, () => {
      const loaded = load({ [variable]: 'PLANTED-UNKNOWN-VALUE' })
      assert.deepEqual(loaded.errors, [])
      const hint = suggestion === undefined ? '' : ` Did you mean ${suggestion}?`
      assert.deepEqual(loaded.warnings, [{ key, event: 'configuration.unknown_key', message: `${key} is not a known configuration key and is ignored; check its spelling against docs/configuration.md.${hint}` }])
      assert.ok(!JSON.stringify(loaded.warnings).includes('PLANTED-UNKNOWN-VALUE'))
    })
  }

  test('a misspelt key of a named scheme gets the nearest key of that scheme\'s type: Audience -> Audiences of a JwtBearer scheme (issue 40, item 12)', () => {
    const loaded = load({
      ProjectTemplate__Authentication__Schemes__Api__Type: 'JwtBearer',
      ProjectTemplate__Authentication__Schemes__Api__Authority: 'https://login.example.test',
      ProjectTemplate__Authentication__Schemes__Api__Audience: 'orders-api',
      ProjectTemplate__Authentication__Schemes__Api__Autority: 'https://login.example.test'
    })
    assert.deepEqual(loaded.warnings.map((warning) => warning.message.slice(warning.message.indexOf(' Did you mean'))), [
      ' Did you mean ProjectTemplate:Authentication:Schemes:Api:Audiences?',
      ' Did you mean ProjectTemplate:Authentication:Schemes:Api:Authority?'
    ])
  })

  test('the shipped appsettings files produce no warning', () => {
    assert.deepEqual(load({}).warnings, [])
    assert.deepEqual(load({ NODE_ENV: 'development' }).warnings, [])
  })
})
