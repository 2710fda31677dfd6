/**
 * The ApiKey scheme type's settings (issue 42, item 1): bound through the configuration binder
 * with its schema as `Authentication:Schemes:<Name>` is, its instance made by its registration
 * (the prefix derived from the application name), and its rules: each problem names the key,
 * never the value. The type has the provider-type shape (a `ProviderType` the compiler checks);
 * it is listed in providers/provider-types.ts (test/api-keys/scheme-type.test.ts: configuration accepts it).
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { apiKeyType } from '../../src/api-keys/provider-type.js'
import { apiKeyPrefixProblems, apiKeySettingsRule } from '../../src/api-keys/settings-rules.js'
import { ApiKeySchemeSchema, defaultApiKeyPrefix, type ApiKeyInstance, type ApiKeySchemeConfiguration } from '../../src/api-keys/settings-schema.js'
import { bindConfiguration } from '../../src/config/bind.js'
import { flattenJson } from '../../src/config/sources.js'
import { PROVIDER_TYPES } from '../../src/providers/provider-types.js'

const SCOPES = { 'orders.read': 'Read your orders', 'orders.write': 'Create and change orders' }

function instanceOf (section: Record<string, unknown>, name = 'Keys', root = 'ProjectTemplate'): { instance: ApiKeyInstance, errors: string[] } {
  const key = `${root}:Authentication:Schemes:${name}`
  const flat = flattenJson({ [root]: { Authentication: { Schemes: { [name]: { Type: 'ApiKey', ...section } } } } }, 'test').entries
  const bound = bindConfiguration<ApiKeySchemeConfiguration>(flat, ApiKeySchemeSchema, key)
  const instance = apiKeyType.namedScheme?.instance(name, bound.value, { scheme: name, keyPrefix: key, contract: false })
  assert.ok(instance !== undefined)
  return { instance, errors: bound.errors.map((problem) => problem.message) }
}

const problemsOf = (section: Record<string, unknown>): string[] => apiKeySettingsRule(instanceOf(section).instance, 'Production').map((problem) => problem.message)

describe('ApiKey scheme settings', () => {
  test('a scheme with scopes binds with its defaults: 90 days, at most 365, 25 keys per owner, users only, Authorization: Bearer only, creation within 300 s of a sign-in', () => {
    const { instance, errors } = instanceOf({ Scopes: SCOPES })
    assert.deepEqual(errors, [])
    assert.deepEqual(instance, {
      scheme: 'Keys',
      keyPrefix: 'ProjectTemplate:Authentication:Schemes:Keys',
      contract: false,
      protocol: 'ApiKey',
      settings: {
        Enabled: true,
        Scheme: 'Keys',
        DisplayName: 'Keys',
        Prefix: 'projecttemplate_',
        Scopes: SCOPES,
        DefaultLifetimeDays: 90,
        MaxLifetimeDays: 365,
        MaxKeysPerOwner: 25,
        Owners: ['User'],
        TenantAdministratorPolicy: '',
        AllowXApiKeyHeader: false,
        CreationMaxAgeSeconds: 300
      }
    })
    assert.deepEqual(apiKeySettingsRule(instance, 'Production'), [])
  })

  test('the default prefix comes from the application name', () => {
    assert.equal(instanceOf({ Scopes: SCOPES }, 'Keys', 'AcmePortal').instance.settings.Prefix, 'acmeportal_')
    assert.equal(defaultApiKeyPrefix('ProjectTemplate'), 'projecttemplate_')
    assert.equal(defaultApiKeyPrefix('A1234567890123456789012345'), 'a1234567890123456789012_')
    assert.equal(instanceOf({ Scopes: SCOPES, Prefix: 'acme_' }).instance.settings.Prefix, 'acme_')
  })

  test('a value outside its range is refused by the schema, naming the key', () => {
    for (const [key, value] of [['MaxLifetimeDays', 0], ['MaxLifetimeDays', 3651], ['MaxKeysPerOwner', 0], ['CreationMaxAgeSeconds', 3601], ['DefaultLifetimeDays', -1]] as const) {
      const { errors } = instanceOf({ Scopes: SCOPES, [key]: value })
      assert.equal(errors.length, 1, key)
      assert.match(errors[0] ?? '', new RegExp(`^ProjectTemplate:Authentication:Schemes:Keys:${key}\\b`), key)
    }
  })

  const refused: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ['no scope offered', {}, 'ProjectTemplate:Authentication:Schemes:Keys:Scopes is required: name at least one scope a key may grant, with its description ({ "orders.read": "Read your orders" }).'],
    ['a scope name with a space', { Scopes: { 'orders read': 'x' } }, 'ProjectTemplate:Authentication:Schemes:Keys:Scopes: scope 1 must be 1-64 letters, digits and . _ : / -.'],
    ['a scope without a description', { Scopes: { 'orders.read': ' ' } }, 'ProjectTemplate:Authentication:Schemes:Keys:Scopes:orders.read needs a description of 1-200 characters (the key page shows it).'],
    ['a prefix with capitals', { Scopes: SCOPES, Prefix: 'Acme_' }, 'ProjectTemplate:Authentication:Schemes:Keys:Prefix must be a lower-case letter, then lower-case letters and digits, ending in an underscore, 3-24 characters in all (for example acme_).'],
    ['a prefix without the underscore', { Scopes: SCOPES, Prefix: 'acme' }, 'ProjectTemplate:Authentication:Schemes:Keys:Prefix must be a lower-case letter, then lower-case letters and digits, ending in an underscore, 3-24 characters in all (for example acme_).'],
    ['a default lifetime over the maximum', { Scopes: SCOPES, MaxLifetimeDays: 30 }, 'ProjectTemplate:Authentication:Schemes:Keys:DefaultLifetimeDays must be at most ProjectTemplate:Authentication:Schemes:Keys:MaxLifetimeDays.'],
    ['an owner twice', { Scopes: SCOPES, Owners: ['User', 'User'] }, 'ProjectTemplate:Authentication:Schemes:Keys:Owners must list User and/or Tenant, each once.'],
    ['an unknown owner', { Scopes: SCOPES, Owners: ['Organisation'] }, 'ProjectTemplate:Authentication:Schemes:Keys:Owners must list User and/or Tenant, each once.'],
    ['tenant keys without the administrator policy', { Scopes: SCOPES, Owners: ['User', 'Tenant'] }, 'ProjectTemplate:Authentication:Schemes:Keys:TenantAdministratorPolicy is required when ProjectTemplate:Authentication:Schemes:Keys:Owners includes Tenant: name the policy a tenant\'s administrators meet.']
  ]
  for (const [name, section, message] of refused) {
    test(`refused: ${name}`, () => {
      assert.deepEqual(problemsOf(section), [message])
    })
  }

  test('an empty owner list (an empty JSON array keeps the default, so only a provider source could send it) is refused', () => {
    const { instance } = instanceOf({ Scopes: SCOPES })
    assert.deepEqual(apiKeySettingsRule({ ...instance, settings: { ...instance.settings, Owners: [] } }, 'Production').map((problem) => problem.key), ['ProjectTemplate:Authentication:Schemes:Keys:Owners'])
  })

  test('prefixes across schemes: equal or one starting another is refused, as is overlap with a bearer TokenPrefix', () => {
    const a = instanceOf({ Scopes: SCOPES, Prefix: 'acme_' }, 'A').instance
    const b = instanceOf({ Scopes: SCOPES, Prefix: 'acme_' }, 'B').instance
    const c = instanceOf({ Scopes: SCOPES, Prefix: 'ops_' }, 'C').instance
    assert.deepEqual(apiKeyPrefixProblems([a, c]), [])
    assert.deepEqual(apiKeyPrefixProblems([a, b, c]).map((problem) => problem.key), ['ProjectTemplate:Authentication:Schemes:A:Prefix'])
    assert.deepEqual(apiKeyPrefixProblems([c], [{ key: 'ProjectTemplate:Authentication:Schemes:Api:Introspection:TokenPrefix', prefix: 'op' }]).map((problem) => problem.message),
      ['ProjectTemplate:Authentication:Schemes:C:Prefix and ProjectTemplate:Authentication:Schemes:Api:Introspection:TokenPrefix overlap (one equals or starts the other).'])
  })

  test('a listed provider type that signs no one in and serves no path of its own', () => {
    assert.ok(Object.keys(PROVIDER_TYPES).includes('ApiKey'))
    assert.equal(apiKeyType.signsIn, false)
    assert.deepEqual(apiKeyType.endpointPaths(instanceOf({ Scopes: SCOPES }).instance), [])
  })
})
